#!/usr/bin/env python3
"""Verify real PolyBench/C 4.2.1 with polylab: every kernel polylab accepts, under `original`, `optimize(1)` and
`optimize(2)`, at the MINI and SMALL datasets (issue 28's "Done means").

A campaign script like ``tests/differential.py`` (not collected by pytest): it needs PolyBench/C 4.2.1's sources,
which the repository does not ship (``--polybench DIR`` or ``$POLYBENCH``: the folder that holds utilities/,
datamining/, linear-algebra/, medley/ and stencils/)::

    python tests/polybench_verify.py --polybench DIR [--out polybench-verify] [--only adi,gemm] \
        [--sizes MINI,SMALL] [--schedules "original;optimize(1);optimize(2)"]

Each kernel file is read by `polylab analyze` with -I utilities -I <its folder> -D<SIZE>_DATASET; its
parameters (PolyBench's kernel arguments n, m, tsteps, ...) take the values of the dataset's macros of the
same name in capitals (N, M, TSTEPS, ...), read from `gcc -E -dM`. Then `polylab run FILE --schedule SPEC
--param ... --json` (which verifies at those values and at the smallest ones where every loop runs twice,
every written element bit for bit, before timing once) is run in a process of its own. Writes
results.json and table.md to --out, and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

CATEGORIES = ("datamining", "linear-algebra", "medley", "stencils")


def kernels(root: Path) -> list[Path]:
    """The kernel files (medley/nussinov's Nussinov.orig.c, the code before PolyBench's harness, left out)."""
    return sorted(p for c in CATEGORIES for p in (root / c).rglob("*.c") if "." not in p.stem)


def macros(path: Path, root: Path, size: str) -> dict[str, int]:
    out = subprocess.run(["gcc", "-E", "-dM", f"-D{size}_DATASET", "-I", str(root / "utilities"), "-I",
                          str(path.parent), str(path)], capture_output=True, text=True)
    values = {}
    for m in re.finditer(r"^#define (\w+) \(?(-?\d+)\)?\s*$", out.stdout, re.MULTILINE):
        values[m.group(1)] = int(m.group(2))
    return values


def polylab(args: list[str], timeout: float) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "polylab", *args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"no answer within {timeout:.0f} s", time.monotonic() - t0
    return done.returncode, done.stdout, done.stderr, time.monotonic() - t0


def one(path: Path, root: Path, size: str, schedules: list[str], timeout: float) -> list[dict]:
    src = ["-I", str(root / "utilities"), "-I", str(path.parent), f"-D{size}_DATASET"]
    rc, out, err, _ = polylab(["analyze", str(path), "--json", *src], timeout)
    name = path.stem
    if rc != 0:
        return [{"kernel": name, "size": size, "schedule": s, "status": "not accepted",
                 "reason": (err.strip().splitlines() or ["?"])[0]} for s in schedules]
    scops = json.loads(out)["scops"]
    if len(scops) != 1:
        return [{"kernel": name, "size": size, "schedule": s, "status": "not accepted",
                 "reason": f"{len(scops)} static control parts"} for s in schedules]
    defs = macros(path, root, size)
    params = {p: defs.get(p.upper()) for p in scops[0]["parameters"]}
    if None in params.values():
        missing = [p for p, v in params.items() if v is None]
        return [{"kernel": name, "size": size, "schedule": s, "status": "no parameter values",
                 "reason": f"no macro for {missing}"} for s in schedules]
    rows = []
    for spec in schedules:
        argv = ["run", str(path), *src, "--schedule", spec, "--repeat", "1", "--warmup", "0", "--no-baseline",
                "--json", "--timeout", "600", *(a for p, v in params.items() for a in ("--param", f"{p}={v}"))]
        rc, out, err, seconds = polylab(argv, timeout)
        row = {"kernel": name, "size": size, "schedule": spec, "params": params, "seconds": round(seconds, 1)}
        try:
            data = json.loads(out)
        except json.JSONDecodeError:
            data = None
        if data is None:
            row.update(status="error", reason=(err.strip().splitlines() or [f"exit {rc}"])[-1][:300])
        else:
            v = data.get("verified")
            row.update(status="verified" if v else "DIFFERS" if v is False else "not verified",
                       reason=data.get("reason") or data.get("first_difference"),
                       sizes=data.get("verified_sizes"), compared=(data.get("compared") or {}).get("elements"))
        rows.append(row)
        print(f"{name:16} {size:5} {spec:12} {row['status']:12} {row['seconds']:7.1f} s  {row.get('reason') or ''}",
              flush=True)
    return rows


def table(rows: list[dict], schedules: list[str], sizes: list[str]) -> str:
    head = ["kernel"] + [f"{s} {sz}" for sz in sizes for s in schedules]
    by = {(r["kernel"], r["size"], r["schedule"]): r for r in rows}
    names = sorted({r["kernel"] for r in rows})
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in names:
        cells = []
        for sz in sizes:
            for s in schedules:
                r = by.get((n, sz, s))
                cells.append("" if r is None else r["status"] + (f" ({r['seconds']} s)" if "seconds" in r else ""))
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH"), required="POLYBENCH" not in os.environ,
                    help="PolyBench/C 4.2.1's folder (default: $POLYBENCH)")
    ap.add_argument("--out", default="polybench-verify")
    ap.add_argument("--only", default="")
    ap.add_argument("--sizes", default="MINI,SMALL")
    ap.add_argument("--schedules", default="original;optimize(1);optimize(2)")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args()
    root = Path(args.polybench)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    schedules = args.schedules.split(";")
    sizes = args.sizes.split(",")
    only = set(filter(None, args.only.split(",")))
    rows: list[dict] = []
    for path in kernels(root):
        if only and path.stem not in only:
            continue
        for size in sizes:
            rows += one(path, root, size, schedules, args.timeout)
            (out / "results.json").write_text(json.dumps(rows, indent=1))
    text = table(rows, schedules, sizes)
    (out / "table.md").write_text(text + "\n")
    print(text)
    bad = [r for r in rows if r["status"] not in ("verified", "not accepted")]
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("POLYLAB_MAX_SECONDS", "600")
    sys.exit(main())
