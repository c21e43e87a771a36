"""The notebook layer's single door to the engine: parse, dependences, schedules, code, experiments.

The magics and explorers call these functions only, so each engine interface is used in exactly one
place. Each call runs with descriptor 2 captured (isl's messages) and returns what the caller needs; a
missing engine layer is reported as a :class:`~polylab.errors.PolylabError` that says which one.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from polylab.errors import PolylabError


class MissingLayer(PolylabError):
    """An engine layer the notebook needs is not installed (or failed to import)."""

    kind = "not available"


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise MissingLayer(f"{name} is not available ({exc})",
                           hint="this polylab installation lacks that layer") from None


def parse(text: str, *, language: str | None = None, filename: str | None = None):
    """The cell's text as a :class:`polylab.model.Program`."""
    front = _module("polylab.frontend")
    kwargs: dict[str, Any] = {}
    if language:
        kwargs["language"] = language
    if filename:
        kwargs["filename"] = filename
    return front.parse(text, **kwargs)


def as_scop(obj: Any):
    """A Scop from a Scop, a Program (its single static control part) or a Schedule (its scop)."""
    if hasattr(obj, "statements") and hasattr(obj, "context"):
        return obj
    if hasattr(obj, "scops"):
        return obj.scop
    if hasattr(obj, "scop"):
        return as_scop(obj.scop)
    raise PolylabError(f"expected a SCoP, found a {type(obj).__name__}",
                       hint="store one with %%scop NAME, then pass NAME")


def dependences(scop, *, value_based: bool = False, kinds=("flow", "anti", "output")):
    """The exact dependence graph of ``scop`` (memory-based unless ``value_based``)."""
    return _module("polylab.analysis").compute_dependences(scop, value_based=value_based, kinds=kinds)


def parse_schedule(scop, spec: str):
    """A :class:`polylab.schedule.Schedule` from isl text or recipe steps.

    The storage layer is imported first (when installed), so that its recipe steps (``fold_live_ins``,
    ``remove_dead_writes``, ``interleave``, ``contract(x)``) can be written in a ``%%schedule`` cell.
    """
    try:
        importlib.import_module("polylab.storage")
    except ImportError:  # the steps of the schedule layer still work
        pass
    return _module("polylab.schedule").parse_schedule(scop, spec)


def legality(schedule) -> Any:
    """The legality report of ``schedule`` (``.legal``, ``.violations``)."""
    mod = _module("polylab.schedule.legality")
    return mod.check(schedule)


def require_legal(schedule, what: str = "the schedule", *, consequence: str = "so it is not run",
                  hint: str | None = None) -> Any:
    """``schedule`` when it is legal, else the schedule layer's
    :class:`~polylab.errors.IllegalTransformationError` (the one gate,
    :func:`polylab.schedule.require_legal`: the violated dependence and a violating pair)."""
    mod = _module("polylab.schedule.legality")
    return mod.require_legal(schedule, what, consequence=consequence, hint=hint)


def report_legal(report: Any) -> bool:
    for name in ("legal", "is_legal", "ok"):
        if hasattr(report, name):
            v = getattr(report, name)
            return bool(v() if callable(v) else v)
    return not list(report_violations(report))


def report_violations(report: Any) -> list:
    v = getattr(report, "violations", None)
    return list(v or [])


def violation_pair(v: Any) -> tuple[Any, Any]:
    """The violating instances ``(u, v)`` of a violation record (whatever it calls them)."""
    for a, b in (("source_instance", "sink_instance"), ("source_point", "sink_point"),
                 ("pair_source", "pair_sink")):
        if hasattr(v, a) and hasattr(v, b):
            return getattr(v, a), getattr(v, b)
    pair = getattr(v, "pair", None)
    if pair is not None:
        return pair[0], pair[1]
    return None, None


def violation_dependence(v: Any) -> Any:
    return getattr(v, "dependence", None)


def generate(scop, schedule, target: str = "c") -> Any:
    """Generated code for ``schedule`` (a :class:`polylab.codegen.GeneratedCode` or text)."""
    return _module("polylab.codegen").generate(scop, schedule, target=target)


def code_text(generated: Any) -> str:
    for name in ("kernel", "code", "text", "source"):
        v = getattr(generated, name, None)
        if isinstance(v, str):
            return v
    return str(generated)


def experiment(scop, schedule, *, target: str = "c", params: Mapping[str, int] | None = None,
               threads: int | None = None, repeat: int = 3, force: bool = False,
               verify_params: Mapping[str, int] | None = None, timeout: float | None = None) -> Any:
    """Compile, verify and time ``schedule`` against the original program (``polylab.experiment.measure``).

    ``force`` is passed on when the experiment layer accepts it (rebuild instead of reusing cached
    binaries); the magic's own result cache is bypassed either way.
    """
    import inspect

    mod = _module("polylab.experiment")
    kwargs: dict[str, Any] = dict(params=dict(params or {}), threads=threads, repeat=repeat)
    if timeout is not None:
        kwargs["timeout"] = timeout  # seconds per run: the toolchain kills the program's process group after it
    accepted = inspect.signature(mod.measure).parameters
    if force and "force" in accepted:
        kwargs["force"] = True
    if verify_params and "verify_params" in accepted:
        kwargs["verify_params"] = dict(verify_params)
    return mod.measure(scop, schedule, target, **kwargs)
