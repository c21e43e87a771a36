"""Where labs and hidden cases come from.

A lab is a module ``polylab/grading/labs/<name>.py`` that defines ``LAB``, a :class:`~polylab.grading.lab.Lab`
whose ``name`` is the module's name. :func:`lab_names` lists them; :func:`get_lab` imports one.

Hidden cases are instructor files, outside the package and outside the student release: a directory
(``solutions/hidden/`` in this repository) with one Python file per lab, ``<lab>.py``, defining

    HIDDEN = {"q5": [Case(([6, 9, 12], 4), "three coefficients, gcd 3 does not divide 4"), ...]}

(``Case`` is :class:`polylab.grading.Case`). Only the batch grader reads them (``polylab grade --hidden DIR``).
"""

from __future__ import annotations

import importlib
import pkgutil
import runpy
from pathlib import Path
from typing import Mapping

from polylab.errors import PolylabError
from polylab.grading import labs as _labs_package
from polylab.grading.lab import Case, Lab


def lab_names() -> tuple[str, ...]:
    """The names of the labs declared in :mod:`polylab.grading.labs`, sorted naturally (lab2 < lab10)."""
    names = [m.name for m in pkgutil.iter_modules(_labs_package.__path__) if not m.name.startswith("_")]
    return tuple(sorted(names, key=_natural))


def _natural(name: str) -> tuple:
    digits = "".join(ch for ch in name if ch.isdigit())
    return (name.rstrip("0123456789"), int(digits) if digits else -1, name)


def get_lab(name: str) -> Lab:
    """The lab called ``name`` (a user error listing the labs when there is none)."""
    if name not in lab_names():
        raise PolylabError(f"no lab named {name!r}", hint="the labs are " + ", ".join(lab_names()))
    module = importlib.import_module(f"{_labs_package.__name__}.{name}")
    lab = getattr(module, "LAB", None)
    if not isinstance(lab, Lab) or lab.name != name:
        raise PolylabError(f"polylab/grading/labs/{name}.py does not define LAB = Lab({name!r}, ...)",
                           hint="see docs/grading.md")
    return lab


def all_labs() -> tuple[Lab, ...]:
    return tuple(get_lab(n) for n in lab_names())


def load_hidden(directory: str | Path | None, lab: Lab) -> Mapping[str, tuple[Case, ...]]:
    """The hidden cases of ``lab`` from ``directory/<lab>.py`` (empty when there is no such file).

    The file is trusted instructor code. Each key must be a function question of the lab; each value a
    sequence of :class:`Case` (or ``(args, label)`` pairs)."""
    if directory is None:
        return {}
    path = Path(directory) / f"{lab.name}.py"
    if not path.is_file():
        return {}
    try:
        hidden = runpy.run_path(str(path)).get("HIDDEN", {})
    except Exception as exc:  # the instructor's file is broken: say which file and why, grade nothing with it
        raise PolylabError(f"cannot read the hidden cases in {path}: {type(exc).__name__}: {exc}",
                           hint="the file defines HIDDEN = {'q5': [Case((...), 'label'), ...]}") from None
    if not isinstance(hidden, Mapping):
        raise PolylabError(f"{path}: HIDDEN is not a dictionary", hint="HIDDEN = {'q5': [Case(...), ...]}")
    out: dict[str, tuple[Case, ...]] = {}
    for qname, cases in hidden.items():
        q = lab.question(str(qname))
        if not q.is_function:
            raise PolylabError(f"{path}: {lab.name}.{qname} is not a function question, so it has no cases",
                               hint="hidden cases are inputs for questions whose answer is a function")
        items = []
        for c in cases:
            if isinstance(c, Case):
                items.append(c)
            elif isinstance(c, (tuple, list)) and len(c) == 2 and isinstance(c[0], (tuple, list)):
                items.append(Case(tuple(c[0]), str(c[1])))
            else:
                raise PolylabError(f"{path}: {c!r} is not a Case", hint="write Case((arg1, arg2), 'label')")
        out[q.name] = tuple(items)
    return out


__all__ = ["all_labs", "get_lab", "lab_names", "load_hidden"]
