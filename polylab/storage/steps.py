"""The storage steps as recipe steps of the schedule layer.

A recipe step takes a schedule value (which knows its SCoP, ``schedule.scop``) and returns a new one. The
storage steps change the SCoP as well, so each returns a schedule of the *new* SCoP:
``fold_live_ins``, ``remove_dead_writes``, ``interleave`` (alias ``fuse_producers``), ``contract(x)``
(``contract(x, 2)`` fixes the modulus) and ``storage`` (the whole automatic chain). Their reports are
attached to the returned schedule's ``details['storage']`` when the schedule value has ``details``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from polylab.storage.islutil import wrap_schedule


def _scop_of(schedule: Any):
    scop = getattr(schedule, "scop", None)
    if scop is None:
        raise TypeError("a storage recipe step needs a schedule value that knows its SCoP (.scop)")
    return scop


def _with_report(value: Any, name: str, report: Any) -> Any:
    details = getattr(value, "details", None)
    if details is None:
        return value
    try:
        new = dict(details)
        new.setdefault("storage", ())
        new["storage"] = tuple(new["storage"]) + ((name, report),)
        from types import MappingProxyType
        return replace(value, details=MappingProxyType(new))
    except Exception:  # noqa: BLE001 - reports are an extra, never a reason to fail
        return value


def step_fold_live_ins(schedule: Any, **initial_values: Any) -> Any:
    """Recipe step ``fold_live_ins``: the schedule of the folded SCoP (same time vectors)."""
    from polylab.storage.fold import fold_live_ins

    scop, rep = fold_live_ins(_scop_of(schedule), initial_values=initial_values or None)
    out = wrap_schedule(schedule, _tree(schedule, scop), scop, steps=("fold_live_ins",))
    return _with_report(out, "fold_live_ins", rep)


def step_remove_dead_writes(schedule: Any, *statements: str) -> Any:
    """Recipe step ``remove_dead_writes`` (or ``remove_dead_writes(S0, S2)``): the same time vectors on
    the restricted domains. Without names it restricts the statements that store constants (the
    initialisations), as the automatic chain does; name statements to restrict others too."""
    from polylab.storage.dead import remove_dead_writes
    from polylab.storage.fold import constant_writers

    scop = _scop_of(schedule)
    names = list(statements) if statements else list(constant_writers(scop))
    scop, rep = remove_dead_writes(scop, statements=names)
    out = wrap_schedule(schedule, _tree(schedule, scop), scop, steps=("remove_dead_writes",))
    return _with_report(out, "remove_dead_writes", rep)


def step_interleave(schedule: Any) -> Any:
    """Recipe step ``interleave``: producers next to the consumer iteration that first reads them."""
    from polylab.storage.interleave import interleave

    out, rep = interleave(_scop_of(schedule), schedule)
    return _with_report(out, "interleave", rep)


def step_contract(schedule: Any, array: str, modulus: int | None = None) -> Any:
    """Recipe step ``contract(x)``: the schedule of the contracted SCoP (with its copy-outs)."""
    from polylab.storage.contract import contract

    _, out, rep = contract(_scop_of(schedule), schedule, str(array),
                           modulus=int(modulus) if modulus is not None else None)
    return _with_report(out, f"contract({array})", rep)


def step_storage(schedule: Any) -> Any:
    """Recipe step ``storage``: the automatic chain of :func:`polylab.storage.storage_pipeline`."""
    from polylab.storage.pipeline import storage_pipeline

    plan = storage_pipeline(_scop_of(schedule), schedule)
    return _with_report(plan.schedule, "storage", plan)


def _tree(schedule: Any, scop: Any):
    from polylab.storage.islutil import schedule_map, schedule_from_map

    return schedule_from_map(schedule_map(schedule, scop.domain), scop.domain)


STEPS = {"fold_live_ins": step_fold_live_ins, "remove_dead_writes": step_remove_dead_writes,
         "interleave": step_interleave, "fuse_producers": step_interleave, "contract": step_contract,
         "storage": step_storage}


def register_steps() -> bool:
    """Register the storage steps with the schedule layer's recipe registry (when it has one)."""
    try:
        from polylab.schedule import register_step  # type: ignore[attr-defined]
    except ImportError:
        return False
    for name, fn in STEPS.items():
        try:
            register_step(name, fn)
        except Exception:  # noqa: BLE001 - a name the schedule layer already owns stays theirs
            continue
    return True
