"""What a benchmark measures: kernels x variants x thread counts x tile sizes, as a list of cases.

A :class:`Case` is one measurement to make. :func:`plan` expands a sweep (kernels, variant specs,
thread counts, tile sizes, parameter values) into cases, in the order they will run: kernel by kernel, so
the baseline of a kernel (its original program compiled with ``gcc -O3``) is timed once and shared.

Parameter values: ``params`` applies to every kernel that has the parameter (others ignore it); a kernel
parameter with no value takes its default from :data:`DEFAULT_PARAMS` (sizes that run in a fraction of a
second) or :data:`QUICK_PARAMS` with ``quick=True`` (tiny sizes for tests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from polylab.bench.spec import expand_tile, has_tile_placeholder, is_original
from polylab.corpus import example_path, examples
from polylab.errors import ModelError, PolylabError
from polylab.frontend import parse_file
from polylab.model.scop import Scop

#: variants of a default sweep (``$T`` is each tile size); illegal ones are reported as such
DEFAULT_SCHEDULES: tuple[str, ...] = ("original", "wavefront; parallel", "auto; parallel",
                                      "auto; tile_wavefront($T, $T)")
#: variants of ``--quick``
QUICK_SCHEDULES: tuple[str, ...] = ("original", "wavefront; parallel", "auto; tile_wavefront($T, $T)")
#: kernels of ``--quick`` (small, fast to compile and run)
QUICK_KERNELS: tuple[str, ...] = ("sweep2d.c", "jacobi2d.c")
#: kernels of a default sweep
DEFAULT_KERNELS: tuple[str, ...] = ("sl3.sy", "jacobi2d.c", "seidel2d.c")
DEFAULT_TILE_SIZES: tuple[int, ...] = (32,)
#: the extra flags of every timed build with ``polylab bench --native``: this machine's vector instructions,
#: and no contraction of ``a*b + c`` into a fused multiply-add (it rounds once), so that the original, every
#: variant and every peer still compute the same bits and a peer's timed build can be compared bit for bit
NATIVE_TIMING_FLAGS: tuple[str, ...] = ("-march=native", "-ffp-contract=off")
QUICK_TILE_SIZES: tuple[int, ...] = (4,)

#: parameter values by parameter name, used when the command line gives none
DEFAULT_PARAMS: Mapping[str, int] = {"n": 128, "N": 512, "T": 20, "M": 512, "K": 512}
QUICK_PARAMS: Mapping[str, int] = {"n": 12, "N": 24, "T": 3, "M": 16, "K": 16}


@dataclass(frozen=True)
class Kernel:
    """A kernel of the sweep: display name, path and its (first) SCoP."""

    name: str
    path: str
    scop: Scop = field(repr=False, compare=False)


@dataclass(frozen=True)
class Case:
    """One measurement: ``spec`` on ``kernel`` with ``threads`` OpenMP threads at ``params``.

    ``label`` names the variant in tables and charts (the spec with the tile size filled in);
    ``verify_params`` are the parameter values of the verification run; ``flags``: extra compiler flags of
    every timed build of the case (the original's, the variant's or the peer's), after ``-O3``
    (:data:`NATIVE_TIMING_FLAGS` for ``polylab bench --native``); verification builds do not get them."""

    kernel: str
    spec: str
    label: str
    threads: int | None
    tile_size: int | None
    params: Mapping[str, int]
    verify_params: Mapping[str, int]
    target: str = "openmp"
    #: extra compiler flags of every timed build
    flags: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "variant": self.label, "spec": self.spec, "threads": self.threads,
                "tile_size": self.tile_size, "params": dict(self.params),
                "verify_params": dict(self.verify_params), "target": self.target, "flags": list(self.flags)}


def load_kernel(name: str, *, defines=(), include_dirs=(), language: str | None = None) -> Kernel:
    """A kernel by path or by the name of a shipped example (``sl3.sy``, ``sl3``, ``jacobi2d``), read with
    the preprocessor's ``-D`` macros and ``-I`` folders."""
    path = Path(name)
    if not path.is_file():
        candidates = [name] + [name + ext for ext in (".c", ".sy") if not name.endswith((".c", ".sy"))]
        for cand in candidates:
            try:
                path = example_path(cand)
                break
            except PolylabError:
                continue
        else:
            raise PolylabError(f"no such kernel: {name}",
                               hint="give a path, or an example name: " + ", ".join(examples()))
    if not path.is_file():
        raise PolylabError(f"{name} is not a file", hint="give a C (.c) or SysY (.sy) file")
    scop = parse_file(path, defines=defines, include_dirs=include_dirs, language=language).scop
    return Kernel(path.name, str(path), scop)


def kernel_params(scop: Scop, given: Mapping[str, int], *, quick: bool = False) -> dict[str, int]:
    """Values for every parameter of ``scop``: ``given`` where it names one, else the default sizes."""
    defaults = QUICK_PARAMS if quick else DEFAULT_PARAMS
    out: dict[str, int] = {}
    for p in scop.parameters:
        if p in given:
            out[p] = int(given[p])
        elif p in defaults:
            out[p] = int(defaults[p])
        else:
            raise ModelError(f"no value for the parameter {p} of {scop.name}",
                             hint=f"give one with --param {p}=VALUE")
    return out


_NAMED = re.compile(r"^\s*([A-Za-z][\w .,+^*-]*?)\s*:\s+(\S.*)$", re.S)


def split_name(spec: str) -> tuple[str | None, str]:
    """``"strips: fold_live_ins; ..."`` -> ``("strips", "fold_live_ins; ...")``; no name -> ``(None, spec)``."""
    m = _NAMED.match(spec)
    if m and not m.group(2).lstrip().startswith(("(", ",")):
        return m.group(1), m.group(2).strip()
    return None, spec


def plan(kernels: Sequence[Kernel], specs: Sequence[str], *, threads: Sequence[int | None] = (None,),
         tile_sizes: Sequence[int] = DEFAULT_TILE_SIZES, params: Mapping[str, int] | None = None,
         verify_params: Mapping[str, int] | None = None, quick: bool = False,
         target: str = "openmp", flags: Sequence[str] = ()) -> list[Case]:
    """Every case of the sweep, kernel by kernel (see the module text).

    A spec may carry a name, ``"NAME: SPEC"``, which labels it in tables and charts. A spec with ``$T``
    yields one variant per tile size. The original order has no parallel loop, so it
    is measured once per kernel (with the first thread count), not once per thread count. ``flags``: extra
    compiler flags of every timed build (:attr:`Case.flags`)."""
    params = dict(params or {})
    flags = tuple(flags)
    cases: list[Case] = []
    threads = list(threads) or [None]
    for k in kernels:
        values = kernel_params(k.scop, params, quick=quick)
        vvalues = {**values, **{p: v for p, v in (verify_params or {}).items() if p in values}}
        for named in specs:
            name, spec = split_name(named)
            sizes: list[int | None] = list(tile_sizes) if has_tile_placeholder(spec) else [None]
            for size in sizes:
                concrete = expand_tile(spec, size) if size is not None else spec
                label = "original" if is_original(spec) and name is None else concrete
                if name is not None:
                    label = f"{name} ({size})" if size is not None else name
                for t in (threads[:1] if is_original(spec) else threads):
                    cases.append(Case(k.name, concrete, label, t, size, values, vvalues, target, flags))
    return cases
