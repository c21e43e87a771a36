"""Reading a schedule written by a person: isl text or a recipe of named steps.

* isl text: ``{ S0[i, j, k] -> [i + j + k, i, j, k] }`` (parameters may be declared, ``[N] -> { .. }``):
  a union over the statements, every statement mentioned, each map a function defined on the whole
  iteration domain.
* a recipe: named steps separated by ``;`` or new lines, applied in order to the source order,
  ``wavefront; tile(32, 32); parallel``. Every step is a function ``step(schedule, *args) -> Schedule``
  registered under its name; later layers add theirs with :func:`register_step` (the storage layer
  registers ``fold_live_ins`` and ``contract`` when it is imported; the schedule layer never imports it).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Callable

import islpy as isl

from polylab.errors import ScheduleError, SourceLocation
from polylab.model import Scop
from polylab.schedule.core import Schedule, original
from polylab.schedule.deps import maps_of

StepFn = Callable[..., Schedule]


@dataclass(frozen=True)
class Step:
    name: str
    fn: StepFn
    usage: str
    summary: str


_REGISTRY: dict[str, Step] = {}

#: steps that another layer registers when it is imported (name -> module that registers it)
KNOWN_ELSEWHERE = {name: "polylab.storage" for name in
                   ("fold_live_ins", "remove_dead_writes", "interleave", "fuse_producers", "contract", "storage")}


def register_step(name: str, fn: StepFn, *, usage: str | None = None) -> None:
    """Make ``fn(schedule, *args) -> Schedule`` available as recipe step ``name``."""
    if usage is None:
        params = list(inspect.signature(fn).parameters.values())[1:]
        shown = []
        for p in params:
            if p.kind is p.VAR_POSITIONAL:
                shown.append(f"{p.name}...")
            elif p.kind is p.KEYWORD_ONLY:
                continue
            elif p.default is p.empty:
                shown.append(p.name)
            else:
                shown.append(f"[{p.name}]")
        usage = f"{name}({', '.join(shown)})" if shown else name
    doc = (inspect.getdoc(fn) or "").strip().splitlines()
    _REGISTRY[name] = Step(name, fn, usage, doc[0] if doc else "")


def steps() -> dict[str, Step]:
    """The registered recipe steps by name."""
    _ensure_builtin()
    return dict(_REGISTRY)


def _ensure_builtin() -> None:
    if "auto" in _REGISTRY:
        return
    import importlib

    isl_scheduler = importlib.import_module("polylab.schedule.isl_scheduler")
    pluto = importlib.import_module("polylab.schedule.pluto")
    tiling = importlib.import_module("polylab.schedule.tiling")
    transform = importlib.import_module("polylab.schedule.transform")
    wavefront = importlib.import_module("polylab.schedule.wavefront")

    def original_step(s: Schedule) -> Schedule:
        """Go back to the source order (the original schedule)."""
        o = original(s.scop, s.deps)
        return o.with_maps(o.maps, "original")

    register_step("original", original_step)
    register_step("auto", pluto.auto)
    register_step("isl", isl_scheduler.isl_step)
    register_step("wavefront", wavefront.wavefront)
    register_step("interchange", transform.interchange)
    register_step("permute", transform.permute, usage="permute(d0, d1, ...)")
    register_step("skew", transform.skew, usage="skew(target, source, [factor])")
    register_step("shift", transform.shift)
    register_step("reverse", transform.reverse)
    register_step("scale", transform.scale)
    register_step("fuse", transform.fuse)
    register_step("distribute", transform.distribute, usage="distribute([level])")
    register_step("tile", tiling.tile, usage="tile(size, ...)")
    register_step("tile_wavefront", tiling.tile_wavefront, usage="tile_wavefront(size, ...)")
    register_step("parallel", transform.parallel)


# --------------------------------------------------------------------------------------------------------
_STEP_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", re.S)


def _split(spec: str) -> list[tuple[str, int]]:
    """Steps with their offsets (separators inside parentheses are kept)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(spec):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in ";\n" and depth <= 0:
            out.append((spec[start:k], start))
            start = k + 1
    out.append((spec[start:], start))
    return [(t, o) for t, o in out if t.strip() and not t.strip().startswith("#")]


def _location(spec: str, offset: int, text: str) -> SourceLocation:
    stripped = text.strip()
    offset += len(text) - len(text.lstrip())
    line = spec.count("\n", 0, offset) + 1
    line_start = spec.rfind("\n", 0, offset) + 1
    line_end = spec.find("\n", offset)
    source_line = spec[line_start: line_end if line_end >= 0 else len(spec)]
    return SourceLocation(line, offset - line_start + 1, stripped.splitlines()[0] if stripped else "",
                          source_line)


def _arg(tok: str):
    tok = tok.strip()
    if re.fullmatch(r"[+-]?\d+", tok):
        return int(tok)
    if re.fullmatch(r"[A-Za-z_]\w*", tok):
        return tok
    if tok.startswith("[") and tok.endswith("]"):
        return [_arg(t) for t in tok[1:-1].split(",") if t.strip()]
    raise ValueError(tok)


def _valid_steps_hint() -> str:
    names = sorted(steps())
    extra = [n for n in KNOWN_ELSEWHERE if n not in names]
    return ("valid steps: " + ", ".join(steps()[n].usage for n in names)
            + (f" (storage steps {', '.join(extra)} need `import polylab.storage`)" if extra else ""))


def parse_recipe(scop: Scop, spec: str, *, start: Schedule | None = None, deps=None) -> Schedule:
    """Apply the recipe ``spec`` step by step, starting from ``start`` (default: the source order)."""
    _ensure_builtin()
    sched = start if start is not None else original(scop, deps)
    for text, offset in _split(spec):
        loc = _location(spec, offset, text)
        m = _STEP_RE.match(text)
        if not m:
            raise ScheduleError(f"cannot read the step {text.strip()!r}", location=loc,
                                hint="write name or name(arg, ...); " + _valid_steps_hint())
        name, argtext = m.group(1), m.group(2)
        step = _REGISTRY.get(name)
        if step is None:
            close = [n for n in _REGISTRY if n.startswith(name[:3])]
            where = (f"`{name}` is a storage step: import polylab.storage first; "
                     if name in KNOWN_ELSEWHERE else "")
            raise ScheduleError(f"unknown schedule step {name!r}", location=loc,
                                hint=where + (f"did you mean {', '.join(close)}? " if close else "")
                                + _valid_steps_hint())
        try:
            args = [_arg(t) for t in _split_args(argtext)] if argtext and argtext.strip() else []
        except ValueError as exc:
            raise ScheduleError(f"bad argument {exc.args[0]!r} to {name}", location=loc,
                                hint=f"usage: {step.usage}; arguments are integers or names")
        try:
            inspect.signature(step.fn).bind(sched, *args)
        except TypeError:
            raise ScheduleError(f"wrong arguments for {name}: {text.strip()}", location=loc,
                                hint=f"usage: {step.usage} -- {step.summary}")
        try:
            sched = step.fn(sched, *args)
        except ScheduleError as err:
            if err.location is None:
                raise type(err)(err.message, location=loc, hint=err.hint) from None
            raise
        except Exception as err:  # a PolylabError of another layer keeps its own type
            from polylab.errors import PolylabError

            if isinstance(err, PolylabError):
                if err.location is None:
                    err.location = loc
                raise
            raise
    return sched


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [t for t in out if t.strip()]


def parse_isl(scop: Scop, spec: str, *, deps=None) -> Schedule:
    """Read an isl union map ``{ S0[i, j] -> [..]; S1[..] -> [..] }`` as a schedule of ``scop``.

    The dimensions that are exactly parallel are marked coincident (``space``), as the ``parallel`` step
    would: dimension ``d`` when every dependent pair whose times agree on ``0..d-1`` also agrees on ``d``.
    Legality is not checked here (see :func:`polylab.schedule.require_legal`)."""
    text = spec.strip()
    loc = _location(spec, 0, spec)
    try:
        umap = isl.UnionMap.read_from_str(scop.context.get_ctx(), text)
    except isl.Error:
        raise ScheduleError("cannot read the schedule as isl text", location=loc,
                            hint="write { S0[i, j] -> [i + j, j]; S1[i] -> [i, 0] } with one piece per "
                                 "statement (or a recipe such as `wavefront; tile(32, 32)`)") from None
    maps: dict[str, isl.Map] = {}
    pspace = scop.context.get_space()
    names = {s.name for s in scop.statements}
    for m in maps_of(umap):
        name = m.get_tuple_name(isl.dim_type.in_)
        if name not in names:
            raise ScheduleError(f"the schedule names {name!r}, which is not a statement", location=loc,
                                hint="the statements are " + ", ".join(
                                    f"{s.name}[{', '.join(s.iterators)}]" for s in scop.statements))
        st = scop.statement(name)
        if m.dim(isl.dim_type.in_) != st.depth:
            raise ScheduleError(f"{name} has {st.depth} iterators, the schedule gives it "
                                f"{m.dim(isl.dim_type.in_)}", location=loc,
                                hint=f"write {name}[{', '.join(st.iterators)}] -> [...]")
        extra = [m.get_dim_name(isl.dim_type.param, k) for k in range(m.dim(isl.dim_type.param))
                 if m.get_dim_name(isl.dim_type.param, k) not in scop.parameters]
        if extra:
            raise ScheduleError(f"unknown parameter {extra[0]!r} in the schedule", location=loc,
                                hint=f"the parameters are {', '.join(scop.parameters) or 'none'}")
        if name in maps:
            raise ScheduleError(f"{name} has time vectors of different lengths", location=loc,
                                hint="give each statement one map with one length")
        m = m.align_params(pspace)
        dom = st.domain.align_params(pspace).intersect_params(scop.context)
        if not dom.is_subset(m.domain()):
            missing = dom.subtract(m.domain())
            raise ScheduleError(f"the schedule of {name} is not defined on all of its instances",
                                location=loc, hint=f"no time for {missing.coalesce()}")
        if not m.intersect_domain(dom).is_single_valued():
            raise ScheduleError(f"the schedule gives some instance of {name} several times", location=loc,
                                hint="each instance needs exactly one time vector (a function)")
        maps[name] = m.reset_tuple_id(isl.dim_type.out)
    missing = [s for s in scop.statements if s.name not in maps]
    if missing:
        raise ScheduleError(f"the schedule does not mention {', '.join(s.name for s in missing)}",
                            location=loc, hint="add " + "; ".join(
                                f"{s.name}[{', '.join(s.iterators)}] -> [...]" for s in missing))
    # isl text has no syntax for parallelism: mark exactly the coincident dimensions, as the searches
    # (wavefront, auto, tile_wavefront) do; marking is always legal and changes no order
    from polylab.schedule.transform import mark_parallel

    return mark_parallel(Schedule.from_maps(scop, maps, steps=(text,), deps=deps))


def parse_schedule(scop: Scop, spec: str, *, deps=None) -> Schedule:
    """A :class:`Schedule` from isl text (``{ S0[i, j] -> [i + j, j] }``) or from a recipe of steps
    (``wavefront; tile(32, 32); parallel``). isl text gets its exactly parallel dimensions marked coincident
    (it cannot say ``parallel`` itself); a recipe marks what its steps mark (``parallel``, and the searches
    ``wavefront``, ``auto``, ``tile_wavefront``). Mistakes raise :class:`ScheduleError` with the column of the
    bad step and a hint listing the valid steps."""
    if not isinstance(spec, str) or not spec.strip():
        raise ScheduleError("empty schedule", hint="write isl text { S0[i, j] -> [j, i] } or a recipe; "
                            + _valid_steps_hint())
    head = spec.lstrip()
    if head.startswith("{") or head.startswith("["):
        end = _isl_text_end(spec)
        sched = parse_isl(scop, spec[:end], deps=deps)
        if not spec[end:].strip(" \t\n;"):
            return sched
        # steps after the isl text start from it; blank the isl text so columns stay the user's
        blanked = "".join(ch if ch == "\n" else " " for ch in spec[:end]) + spec[end:]
        return parse_recipe(scop, blanked, start=sched, deps=deps)
    return parse_recipe(scop, spec, deps=deps)


def _isl_text_end(spec: str) -> int:
    """The offset just past the ``}`` that closes the first ``{`` of ``spec`` (its length if none does)."""
    depth = 0
    for k, ch in enumerate(spec):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(spec)
