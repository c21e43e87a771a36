"""``polylab demo [--n N] [--threads T] [--quick]``: the sl3 story end to end, in the terminal.

Parse ``sl3.sy``; show the dependences and their distances; find the wavefront theta = i + j + k; verify
and time the point wavefront (slower than the original on a few cores); fold the three reads of the
initial value, remove the dead initialisation writes, interleave, contract x to two planes (with the proof)
and see one plane refused (with the reason); then the tile-level wavefront (the contraction recomputed for
it) and skewed strips; every variant verified against the original program and timed against it compiled
with gcc -O3; a summary table at the end. ``--quick`` uses a tiny size and one run (a smoke test).

Exit status: 0 when every variant was verified, 1 otherwise, 2 for a user error.
"""

from __future__ import annotations

import argparse
import sys

from polylab.errors import PolylabError


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("demo", help="the sl3 story: dependences, wavefront, folding, contraction, tiling",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=None, help="problem size n of the timed runs (default 384; --quick: 24)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads of the parallel variants (default 2)")
    p.add_argument("--tile", type=int, default=None, help="tile size of the tile-level wavefront (default 16)")
    p.add_argument("--verify-n", type=int, default=None, help="size of the verification runs (default min(n, 64))")
    p.add_argument("--repeat", type=int, default=None, help="timed runs per variant (default 3; --quick: 1)")
    p.add_argument("--wait-policy", choices=("passive", "active"), default=None,
                   help="OMP_WAIT_POLICY of the OpenMP runs (default: the environment's, else passive)")
    p.add_argument("--quick", action="store_true", help="tiny size, one run: runs in seconds")
    return p


def run(args: argparse.Namespace) -> int:
    from polylab.bench.demo import sl3_tour
    from polylab.cli.bench import set_wait_policy

    n = args.n if args.n is not None else (24 if args.quick else 384)
    if n < 4 or n > 400:
        raise PolylabError(f"--n {n} is out of range", hint="sl3.sy declares x[400][400][400]: give 4 <= n <= 400")
    if args.threads < 1:
        raise PolylabError("--threads must be at least 1")
    if args.tile is not None and args.tile < 1:
        raise PolylabError("--tile must be at least 1")
    if args.repeat is not None and args.repeat < 1:
        raise PolylabError("--repeat must be at least 1")

    set_wait_policy(args.wait_policy)

    def progress(message: str) -> None:
        print(f"  ... {message}", file=sys.stderr, flush=True)

    last = None
    for section in sl3_tour(n=n, threads=args.threads, quick=args.quick, tile=args.tile, verify_n=args.verify_n,
                            repeat=args.repeat, progress=progress):
        print(section, flush=True)
        print(flush=True)
        last = section
    report = last.facts.get("report") if last is not None else None
    if report is None:
        return 1
    return 0 if all(r.status == "verified" for r in report.results) else 1
