"""The architecture of the package, checked on its source with ``ast`` (no module is imported).

Every module of ``polylab/`` is parsed. The rules (DESIGN.md, CONVENTIONS.md, issue 14):

* **no import cycle** among polylab's modules. An edge ``A -> B`` is any import in ``A`` that loads the
  code of module ``B``: at module level, inside a function (a function-local import hides a cycle, it does
  not break it) or under ``if TYPE_CHECKING``, and ``importlib.import_module("...")`` / ``__import__("...")``
  with a literal name. ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``
  (the package's ``__init__``, whose code defines ``c``); ``import a.b.c`` is an edge to ``a.b.c`` only.
  Python also runs the ``__init__`` of every parent package first, but that is *not* counted as an edge to
  the parent's own code: importing ``polylab.schedule.core`` does not use what ``polylab/schedule/__init__.py``
  defines, and every package ``__init__`` imports its own modules, so counting it would make every package a
  cycle with its modules.
* **layers point toward the model** (DESIGN.md): each module belongs to a layer (its subpackage of
  ``polylab``; the top-level ``errors``, ``render``, ``corpus``, ``version`` and ``processes`` are the base
  every layer may use; ``polylab/__init__.py`` and ``__main__`` are the facade, which nothing inside
  imports), and an import
  goes to the same layer or to a layer of lower :data:`RANK`: the model imports no other layer, the toolchain
  no polyhedral layer, nothing below notebook / cli / grading imports them;
* **a display module is not imported by its core**: ``polylab/<layer>/display.py`` of an engine layer is
  imported, within its layer, only by the layer's ``__init__`` (values reach their renderers through
  :mod:`polylab.render`); the notebook layer is all display, its ``display`` module is its toolkit of views;
* **no "maybe missing" import** of polylab's own modules (an import inside ``try`` ... ``except
  ImportError``) and **no private name** (``_name``) imported from another module;
* **no function over 120 lines** (methods and nested functions included, each counted on its own lines), and
  **no module of the optimizer over 400 lines** (:data:`SMALL_FILE_PACKAGES`, issue 30: files a reader can
  take one at a time);
* **every broad except** (bare ``except:``, ``except Exception``, ``except BaseException``) has a comment on
  its line or the line above saying why;
* **one definition of each consolidated mechanism**: the legality check (only
  ``polylab.schedule.legality.violating_pairs`` orders the pairs of a dependence by their times with
  ``lex_ge_map`` / ``lex_le_map``), the smallest-counterexample search (only
  ``polylab.schedule.legality.small_parameters`` moves parameters into set dimensions to minimise them),
  the point-coordinate helper (only ``polylab.model.islutil.point_coordinates`` calls
  ``get_coordinate_val``), the spec reader (one ``parse_schedule``; only ``polylab.schedule.spec._parts``
  splits on ``";\\n"``), the parameter parser (one ``parse_params``), ``esc`` (one ``esc``, no ``_esc``, no
  other function that only returns ``html.escape(str(x))``), the differential run (only the toolchain reads
  and compares the outputs of runs: ``compare_outputs``, ``compare_arrays``, ``read_outputs`` and
  ``read_array`` are called nowhere else; every layer above goes through
  ``polylab.toolchain.differential_run`` / ``judge``, where the vacuity rules live, and may read a run made
  elsewhere with ``read_run`` to give it to ``judge``);
* **the optimizer decides on values, never on its own words** (issue 30): no ``startswith`` / ``endswith`` and
  no regular expression in :data:`DECIDES_ON_VALUES` (its explanations are written from enums and values,
  :mod:`polylab.schedule.optimize.explain`, and read by nobody);
* **the machine and the environment are read where the program meets the world**: below the command line, the
  notebook layer, the benchmark and the grader (and the toolchain, the process boundary that finds compilers
  and starts children), no module reads ``os.environ`` / ``getenv``, the CPU affinity or count, sysfs or
  ``/proc``, or a ``ContextVar``; they receive a :class:`~polylab.schedule.optimize.Machine` instead (the
  exceptions, with their reasons, are :data:`ENVIRONMENT_READERS`).

Known offenders in code other branches are changing are listed in :data:`ALLOWED`, one entry per finding,
so the list can be emptied as they merge; a message names the module (and function) and the rule broken.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "polylab"
MAX_FUNCTION_LINES = 120
#: packages whose modules stay under MAX_FILE_LINES lines each (issue 30: the optimizer read one file at a time)
SMALL_FILE_PACKAGES = ("polylab.schedule.optimize",)
MAX_FILE_LINES = 400

#: the base modules every layer may use
BASE = {"polylab.errors", "polylab.render", "polylab.corpus", "polylab.version", "polylab.processes"}
#: the facade: nothing inside the package imports it
FACADE = {"polylab", "polylab.__main__"}
#: layer -> rank; an import goes to the same layer or to a lower rank (DESIGN.md, "data flows down")
RANK = {"base": 0, "model": 1, "frontend": 2, "analysis": 2, "reference": 2, "toolchain": 2, "schedule": 3,
        "storage": 4, "codegen": 4, "experiment": 5, "stencil": 6, "bench": 7,
        "notebook": 8, "cli": 8, "grading": 8, "fuzz": 8, "facade": 9}
#: the layers on top, which may use one another (the CLI may run the grader, the grader the notebook layer,
#: the fuzz suite (``polylab/fuzz.py``) drives the notebook and the CLI, the CLI runs it)
TOP = {"notebook", "cli", "grading", "fuzz"}
#: the layers that know polyhedra (the toolchain imports none of them)
POLYHEDRAL = {"model", "frontend", "analysis", "reference", "schedule", "storage", "codegen", "stencil"}

#: the modules of the optimizer, which decide on enums and values only (no text matching)
DECIDES_ON_VALUES = ("polylab.schedule.optimize", "polylab.experiment.tune", "polylab.storage.optimize")
#: the layers that meet the world: they may read the environment and the machine
WORLD = {"notebook", "cli", "bench", "grading", "fuzz", "facade", "toolchain"}
#: modules below those layers that read the environment, and why
ENVIRONMENT_READERS = {
    "polylab.model.budget": "the bounds a user sets for isl (POLYLAB_MAX_OPERATIONS, POLYLAB_MAX_SECONDS), read "
                            "at each outermost bounded call so that a notebook can change them between cells",
}

#: Known offenders, in code that other branches are changing while this test was written (the verification,
#: GPU and front-end work of issue 14). Each entry is the exact message the test would report; the lead
#: deletes them as those branches merge, and the list must end up empty.
ALLOWED: set[str] = set()

#: reading and comparing the outputs of runs: the toolchain's differential run only (issue 30, item 2)
#: (``read_run`` is not among them: it gives the ``Outputs`` that ``judge`` takes, of a run made elsewhere,
#: e.g. in a sandbox)
OUTPUT_READERS = ("compare_outputs", "compare_arrays", "read_outputs", "read_array")


# -- reading the package ---------------------------------------------------------------------------------
@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    lines: list[str]
    is_package: bool
    imports: list[tuple[str, int, str]] = field(default_factory=list)   # (target, line, how)


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


@cache
def modules() -> dict[str, Module]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        name, is_package = _module_name(path)
        text = path.read_text()
        out[name] = Module(name, path, ast.parse(text, filename=str(path)), text.splitlines(), is_package)
    for m in out.values():
        m.imports = list(_imports(m, out))
    return out


def _resolve_from(m: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = m.name if m.is_package else m.name.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(m: Module, known: dict[str, Module]):
    """``(target module, line, text)`` for every import of a polylab module in ``m`` (see the module text)."""
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(m, node)
            if not base.startswith("polylab"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    yield sub, node.lineno, f"from {base} import {alias.name}"
                elif base in known:
                    yield base, node.lineno, f"from {base} import {alias.name}"
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            target = node.args[0].value
            if name in ("import_module", "__import__") and isinstance(target, str) and target in known:
                yield target, node.lineno, f"{name}({target!r})"


def layer(name: str) -> str:
    if name in FACADE:
        return "facade"
    if name in BASE:
        return "base"
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "facade"


def functions(m: Module):
    """``(qualified name, node)`` of every function of ``m``, methods and nested functions included."""
    def walk(node: ast.AST, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}.{child.name}"
                yield q, child
                yield from walk(child, q)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}.{child.name}")
            elif isinstance(child, ast.Lambda):
                yield f"{prefix}.<lambda>", child
                yield from walk(child, f"{prefix}.<lambda>")
            else:
                yield from walk(child, prefix)
    yield from walk(m.tree, m.name)


def _calls(node: ast.AST, attr: str) -> list[int]:
    """The lines in ``node`` (not in nested functions) that call ``.attr(...)``."""
    out = []
    for sub in _own_nodes(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == attr:
            out.append(sub.lineno)
    return out


def _named_calls(node: ast.AST, name: str) -> list[int]:
    """The lines in ``node`` (not in nested functions) that call ``name(...)`` by its bare name."""
    return [sub.lineno for sub in _own_nodes(node)
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == name]


def _own_nodes(node: ast.AST):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield child
        yield from _own_nodes(child)


def _report(findings: list[str]) -> list[str]:
    """The findings that are not known offenders (an allowed entry with ``{}`` matches any line)."""
    out = []
    for f in findings:
        if f in ALLOWED or any("{}" in a and f.startswith(a.split("{}")[0]) for a in ALLOWED):
            continue
        out.append(f)
    return out


# -- the rules -----------------------------------------------------------------------------------------
def import_cycles() -> list[str]:
    mods = modules()
    graph: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)
    for m in mods.values():
        for target, line, how in m.imports:
            if target != m.name:
                graph[m.name].setdefault(target, (line, how))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    comps: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            k = stack.index(v)
            comps.append(stack[k:])
            del stack[k:]

    for name in sorted(mods):
        if name not in index:
            visit(name)
    out = []
    for comp in comps:
        if len(comp) < 2:
            continue
        members = set(comp)
        edges = [f"{a} -> {b} (line {graph[a][b][0]}: {graph[a][b][1]})"
                 for a in sorted(members) for b in sorted(graph[a]) if b in members]
        out.append(f"import cycle among {', '.join(sorted(members))}: " + "; ".join(edges))
    return out


def layer_violations() -> list[str]:
    out = []
    for m in modules().values():
        src = layer(m.name)
        for target, line, how in m.imports:
            dst = layer(target)
            where = f"{m.name} (line {line}: {how})"
            if target in FACADE and m.name != "polylab.__main__":
                out.append(f"{where} imports the facade polylab/__init__.py: import the module that defines it")
            elif src == "base" and dst != "base":
                out.append(f"{where}: a base module imports the {dst} layer")
            elif src == "toolchain" and dst in POLYHEDRAL:
                out.append(f"{where}: the toolchain imports the polyhedral layer {dst}")
            elif dst in TOP and src not in TOP | {"facade"}:
                out.append(f"{where}: the {src} layer imports the {dst} layer, which sits on top of it")
            elif src != dst and dst in RANK and src in RANK and RANK[dst] >= RANK[src] \
                    and not (src in TOP and dst in TOP):
                out.append(f"{where}: the {src} layer imports the {dst} layer, which is not below it")
            if target.endswith(".display") and target.rpartition(".")[0] == m.name.rpartition(".")[0] \
                    and not m.is_package and target != m.name and src != "notebook":
                out.append(f"{where}: the display module {target} is imported by its core")
    return out


def function_lengths() -> list[str]:
    out = []
    for m in modules().values():
        for q, node in functions(m):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES and not isinstance(node, ast.Lambda):
                out.append(f"{q} has {n} lines (line {node.lineno}): split it below {MAX_FUNCTION_LINES}")
    return out


def file_lengths() -> list[str]:
    return [f"{m.name} has {len(m.lines)} lines: split it below {MAX_FILE_LINES}" for m in modules().values()
            if m.name.startswith(SMALL_FILE_PACKAGES) and len(m.lines) > MAX_FILE_LINES]


def _broad(handler: ast.ExceptHandler) -> bool:
    t = handler.type
    names = [t] if t is None or not isinstance(t, ast.Tuple) else list(t.elts)
    return any(n is None or (isinstance(n, ast.Name) and n.id in ("Exception", "BaseException")) for n in names)


def broad_excepts() -> list[str]:
    out = []
    for m in modules().values():
        owner = {}
        for q, node in functions(m):
            for sub in _own_nodes(node):
                owner[id(sub)] = q
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ExceptHandler) and _broad(node):
                here = m.lines[node.lineno - 1]
                above = m.lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                if "#" not in here and not above.startswith("#"):
                    out.append(f"{owner.get(id(node), m.name)} has a broad except without a comment on its line "
                               f"or the line above (line {node.lineno})")
    return out


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    t = handler.type
    names = [] if t is None else (list(t.elts) if isinstance(t, ast.Tuple) else [t])
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


def import_hygiene() -> list[str]:
    out = []
    mods = modules()
    for m in mods.values():
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
                for sub in node.body:
                    for imp in ast.walk(sub):
                        if isinstance(imp, ast.ImportFrom) and _resolve_from(m, imp).startswith("polylab") \
                                or isinstance(imp, ast.Import) and any(a.name.startswith("polylab")
                                                                       for a in imp.names):
                            out.append(f"{m.name} treats a polylab module as maybe missing (line {imp.lineno})")
            if isinstance(node, ast.ImportFrom):
                base = _resolve_from(m, node)
                if base.startswith("polylab") and base != m.name:
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            out.append(f"{m.name} imports the private name {alias.name} from {base}")
    return out


#: the consolidated mechanisms: (what, the one place allowed, how a copy is recognised)
ONE_PLACE = {
    "get_coordinate_val": ("polylab.model.islutil.point_coordinates",
                           "calls get_coordinate_val: use polylab.model.islutil.point_coordinates"),
    "lex_ge_map": ("polylab.schedule.legality.violating_pairs",
                   "compares the times of dependent pairs (lex_ge_map): use polylab.schedule.check"),
    "lex_le_map": ("polylab.schedule.legality.violating_pairs",
                   "compares the times of dependent pairs (lex_le_map): use polylab.schedule.check"),
}


def _delegates(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function whose only statement (after its docstring) returns a call of the function of the same
    name: a door to the definition made elsewhere, not a definition (``polylab.notebook.backend.parse_schedule``
    returns ``polylab.schedule.parse_schedule(...)``)."""
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) \
        and isinstance(node.body[0].value, ast.Constant) else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return False
    f = body[0].value.func
    callee = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return callee.lstrip("_") == node.name.lstrip("_")


def mechanism_copies() -> list[str]:
    out = []
    defs: dict[str, list[str]] = defaultdict(list)
    for m in modules().values():
        for q, node in functions(m):
            if isinstance(node, ast.Lambda):
                body_calls = [sub for sub in ast.walk(node.body) if isinstance(sub, ast.Call)]
                for attr, (allowed, message) in ONE_PLACE.items():
                    if any(isinstance(c.func, ast.Attribute) and c.func.attr == attr for c in body_calls) \
                            and q != allowed:
                        out.append(f"{q} {message}")
                continue
            if not _delegates(node):
                defs[node.name].append(q)
            for attr, (allowed, message) in ONE_PLACE.items():
                if _calls(node, attr) and q != allowed:
                    out.append(f"{q} {message}")
            moves_params = any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                               and sub.func.attr == "move_dims" and len(sub.args) >= 3
                               and isinstance(sub.args[2], ast.Attribute) and sub.args[2].attr == "param"
                               for sub in _own_nodes(node))
            if moves_params and (_calls(node, "lexmin") or _calls(node, "apply")) \
                    and q != "polylab.schedule.legality.small_parameters":
                out.append(f"{q} searches small parameter values itself: use polylab.schedule.smallest_example")
            reads = [line for attr in OUTPUT_READERS for line in _calls(node, attr) + _named_calls(node, attr)]
            if reads and layer(m.name) != "toolchain":
                out.append(f"{q} reads or compares the outputs of runs itself (line {min(reads)}): use "
                           "polylab.toolchain.differential_run / judge")
            splits = any(isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.In)
                         and isinstance(sub.comparators[0], ast.Constant) and sub.comparators[0].value == ";\n"
                         for sub in _own_nodes(node))
            if splits and q != "polylab.schedule.spec._parts":
                out.append(f"{q} splits a schedule spec itself: use polylab.schedule.split_spec / parse_schedule")
            ret = node.body[-1] if node.body else None
            if node.name not in ("esc",) and isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call) \
                    and ast.unparse(ret.value.func) == "html.escape" and len(node.body) <= 2:
                out.append(f"{q} is another esc: use polylab.render.esc")
    for name, what in (("esc", "esc"), ("_esc", "esc"), ("parse_params", "the parameter parser"),
                       ("parse_schedule", "the spec reader"), ("small_parameters", "the counterexample search"),
                       ("smallest_example", "the counterexample search"), ("violating_pairs", "the legality check"),
                       ("point_coordinates", "the point-coordinate helper")):
        want = 0 if name == "_esc" else 1
        if len(defs[name]) != want:
            out.append(f"{what}: {len(defs[name])} definitions of {name} ({', '.join(defs[name]) or 'none'}), "
                       f"expected {want}")
    return out


#: the names of the targets whose code needs more than a C compiler (issue 30: targets are objects)
TARGET_NAMES = frozenset({"openmp", "cuda", "mlir"})


def _names_target(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "target" or name.endswith("_target")


def _target_literals(node: ast.AST) -> bool:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return any(isinstance(x, ast.Constant) and x.value in TARGET_NAMES for x in items)


def target_dispatch() -> list[str]:
    """A target is a :class:`polylab.codegen.Target` that knows how to generate, build and run its code:
    no module outside ``polylab.codegen.targets`` compares a target with the name of one."""
    out = []
    for m in modules().values():
        if m.name == "polylab.codegen.targets":
            continue
        for q, node in functions(m):
            for sub in _own_nodes(node):
                if isinstance(sub, ast.Compare) and len(sub.ops) == 1:
                    left, right = sub.left, sub.comparators[0]
                    if (_names_target(left) and _target_literals(right)) or \
                            (_names_target(right) and _target_literals(left)):
                        out.append(f"{q} compares a target with a name (line {sub.lineno}): ask the Target "
                                   "(polylab.codegen.targets) instead")
    return out


def text_decisions() -> list[str]:
    """``startswith`` / ``endswith`` calls and ``re`` matching in the optimizer's modules."""
    out = []
    for m in modules().values():
        if not m.name.startswith(DECIDES_ON_VALUES):
            continue
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            f = node.func
            if f.attr in ("startswith", "endswith") or (isinstance(f.value, ast.Name) and f.value.id == "re"):
                out.append(f"{m.name} decides on text with {f.attr} (line {node.lineno}): use the enums and values "
                           f"of polylab.schedule.optimize")
    return out


#: what reading the machine or the environment looks like
_AMBIENT_ATTRS = {"environ", "getenv", "sched_getaffinity", "cpu_count", "ContextVar"}


def ambient_reads() -> list[str]:
    """Reads of the environment or the machine below the layers that meet the world."""
    out = []
    for m in modules().values():
        if layer(m.name) in WORLD or m.name in ENVIRONMENT_READERS:
            continue
        for node in ast.walk(m.tree):
            name = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name)
                    else None)
            if name in _AMBIENT_ATTRS:
                out.append(f"{m.name} reads the machine or the environment ({name}, line {node.lineno}): take a "
                           f"Machine or a parameter from the layer that meets the world")
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
                first = node.args[0]
                text = first.value if isinstance(first, ast.Constant) else ast.unparse(first)
                if isinstance(text, str) and text.lstrip("f'\"").startswith(("/sys/", "/proc")):
                    out.append(f"{m.name} reads {text} (line {node.lineno}): the machine is read by "
                               f"polylab.bench.machine")
    return out


RULES = [import_cycles, layer_violations, function_lengths, file_lengths, broad_excepts, import_hygiene,
         mechanism_copies, target_dispatch, text_decisions, ambient_reads]


@pytest.mark.parametrize("rule", RULES, ids=lambda f: f.__name__)
def test_architecture(rule):
    found = _report(rule())
    assert not found, f"{rule.__name__}:\n  " + "\n  ".join(found)


def test_the_allow_list_names_only_real_findings():
    """Every entry of ALLOWED still matches a finding (a fixed offender is removed from the list)."""
    findings = [f for rule in RULES for f in rule()]
    stale = [a for a in ALLOWED if not any(f == a or ("{}" in a and f.startswith(a.split("{}")[0]))
                                           for f in findings)]
    assert not stale, "remove these entries from ALLOWED, they no longer occur:\n  " + "\n  ".join(stale)


def test_the_rules_catch_what_they_describe(tmp_path, monkeypatch):
    """Each rule finds a planted offence (so a green run means something)."""
    pkg = tmp_path / "polylab"
    (pkg / "model").mkdir(parents=True)
    (pkg / "schedule").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("")
    (pkg / "model" / "__init__.py").write_text("")
    (pkg / "model" / "scop.py").write_text("from polylab.schedule.core import x\n")
    (pkg / "schedule" / "__init__.py").write_text("")
    (pkg / "schedule" / "display.py").write_text("from polylab.schedule.core import x\n")
    (pkg / "schedule" / "core.py").write_text(
        "import html\n\n\ndef f():\n    from polylab.schedule import display\n    try:\n        pass\n"
        "    except Exception:\n        pass\n\n\ndef g(p):\n    return p.get_coordinate_val(0, 0)\n\n\n"
        "def quote(x):\n    return html.escape(str(x))\n\n\n"
        "def same(tc, a, b):\n    return tc.compare_outputs(a, b).equal\n\n\n"
        "def h():\n" + "    x = 1\n" * 130 + "\n\n"
        "try:\n    import polylab.model.scop\nexcept ImportError:\n    pass\n"
        "from polylab.model.scop import _hidden\n\n\n"
        "def threads():\n    import os\n    return int(os.environ.get('OMP_NUM_THREADS', '1'))\n\n\n"
        "def l2():\n    return open('/sys/devices/system/cpu/cpu0/cache/index2/size').read()\n")
    (pkg / "schedule" / "optimize").mkdir()
    (pkg / "schedule" / "optimize" / "__init__.py").write_text(
        "def kept(label):\n    return label.startswith('fusion kept')\n" + "\n" * 400)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", pkg)
    modules.cache_clear()
    try:
        assert any("polylab.schedule.core -> polylab.schedule.display (line 5" in f for f in import_cycles())
        lv = layer_violations()
        assert any("the model layer imports the schedule layer" in f for f in lv)
        assert any("display module polylab.schedule.display is imported by its core" in f for f in lv)
        assert any(f.startswith("polylab.schedule.core.h has 13") for f in function_lengths())
        assert any(f.startswith("polylab.schedule.core.f has a broad except") for f in broad_excepts())
        hyg = import_hygiene()
        assert any("maybe missing" in f for f in hyg) and any("private name _hidden" in f for f in hyg)
        copies = mechanism_copies()
        assert any(f.startswith("polylab.schedule.core.g calls get_coordinate_val") for f in copies)
        assert any(f.startswith("polylab.schedule.core.quote is another esc") for f in copies)
        assert any(f.startswith("polylab.schedule.core.same reads or compares the outputs of runs itself")
                   for f in copies)
        assert any(f.startswith("polylab.schedule.optimize decides on text with startswith") for f in text_decisions())
        assert any(f.startswith("polylab.schedule.optimize has 402 lines") for f in file_lengths())
        ambient = ambient_reads()
        assert any(f.startswith("polylab.schedule.core reads the machine or the environment (environ") for f in ambient)
        assert any(f.startswith("polylab.schedule.core reads /sys/devices") for f in ambient)
    finally:
        modules.cache_clear()
