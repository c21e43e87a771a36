"""A stencil program: an xDSL module holding one ``func.func`` of the stencil dialect, as an immutable value,
read by :func:`parse` (today's MLIR syntax through xDSL's parser and verifier, or Open Earth's 2020 syntax
through :mod:`polylab.stencil.oec` first; every mistake a located error: line, column, caret, hint), or
shipped with polylab (:func:`example`: ``polylab/examples/stencil``).

The dialect (types, operations, verifiers, parser, printer) is xDSL's (:mod:`xdsl.dialects.stencil`). A
:class:`Program` never changes its module (passes run on clones); it keeps the text the user wrote and where
each operation starts in it, so every refusal names its line. Two programs are equal when xDSL prints them
the same.

A box is a pair ``(lb, ub)`` of integer tuples: the half-open set ``{ x : lb <= x < ub }``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from pathlib import Path
from typing import Iterator, Mapping

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.stencil import AccessOp, ApplyOp, CastOp, LoadOp, StencilBoundsAttr, StencilType, StoreOp
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from polylab import render
from polylab.corpus import example_path
from polylab.errors import SourceLocation
from polylab.stencil import oec
from polylab.stencil.errors import StencilError, StencilSyntaxError, failing_op, from_xdsl

Box = tuple[tuple[int, ...], tuple[int, ...]]


def context() -> Context:
    """An xDSL context with every dialect xDSL ships (stencil, arith, math, scf, func, memref, gpu, mpi...)."""
    ctx = Context(allow_unregistered=False)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


class _LineParser(Parser):
    """xDSL's parser, recording where each operation starts (the start offset of its first token)."""

    def __init__(self, ctx: Context, text: str) -> None:
        super().__init__(ctx, text)
        self.starts: dict[int, int] = {}

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        self.starts[id(op)] = start
        return op


def parse_module(text: str) -> tuple[ModuleOp, dict[int, int]]:
    """xDSL's module of ``text`` and the start offset of each operation (by ``id``); xDSL's exceptions
    pass through (:func:`polylab.stencil.errors.from_xdsl` turns them into located errors)."""
    parser = _LineParser(context(), text)
    return parser.parse_module(), parser.starts


def print_module(op: Operation) -> str:
    """xDSL's text of ``op`` (today's MLIR syntax)."""
    return str(op).rstrip() + "\n"


def box_of(t: object) -> Box | None:
    """The box of a stencil field or temp type, or of bounds (None while they are ``?``)."""
    t = t.bounds if isinstance(t, StencilType) else t
    return (tuple(t.lb), tuple(t.ub)) if isinstance(t, StencilBoundsAttr) else None


def name_of(value: SSAValue) -> str:
    """The value's name in the text (``%arg0``, ``%5``), or ``%?`` when it has none."""
    return "%" + (value.name_hint or "?")


@dataclass(frozen=True, eq=False)
class Program(render.Rendered):
    """A verified xDSL module with one stencil function, the text it was read from and where each operation
    starts in it."""

    module: ModuleOp
    source: str = field(default="", repr=False)
    filename: str | None = None
    starts: Mapping[int, int] = field(default_factory=dict, repr=False)

    @cached_property
    def text(self) -> str:
        """The program in today's syntax, as xDSL prints it."""
        return print_module(self.module)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Program) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    # -- the function and its operations ---------------------------------------------------------------------
    @cached_property
    def func(self) -> FuncOp:
        funcs = [op for op in self.module.walk() if isinstance(op, FuncOp) and not op.is_declaration]
        if len(funcs) != 1:
            raise StencilError(f"a stencil program is one function; this module has {len(funcs)}",
                               hint="write one func.func @name(...) { ... } in the module")
        return funcs[0]

    @property
    def name(self) -> str:
        return self.func.sym_name.data

    @property
    def ops(self) -> tuple[Operation, ...]:
        """The function's top-level operations, in order."""
        return tuple(self.func.body.block.ops)

    @property
    def applies(self) -> tuple[ApplyOp, ...]:
        return tuple(op for op in self.ops if isinstance(op, ApplyOp))

    @property
    def stores(self) -> tuple[StoreOp, ...]:
        return tuple(op for op in self.ops if isinstance(op, StoreOp))

    @cached_property
    def rank(self) -> int:
        """The number of dimensions of the program's index space (that of its applies and stores)."""
        for op in self.stores:
            return len(op.bounds.lb)
        for a in self.applies:
            return a.get_rank()
        return 0

    def arguments(self) -> tuple[tuple[str, SSAValue], ...]:
        """``(name, value)`` of each function argument (``%arg0`` -> ``arg0``)."""
        return tuple((a.name_hint or f"arg{k}", a) for k, a in enumerate(self.func.body.block.args))

    def argument(self, value: SSAValue) -> SSAValue:
        """The function argument behind a field value (through ``stencil.cast``)."""
        while isinstance(value.owner, CastOp):
            value = value.owner.field
        return value

    def argument_name(self, value: SSAValue) -> str:
        arg = self.argument(value)
        return dict((v, n) for n, v in self.arguments())[arg]

    def field_bounds(self, value: SSAValue) -> Box:
        """The bounds of a field value (its type's, or its cast's)."""
        box = box_of(value.type)
        if box is None:
            raise self.error(f"the field {name_of(value)} has no bounds", value.owner if isinstance(
                value.owner, Operation) else None, hint="give it bounds with stencil.cast, e.g. "
                "%f = stencil.cast %arg : !stencil.field<?x?xf64> -> !stencil.field<[-1,65]x[-1,65]xf64>")
        return box

    def input_fields(self) -> tuple[str, ...]:
        """The function arguments that are loaded, in argument order."""
        return self._arguments_of(LoadOp)

    def output_fields(self) -> tuple[str, ...]:
        """The function arguments that are stored to, in argument order."""
        return self._arguments_of(StoreOp)

    def _arguments_of(self, kind: type[LoadOp] | type[StoreOp]) -> tuple[str, ...]:
        fields = {self.argument(op.field) for op in self.ops if isinstance(op, kind)}
        return tuple(n for n, v in self.arguments() if v in fields)

    def field_dims(self) -> dict[SSAValue, list[int]]:
        """The domain dimensions of each field argument of lower rank (from its accesses' offset mappings)."""
        return {self.argument(a.args[op.temp.index].owner.field): list(op.offset_mapping) for a in self.applies
                for op in a.walk() if isinstance(op, AccessOp) and op.offset_mapping is not None
                and isinstance(a.args[op.temp.index].owner, LoadOp)}

    def walk(self) -> Iterator[Operation]:
        return self.func.walk()

    # -- locations --------------------------------------------------------------------------------------------
    def location(self, op: Operation | None) -> SourceLocation | None:
        """Where ``op`` starts in ``source`` (None for an operation a pass made)."""
        if op is None or id(op) not in self.starts or not self.source:
            return None
        return SourceLocation.at(self.source, self.starts[id(op)])

    def error(self, message: str, op: Operation | None, *, hint: str | None = None,
              error: type[StencilError] = StencilError) -> StencilError:
        """An error at ``op`` (its line is named in the message too, so the text alone says where)."""
        loc = self.location(op)
        where = f" (line {loc.line})" if loc is not None else (f" ({op.name})" if op is not None else "")
        return error(message + where, location=loc, hint=hint)


def parse(text: str, filename: str | None = None) -> Program:
    """The program of ``text`` (today's syntax or Open Earth's 2020 syntax), parsed and verified by xDSL."""
    if not text.strip():
        raise StencilSyntaxError("the text is empty", hint="write a module with one func.func of the stencil "
                                 "dialect (docs/stencil.md)")
    modern = oec.upgrade(text) if oec.is_2020(text) else text
    try:
        module, starts = parse_module(modern)
    except Exception as exc:  # xDSL's parse errors (ParseError and the exceptions of its verifiers)
        raise from_xdsl(exc, modern) from None
    if modern is not text:      # the upgrade keeps the lines: an operation is located at its line's start
        lines = text.split("\n")
        firsts = list(accumulate((len(line) + 1 for line in lines), initial=0))
        starts = {key: firsts[n] + len(lines[n]) - len(lines[n].lstrip())
                  for key, n in ((key, modern.count("\n", 0, offset)) for key, offset in starts.items())}
    program = Program(module, text, filename, starts)
    try:
        module.verify()
    except Exception as exc:  # xDSL's verifiers raise VerifyException and, on malformed IR, others
        err = from_xdsl(exc, "")
        raise program.error(err.message, failing_op(module), hint=err.hint) from None
    return program


def examples() -> list[str]:
    """The names of the shipped stencil programs (``laplace3d.mlir``, ``diffusion.mlir``, ...)."""
    root = Path(example_path("stencil/laplace3d.mlir")).parent
    return sorted(p.name for p in root.glob("*.mlir"))


def example(name: str) -> Program:
    """A shipped stencil program, parsed (``example("diffusion")`` or ``example("diffusion.mlir")``)."""
    file = name if name.endswith(".mlir") else f"{name}.mlir"
    path = example_path(f"stencil/{file}")
    return parse(path.read_text(), filename=str(path))
