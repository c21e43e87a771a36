"""Where labs and hidden cases come from.

A lab is a module ``polylab/grading/labs/<name>.py`` that defines ``LAB``, a :class:`~polylab.grading.lab.Lab`
whose ``name`` is the module's name. :func:`lab_names` lists them; :func:`get_lab` imports one.

**Public and hidden cases.** A question whose answer is a function declares its *public* cases in the lab
module (``Question(..., cases=(Case(args, label), ...))``): they ship in the package, the notebook's
``check(...)`` runs them (and says ``public cases: 3/3; the grader also runs hidden cases``), and the grader
runs them too. Its *hidden* cases live only in the instructor's files, never in the package, ``labs/``,
``solutions/`` or the Binder image: a folder (``instructor/hidden/`` in this repository, excluded from the
student release by ``.dockerignore`` and ``binder/postBuild``; a private repository in a real course) with
one file per lab, ``<lab>.py``:

    from polylab.grading import Case

    HIDDEN = {"q5": [Case(([6, 9, 12], 4), "three coefficients, gcd 3 does not divide 4"), ...]}

Only the batch grader reads them (``polylab grade --hidden DIR``, :func:`load_hidden`), and it reads the file
as **data**: the text is parsed (``ast``), never run, so the file may hold only that assignment (a docstring
and the import of ``Case`` are allowed), Python literals (numbers, text, tuples, lists, sets, dictionaries,
``None``, booleans) and ``Case(args, "label")`` calls (or ``(args, "label")`` pairs). The inputs of hidden
cases reach the student's kernel only at the end of its run, when the function answer is called on them; the
expected answers are computed by the lab's reference in the grader and never enter the sandbox. A failing
hidden case is shown by its label only.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
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
    """The hidden cases of ``lab`` from ``directory/<lab>.py`` (empty when there is no such file), read as
    data (see the module text). Each key must be a function question of the lab; each value a sequence of
    ``Case(args, label)`` or ``(args, label)``."""
    if directory is None:
        return {}
    path = Path(directory) / f"{lab.name}.py"
    if not path.is_file():
        return {}
    try:
        hidden = _hidden_literal(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError) as exc:
        raise PolylabError(f"cannot read the hidden cases in {path}: {exc}") from None
    if not isinstance(hidden, dict):
        raise PolylabError(f"{path}: HIDDEN is not a dictionary", hint="HIDDEN = {'q5': [Case(...), ...]}")
    out: dict[str, tuple[Case, ...]] = {}
    for qname, cases in hidden.items():
        q = lab.question(str(qname))
        if not q.is_function:
            raise PolylabError(f"{path}: {lab.name}.{qname} is not a function question, so it has no cases",
                               hint="hidden cases are inputs for questions whose answer is a function")
        items = []
        for c in cases if isinstance(cases, (list, tuple)) else [cases]:
            if isinstance(c, Case):
                items.append(c)
            elif isinstance(c, (tuple, list)) and len(c) == 2 and isinstance(c[0], (tuple, list)):
                items.append(Case(tuple(c[0]), str(c[1])))
            else:
                raise PolylabError(f"{path}: {c!r} is not a Case", hint="write Case((arg1, arg2), 'label')")
        out[q.name] = tuple(items)
    return out


_HIDDEN_HINT = "the file holds HIDDEN = {'q5': [Case((arg1, arg2), 'label'), ...]} and nothing else"


def _hidden_literal(text: str, path: Path) -> object:
    """The value of ``HIDDEN = ...`` in ``text``, evaluated as a literal in which ``Case(args, label)`` calls
    are allowed; nothing in the file runs."""
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise PolylabError(f"{path}, line {exc.lineno}: {exc.msg}", hint=_HIDDEN_HINT) from None
    value = None
    for k, node in enumerate(tree.body):
        if k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # from polylab.grading import Case: not run, only allowed
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "HIDDEN" and value is None):
            value = node.value
            continue
        raise PolylabError(f"{path}, line {node.lineno}: only HIDDEN = {{...}} is read here (the file is "
                           "data, not a program)", hint=_HIDDEN_HINT)
    if value is None:
        raise PolylabError(f"{path} defines no HIDDEN", hint=_HIDDEN_HINT)
    try:
        return _literal(value)
    except ValueError as exc:
        raise PolylabError(f"{path}: {exc}", hint=_HIDDEN_HINT) from None


def _literal(node: ast.AST) -> object:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Case"
            and not node.keywords and 1 <= len(node.args) <= 2):
        args = _literal(node.args[0])
        if not isinstance(args, (tuple, list)):
            raise ValueError(f"line {node.lineno}: the first argument of Case is the tuple of arguments")
        return Case(tuple(args), str(_literal(node.args[1])) if len(node.args) == 2 else "")
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_literal(e) for e in node.elts]
        return {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError(f"line {node.lineno}: ** is not a literal")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"line {getattr(node, 'lineno', '?')}: {ast.unparse(node)[:60]} is not a literal "
                         "(the file is read as data)") from None


__all__ = ["all_labs", "get_lab", "lab_names", "load_hidden"]
