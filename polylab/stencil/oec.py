"""A reader for the Open Earth compiler's 2020 syntax of the stencil dialect, giving today's syntax.

The 2020 syntax: ``func @f(...)``, ``addf``, ``stencil.cast %arg([lb] : [ub])`` with sized field types
(``!stencil.field<72x72x72xf64>``), ``stencil.store %t to %f([lb] : [ub])``, ``stencil.store_result %v :
(f64) -> ...``, ``stencil.apply (...) -> T { ... } to ([lb] : [ub])``, ``stencil.return unroll [1, 2, 1]``,
``0`` for a dimension a field does not have. :func:`upgrade` rewrites it line for line into today's syntax
(bounds in the types, ``stencil.access %a[_, 1, _]`` for a field without some dimensions), so every later
diagnostic names the user's line. Operations xDSL's dialect cannot express (``stencil.depend``, sequential
applies ``stencil.apply seq(...)``) are refused naming the operation and its line.
"""

from __future__ import annotations

import re

from polylab.errors import SourceLocation
from polylab.stencil.errors import StencilSyntaxError, UnsupportedStencilError

#: 2020 spelling -> today's dialect-qualified name (operations of the arith and math dialects)
RENAMED = {**{op: f"arith.{op}" for op in (
    "addf", "subf", "mulf", "divf", "negf", "remf", "addi", "subi", "muli", "divsi", "remsi", "constant",
    "select", "index_cast", "sitofp", "fptosi", "uitofp", "fptoui", "extf", "truncf", "andi", "ori", "xori")},
    "maxf": "arith.maximumf", "minf": "arith.minimumf",
    **{op: f"math.{op}" for op in ("sqrt", "absf", "exp", "log", "sin", "cos", "tanh", "powf", "ceil", "floor")}}
#: operations of the 2020 dialect that xDSL's dialect has no counterpart for, and why
REFUSED = {"stencil.depend": "a sequential dependence on a neighbour's result (tridiagonal solvers)",
           "stencil.apply seq": "a sequential apply along one dimension",
           "stencil.assert": "the 2020 bounds assertion (give the field its bounds with stencil.cast)"}

_NUM = r"-?\d+"
_LIST = rf"\[\s*{_NUM}(?:\s*,\s*{_NUM})*\s*\]"
_BOX = rf"\(\s*({_LIST})\s*:\s*({_LIST})\s*\)"
_TYPE = re.compile(r"!stencil\.(field|temp)<((?:[0-9?]+x)+)(\w+)>")


def is_2020(text: str) -> bool:
    """Whether ``text`` is written in the 2020 syntax (a ``func @`` that is not ``func.func``, or 2020-only
    spellings of the stencil operations)."""
    return bool(re.search(r"^\s*func\s+@|stencil\.store_result\s+%\S+\s*:\s*\(|\)\s*->\s*f\d+\s*$"
                          r"|stencil\.(cast|store)\s+%[\w#]+\s*\(\s*\[", text, re.M))


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(_NUM, text)]


class _Upgrader:
    """One rewrite: the bounds of each field value (from its ``stencil.cast``), the type of each temp."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.bounds: dict[str, tuple[list[int], list[int]]] = {}
        self.apply_bounds = self._closing_bounds()
        self.temp_types: dict[str, str] = {}

    def error(self, n: int, message: str, hint: str | None = None, column: int | None = None,
              kind: type = StencilSyntaxError) -> Exception:
        line = self.lines[n]
        col = column if column is not None else len(line) - len(line.lstrip()) + 1
        return kind(f"{message} (line {n + 1})", location=SourceLocation(n + 1, col, line.strip(), line), hint=hint)

    def _closing_bounds(self) -> dict[int, tuple[list[int], list[int]]]:
        """Header line of each apply -> the bounds of its closing ``} to ([lb] : [ub])``."""
        stack: list[int] = []
        out = {}
        for n, line in enumerate(self.lines):
            code = line.split("//")[0].strip()
            if code.startswith("}") and stack and (m := re.search(rf"to\s*{_BOX}", code)):
                out[stack.pop()] = (_ints(m.group(1)), _ints(m.group(2)))
            elif code.startswith("}") and stack:
                stack.pop()
            if code.endswith("{"):
                stack.append(n)
        return out

    # -- types ------------------------------------------------------------------------------------------------
    def type_text(self, kind: str, shape: str, element: str, bounds=None) -> str:
        dims = shape.rstrip("x").split("x")
        present = [d != "0" for d in dims]
        if bounds is None or kind == "field" and all(d == "?" for d, p in zip(dims, present) if p) \
                or kind == "temp" and len(dims) != len(bounds[0]):
            kept = ["?" for p in present if p]
        else:
            kept = [f"[{lo},{hi}]" for lo, hi, p in zip(*bounds, present) if p]
        return f"!stencil.{kind}<{'x'.join(kept)}x{element}>"

    def types(self, line: str, bounds=None, kind: str = "field") -> str:
        """Every stencil type of ``line`` in today's spelling (sized fields, or temps, get ``bounds``)."""
        return _TYPE.sub(lambda m: self.type_text(m.group(1), m.group(2), m.group(3),
                                                  bounds if m.group(1) == kind else None), line)

    # -- lines ------------------------------------------------------------------------------------------------
    def run(self) -> str:
        out = [self.line(n, line) for n, line in enumerate(self.lines)]
        return "\n".join(out)

    def line(self, n: int, line: str) -> str:
        code, sep, comment = line.partition("//")
        body = code.strip()
        if not body:
            return line
        for op, why in REFUSED.items():
            if re.search(rf"(^|[\s=]){re.escape(op)}\b", body):
                raise self.error(n, f"{op} cannot be read: xDSL's stencil dialect has no {why}",
                                 hint="polylab reads the programs xDSL's dialect can express",
                                 column=line.index(op) + 1, kind=UnsupportedStencilError)
        indent = code[: len(code) - len(code.lstrip())]
        return indent + self.rewrite(n, body) + ("  //" + comment if sep else "")

    def rewrite(self, n: int, s: str) -> str:
        if s == "module {":
            return "builtin.module {"
        if s.startswith("}"):
            return re.sub(r"\}\s*to\s*" + _BOX, "}", s)
        if s == "return":
            return "func.return"
        if re.match(r"func\s+@", s):
            return "func.func " + self.types(s[4:].lstrip())
        m = re.match(r"(%\w+) = stencil\.cast (%\w+)\s*" + _BOX + r"\s*:\s*\((.*)\)\s*->\s*(.*)$", s)
        if m:
            bounds = (_ints(m.group(3)), _ints(m.group(4)))
            self.bounds[m.group(1)] = bounds
            return f"{m.group(1)} = stencil.cast {m.group(2)} : {self.types(m.group(5))} -> " \
                   f"{self.types(m.group(6), bounds)}"
        m = re.match(r"(%\w+) = stencil\.load (%\w+)\s*(" + _BOX + r")?\s*:\s*\((.*)\)\s*->\s*(.*)$", s)
        if m:
            field = self.field_bounds(n, m.group(2))
            result = self.types(m.group(7), (_ints(m.group(4)), _ints(m.group(5))) if m.group(3) else None, "temp")
            return f"{m.group(1)} = stencil.load {m.group(2)} : {self.types(m.group(6), field)} -> {result}"
        m = re.match(r"stencil\.store (%[\w#]+) to (%\w+)\s*" + _BOX + r"\s*:\s*(.*) to (.*)$", s)
        if m:
            field = self.field_bounds(n, m.group(2))
            lb, ub = _ints(m.group(3)), _ints(m.group(4))
            temp = self.temp_types.get(m.group(1), self.types(m.group(5)))
            return (f"stencil.store {m.group(1)} to {m.group(2)}(<[{', '.join(map(str, lb))}], "
                    f"[{', '.join(map(str, ub))}]>) : {temp} to {self.types(m.group(6), field)}")
        if "stencil.apply" in s:
            return self.apply(n, s)
        m = re.match(r"(%\w+) = stencil\.access (%\w+)\s*(" + _LIST + r")\s*:\s*\((.*)\)\s*->\s*(\w+)$", s)
        if m:
            offset = _ints(m.group(3))
            t = _TYPE.search(m.group(4))
            present = [d != "0" for d in t.group(2).rstrip("x").split("x")] if t else [True] * len(offset)
            text = ", ".join(str(o) if p else "_" for o, p in zip(offset, present))
            return f"{m.group(1)} = stencil.access {m.group(2)}[{text}] : " \
                   f"{self.temp_types.get(m.group(2), self.types(m.group(4)))}"
        m = re.match(r"(%\w+) = stencil\.store_result\s*(%\w+)?\s*:\s*\((.*)\)\s*->\s*(.*)$", s)
        if m:
            return f"{m.group(1)} = stencil.store_result {m.group(2) or ''} : {m.group(4)}".replace("  ", " ")
        m = re.match(r"stencil\.return\s+unroll\s*(" + _LIST + r")\s*(.*?)\s*:\s*(.*)$", s)
        if m:
            return f"stencil.return {m.group(2)} unroll <{m.group(1)}> : {m.group(3)}"
        m = re.match(r"(%\w+) = stencil\.index (\d+) (" + _LIST + r")\s*:\s*index$", s)
        if m:
            return f"{m.group(1)} = stencil.index {m.group(2)} <{m.group(3)}>"
        m = re.match(r"(%\w+) = stencil\.dyn_access (%\w+)\s*\((.*?)\)\s*in\s*(" + _LIST + r")\s*:\s*(" + _LIST +
                     r")\s*:\s*\((.*)\)\s*->\s*(\w+)$", s)
        if m:
            return (f"{m.group(1)} = stencil.dyn_access {m.group(2)}[{m.group(3)}] in <{m.group(4)}> : "
                    f"<{m.group(5)}> : {self.types(m.group(6))}")
        m = re.match(r"((?:%[\w#:]+(?:, )?)+ = )?(cmpf|cmpi) \"(\w+)\",\s*(.*)$", s)
        if m:
            return f"{m.group(1) or ''}arith.{m.group(2)} {m.group(3)}, {m.group(4)}"
        m = re.match(r"((?:%[\w#:]+ = )?)([a-z_]+)\b(.*)$", s)
        if m and m.group(2) in RENAMED:
            return f"{m.group(1)}{RENAMED[m.group(2)]}{self.types(m.group(3))}"
        return self.types(s)

    def field_bounds(self, n: int, value: str) -> tuple[list[int], list[int]]:
        if value not in self.bounds:
            raise self.error(n, f"the field {value} has no bounds",
                             hint=f"give it bounds first: {value} = stencil.cast %arg([lb] : [ub]) : ...")
        return self.bounds[value]

    def apply(self, n: int, s: str) -> str:
        m = re.match(r"((?:%[\w]+(?::\d+)?) = )?stencil\.apply\s*(\((.*?)\))?\s*->\s*(.*?)\s*\{$", s)
        if not m:
            raise self.error(n, "a stencil.apply that cannot be read",
                             hint="write stencil.apply (%a = %t : T, ...) -> (T, ...) {")
        results = [t.strip() for t in _split_types(m.group(4).strip().removeprefix("(").removesuffix(")"))]
        results = [self.types(t, self.apply_bounds.get(n), "temp") for t in results]
        if m.group(1):
            name, _, count = m.group(1).rstrip(" =").partition(":")
            names = [f"{name}#{k}" for k in range(int(count))] if count else [name]
            self.temp_types.update(zip(names, results))
        args = []
        for arg in _split_types(m.group(3) or ""):
            a = re.match(r"\s*(%\w+)\s*=\s*(%[\w#]+)\s*:\s*(.*)$", arg)
            if a:
                t = self.temp_types.get(a.group(2), self.types(a.group(3).strip()))
                self.temp_types[a.group(1)] = t
                args.append(f"{a.group(1)} = {a.group(2)} : {t}")
            else:
                args.append(self.types(arg.strip()))
        return f"{m.group(1) or ''}stencil.apply({', '.join(args)}) -> ({', '.join(results)}) {{"


def _split_types(text: str) -> list[str]:
    """Comma-separated types (commas inside ``<...>`` belong to a type)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur.strip() else out


def upgrade(text: str) -> str:
    """``text`` (the Open Earth 2020 syntax) in today's syntax, line for line (see the module)."""
    return _Upgrader(text).run()
