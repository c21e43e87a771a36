"""The one reader of schedule specs, and the one conversion of isl schedules into :class:`Schedule` values.

A *spec* is what a person writes after ``--schedule``, in a ``%%schedule`` cell or in ``polylab bench
--schedules``: parts separated by ``;`` or new lines (separators inside ``()``, ``[]`` and ``{}`` do not
count, so isl text and step arguments stay whole; a part starting with ``#`` is a comment), applied left to
right, starting from the source order:

* a **recipe step** ``name`` or ``name(arg, ...)`` (integers, names, ``[lists]``) from the step table the
  reader is given (:data:`polylab.schedule.recipe.SCHEDULE_STEPS` by default; the
  layers above pass :func:`polylab.storage.recipe_steps`, which adds the storage steps). A step maps the
  current schedule to a new one; a storage step also rewrites the SCoP (the new schedule's ``scop``);
* **isl text** ``{ S0[i, j] -> [i + j, j] }`` (parameters may be declared, ``[N] -> { ... }``): it
  replaces the schedule of the *current* SCoP -- the one the storage steps before it produced, so after
  ``contract(x)`` it names the copy-out statements too -- by the given affine map. Every statement must be
  mentioned, each map a function defined on the whole iteration domain. isl text has no syntax for
  parallelism: its exactly parallel dimensions are marked coincident, as the ``parallel`` step would.

Legality: the reader only reads (a student may build an illegal schedule and look at it). A schedule that
becomes code passes the one gate, :func:`polylab.schedule.require_legal`, on the *final* schedule, against
the exact dependences of its own SCoP (``schedule.scop``: after storage steps the rewritten one, whose
order is the one its storage proof was made for); ``polylab run``, ``codegen``, ``bench`` and ``%polyrun``
all read specs here and gate them there (:func:`polylab.experiment.schedule_from_spec`). Storage steps
refuse an illegal schedule they are given, and isl text after a storage step is checked like any schedule.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import types
import typing
from dataclasses import replace
from typing import Iterable

import islpy as isl

from polylab.analysis import DependenceGraph
from polylab.errors import PolylabError, ScheduleError, SourceLocation
from polylab.model import Scop
from polylab.model.budget import bounded
from polylab.model.islutil import maps_of
from polylab.schedule.core import Schedule, map_from_affs, original, zero_aff
from polylab.schedule.deps import Dep
from polylab.schedule import recipe
from polylab.schedule.recipe import StepTable
from polylab.schedule.transform import mark_parallel

__all__ = ["as_schedule", "from_union_map", "parse_isl", "parse_schedule", "split_spec"]

_STEP_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", re.S)
_OPEN, _CLOSE = "([{", ")]}"


# -- splitting ------------------------------------------------------------------------------------------
def _parts(spec: str) -> list[tuple[str, int]]:
    """The parts of ``spec`` with their offsets (comments and blank parts dropped)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(spec):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch in ";\n" and depth <= 0:
            out.append((spec[start:k], start))
            start = k + 1
    out.append((spec[start:], start))
    return [(t, o) for t, o in out if t.strip() and not t.strip().startswith("#")]


def split_spec(spec: str) -> list[str]:
    """The parts of a spec, stripped: ``"fold_live_ins\\n{ S0[i] -> [i]; S1[i] -> [0] }; tile(4, 4)"`` ->
    ``["fold_live_ins", "{ S0[i] -> [i]; S1[i] -> [0] }", "tile(4, 4)"]``."""
    return [t.strip() for t, _ in _parts(spec)]


def _is_isl(part: str) -> bool:
    return part.lstrip().startswith(("{", "["))


def _location(spec: str, offset: int, text: str) -> SourceLocation:
    stripped = text.strip()
    offset += len(text) - len(text.lstrip())
    line = spec.count("\n", 0, offset) + 1
    line_start = spec.rfind("\n", 0, offset) + 1
    line_end = spec.find("\n", offset)
    source_line = spec[line_start: line_end if line_end >= 0 else len(spec)]
    return SourceLocation(line, offset - line_start + 1, stripped.splitlines()[0] if stripped else "",
                          source_line)


# -- isl text and isl values ------------------------------------------------------------------------------
def from_union_map(scop: Scop, umap: isl.UnionMap, *, steps: tuple[str, ...] = (),
                   location: SourceLocation | None = None,
                   deps: DependenceGraph | Iterable[Dep] | None = None) -> Schedule:
    """``umap = { S[x] -> [t] }`` as a :class:`Schedule` of ``scop`` (no dimension marked parallel).

    Refused with a :class:`ScheduleError` (at ``location``) unless it mentions every statement and only
    statements of ``scop`` with their number of iterators, only ``scop``'s parameters, and gives each
    statement one function of one length defined on its whole iteration domain."""
    maps: dict[str, isl.Map] = {}
    pspace = scop.context.get_space()
    names = {s.name for s in scop.statements}
    for m in maps_of(umap):
        name = m.get_tuple_name(isl.dim_type.in_)
        if name not in names:
            raise ScheduleError(f"the schedule names {name!r}, which is not a statement", location=location,
                                hint="the statements are " + ", ".join(
                                    f"{s.name}[{', '.join(s.iterators)}]" for s in scop.statements))
        st = scop.statement(name)
        if m.dim(isl.dim_type.in_) != st.depth:
            raise ScheduleError(f"{name} has {st.depth} iterators, the schedule gives it "
                                f"{m.dim(isl.dim_type.in_)}", location=location,
                                hint=f"write {name}[{', '.join(st.iterators)}] -> [...]")
        extra = [m.get_dim_name(isl.dim_type.param, k) for k in range(m.dim(isl.dim_type.param))
                 if m.get_dim_name(isl.dim_type.param, k) not in scop.parameters]
        if extra:
            raise ScheduleError(f"unknown parameter {extra[0]!r} in the schedule", location=location,
                                hint=f"the parameters are {', '.join(scop.parameters) or 'none'}")
        if name in maps:
            raise ScheduleError(f"{name} has time vectors of different lengths", location=location,
                                hint="give each statement one map with one length")
        m = m.align_params(pspace)
        dom = st.domain.align_params(pspace).intersect_params(scop.context)
        if not dom.is_subset(m.domain()):
            missing = dom.subtract(m.domain())
            raise ScheduleError(f"the schedule of {name} is not defined on all of its instances",
                                location=location, hint=f"no time for {missing.coalesce()}")
        on_domain = m.intersect_domain(dom)
        if not on_domain.is_single_valued():
            raise ScheduleError(f"the schedule gives some instance of {name} several times",
                                location=location,
                                hint="each instance needs exactly one time vector (a function)")
        if not m.is_single_valued():  # a function on the instances only: keep it there
            # (no instance at all, as where the context leaves none: any function will do, time 0)
            m = on_domain if not dom.is_empty() else \
                map_from_affs(st, pspace, [zero_aff(st, pspace)] * m.dim(isl.dim_type.out))
        maps[name] = m.reset_tuple_id(isl.dim_type.out)
    # a statement without instances (a dead initialisation restricted to nothing) needs no time
    missing_stmts = [s for s in scop.statements if s.name not in maps
                     and not s.domain.align_params(pspace).intersect_params(scop.context).is_empty()]
    if missing_stmts:
        raise ScheduleError(f"the schedule does not mention {', '.join(s.name for s in missing_stmts)}",
                            location=location, hint="add " + "; ".join(
                                f"{s.name}[{', '.join(s.iterators)}] -> [...]" for s in missing_stmts))
    return Schedule.from_maps(scop, maps, steps=steps, deps=deps)


def parse_isl(scop: Scop, text: str, *, location: SourceLocation | None = None,
              deps: DependenceGraph | Iterable[Dep] | None = None) -> Schedule:
    """Read the isl union map ``{ S0[i, j] -> [..]; S1[..] -> [..] }`` as a schedule of ``scop``
    (:func:`from_union_map`), its exactly parallel dimensions marked coincident: dimension ``d`` when every
    dependent pair whose times agree on ``0..d-1`` also agrees on ``d``. Legality is not checked here."""
    text = text.strip()
    try:
        umap = isl.UnionMap.read_from_str(scop.context.get_ctx(), text)
    except isl.Error:
        raise ScheduleError("cannot read the schedule as isl text", location=location,
                            hint="write { S0[i, j] -> [i + j, j]; S1[i] -> [i, 0] } with one piece per "
                                 "statement (or a recipe such as `wavefront; tile(32, 32)`)") from None
    # marking is always legal and changes no order, as for the searches (wavefront, auto, tile_wavefront)
    return mark_parallel(from_union_map(scop, umap, steps=(text,), location=location, deps=deps))


def as_schedule(scop: Scop, value: Schedule | isl.Schedule | isl.UnionMap | isl.Map) -> Schedule:
    """The one normaliser: a :class:`Schedule` stays itself; an ``isl.Schedule`` tree or an isl map
    ``{ S[x] -> [t] }`` becomes a Schedule of ``scop`` (its per-statement time vectors on the iteration
    domains, read with the checks of isl text, its exactly parallel dimensions marked; a tree's own
    coincident flags are not trusted)."""
    if isinstance(value, Schedule):
        return value
    if isinstance(value, isl.Schedule):
        umap = value.get_map()
    elif isinstance(value, isl.Map):
        umap = isl.UnionMap.from_map(value)
    else:
        umap = value
    umap = umap.intersect_domain(scop.domain).coalesce()
    return mark_parallel(from_union_map(scop, umap, steps=(str(umap),)))


# -- the reader ---------------------------------------------------------------------------------------------
def _valid_steps_hint(table: StepTable) -> str:
    return "valid steps: " + ", ".join(table[n].usage for n in sorted(table))


def _arg(tok: str) -> int | str | list:
    tok = tok.strip()
    if re.fullmatch(r"[+-]?\d+", tok):
        return int(tok)
    if re.fullmatch(r"[A-Za-z_]\w*", tok):
        return tok
    if tok.startswith("[") and tok.endswith("]"):
        return [_arg(t) for t in tok[1:-1].split(",") if t.strip()]
    raise ValueError(tok)


#: the largest magnitude of an integer argument (C's ``int``: sizes, factors and shifts become C code)
ARG_LIMIT = 2**31 - 1


def _accepts(annotation: object, value: object) -> bool:
    """Does ``value`` (an int, a name or a list, as :func:`_arg` reads them) fit the step's annotation?
    Only ``int`` and ``str`` are checked; an unannotated argument or another type is the step's to check."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any:
        return True
    options = typing.get_args(annotation) if isinstance(annotation, types.UnionType) \
        or typing.get_origin(annotation) is typing.Union else (annotation,)
    for a in options:
        if (a is int and type(value) is int) or (a is str and isinstance(value, str)):
            return True
        if typing.get_origin(a) in (list, tuple, collections.abc.Sequence):  # a [list] of its element type
            elem = (typing.get_args(a) or (typing.Any,))[0]
            if isinstance(value, list) and all(_accepts(elem, x) for x in value):
                return True
        elif a not in (int, str, type(None)):
            return True
    return False


def _check_args(step: recipe.Step, bound: inspect.BoundArguments, loc: SourceLocation) -> None:
    """Refuse, at ``loc``, arguments of the wrong kind (a name where the step needs an integer) or integers
    beyond :data:`ARG_LIMIT`."""
    try:
        hints = typing.get_type_hints(step.fn)
    except (NameError, TypeError, AttributeError):  # a user's step with annotations Python cannot resolve
        hints = {}
    params = inspect.signature(step.fn).parameters
    for pname, value in list(bound.arguments.items())[1:]:
        p = params[pname]
        values = value if p.kind is p.VAR_POSITIONAL else (value,)
        for v in values:
            for x in (v if isinstance(v, list) else [v]):
                if type(x) is int and abs(x) > ARG_LIMIT:
                    raise ScheduleError(f"the argument {x} of {step.name} is too large", location=loc,
                                        hint=f"integer arguments are at most {ARG_LIMIT} in size; usage: "
                                             f"{step.usage}")
            if not _accepts(hints.get(pname, inspect.Parameter.empty), v):
                want = "an integer" if _accepts(hints[pname], 0) else "a name" if _accepts(hints[pname], "x") \
                    else "a [list]"
                raise ScheduleError(f"{step.name} needs {want} for {pname}, not {v!r}", location=loc,
                                    hint=f"usage: {step.usage} -- {step.summary}")


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


def _apply_step(sched: Schedule, text: str, loc: SourceLocation, table: StepTable) -> Schedule:
    """One recipe step applied to ``sched``; a mistake is a :class:`ScheduleError` at ``loc``."""
    m = _STEP_RE.match(text)
    if not m:
        raise ScheduleError(f"cannot read the step {text.strip()!r}", location=loc,
                            hint="write name or name(arg, ...); " + _valid_steps_hint(table))
    name, argtext = m.group(1), m.group(2)
    step = table.get(name)
    if step is None:
        close = [n for n in sorted(table) if n.startswith(name[:3])]
        raise ScheduleError(f"unknown schedule step {name!r}", location=loc,
                            hint=(f"did you mean {', '.join(close)}? " if close else "") + _valid_steps_hint(table)
                            + " (the storage steps are in the table of polylab.storage.recipe_steps())")
    try:
        args = [_arg(t) for t in _split_args(argtext)] if argtext and argtext.strip() else []
    except ValueError as exc:
        raise ScheduleError(f"bad argument {exc.args[0]!r} to {name}", location=loc,
                            hint=f"usage: {step.usage}; arguments are integers or names") from None
    try:
        bound = inspect.signature(step.fn).bind(sched, *args)
    except TypeError:
        raise ScheduleError(f"wrong arguments for {name}: {text.strip()}", location=loc,
                            hint=f"usage: {step.usage} -- {step.summary}") from None
    _check_args(step, bound, loc)
    try:
        with bounded(f"the step {name}"):
            return step.fn(sched, *args)
    except PolylabError as err:   # any layer's error keeps its type and fields; it gets the step's place
        if err.location is None:
            err.location = loc
        raise


def parse_schedule(scop: Scop, spec: str, *, steps: StepTable | None = None,
                   deps: DependenceGraph | Iterable[Dep] | None = None) -> Schedule:
    """The :class:`Schedule` a spec describes (see the module text): isl text and recipe steps in any
    order, applied from the source order of ``scop``. ``steps`` is the step table (default:
    :data:`polylab.schedule.recipe.SCHEDULE_STEPS`); ``deps`` the dependences of ``scop`` when already computed.
    Mistakes raise :class:`~polylab.errors.ScheduleError` with the line and column of the bad part and a
    hint (the valid steps, the statements, ...). Legality is not checked here (see the module text)."""
    table = steps if steps is not None else recipe.SCHEDULE_STEPS
    if not isinstance(spec, str) or not _parts(spec):
        raise ScheduleError("empty schedule", hint="write isl text { S0[i, j] -> [j, i] } or a recipe; "
                            + _valid_steps_hint(table))
    sched: Schedule | None = None
    for text, offset in _parts(spec):
        loc = _location(spec, offset, text)
        if _is_isl(text):
            sched = _isl_part(scop, sched, text, loc, deps)
        else:
            sched = _apply_step(sched if sched is not None else original(scop, deps), text, loc, table)
    assert sched is not None
    return sched


def _isl_part(scop: Scop, current: Schedule | None, text: str, loc: SourceLocation,
              deps: DependenceGraph | Iterable[Dep] | None) -> Schedule:
    """isl text replacing the schedule of the current SCoP; the steps so far and the storage reports stay."""
    if current is None:
        return parse_isl(scop, text, location=loc, deps=deps)
    new = parse_isl(current.scop, text, location=loc, deps=current.deps)
    return replace(new, steps=current.steps + new.steps,
                   provenance=replace(new.provenance, storage=current.provenance.storage))
