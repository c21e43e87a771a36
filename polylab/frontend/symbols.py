"""What the front end knows about names: declared types, array extents, constants.

Scoping is flattened on purpose: a region sees every declaration of its translation unit / function /
fragment (later declarations of the same name override earlier ones with the same type class), which is
what the static control part rules need (is this name an integer? an array? a constant?).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from polylab.frontend.affine import int_literal

#: functions without side effects that may appear in a statement's right-hand side
PURE_MATH = frozenset("""
sqrt sqrtf exp expf exp2 log logf log2 log10 fabs fabsf abs labs fmin fminf fmax fmaxf pow powf sin sinf cos cosf
tan tanf asin acos atan atan2 sinh cosh tanh floor floorf ceil ceilf round trunc fmod hypot cbrt erf tgamma
lgamma copysign min max MIN MAX
""".split())

#: SysY runtime functions
SYSY_INPUT = frozenset({"getint", "getch", "getfloat", "getarray", "getfarray"})
SYSY_OUTPUT = frozenset({"putint", "putch", "putfloat", "putarray", "putfarray", "putf"})
TIMING_MARKERS = frozenset({"starttime", "stoptime", "_sysy_starttime", "_sysy_stoptime"})

INTEGER_WORDS = frozenset({"int", "long", "short", "char", "unsigned", "signed", "size_t", "_Bool"})


@dataclass
class Var:
    """A declared name: element/scalar type words, array extents (C nodes, None = unknown), initialiser."""

    name: str
    ctype: str
    dims: tuple[c_ast.Node | None, ...] = ()
    is_array: bool = False
    is_pointer: bool = False
    is_const: bool = False
    init: c_ast.Node | None = None
    decl: c_ast.Decl | None = None

    @property
    def is_integer(self) -> bool:
        return not self.is_array and not self.is_pointer and all(
            w in INTEGER_WORDS or w in ("const", "volatile", "static") for w in self.ctype.split())


@dataclass
class Symbols:
    vars: dict[str, Var] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    #: scalar typedefs (``typedef char base;``: base -> "char"), resolved through earlier ones
    typedefs: dict[str, str] = field(default_factory=dict)

    def add_typedef(self, node: c_ast.Typedef) -> None:
        """Record a typedef of a scalar type (the user's, or the prelude's ``size_t``, ``int64_t``, ...): a
        declaration that uses its name gets the type's own words, so the model holds the C type itself (the
        harness, the interpreter and the generated code declare their arrays without the typedef)."""
        t = node.type
        if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
            return
        self.typedefs[node.name] = " ".join(self._resolved(t.type.names))

    def _resolved(self, names: list[str]) -> list[str]:
        return [w for n in names for w in self.typedefs.get(n, n).split()]

    def add_decl(self, decl: c_ast.Decl) -> Var | None:
        if not isinstance(decl, c_ast.Decl) or decl.name is None or isinstance(decl.type, c_ast.FuncDecl):
            return None
        dims: list[c_ast.Node | None] = []
        t = decl.type
        is_pointer = False
        while True:
            if isinstance(t, c_ast.ArrayDecl):
                dims.append(t.dim)
                t = t.type
            elif isinstance(t, c_ast.PtrDecl):
                is_pointer = True
                t = t.type
            else:
                break
        words: list[str] = []
        if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            words = self._resolved(t.type.names)
        elif isinstance(t, c_ast.TypeDecl):
            words = ["struct"]
        quals = list(decl.quals or [])
        v = Var(decl.name, " ".join(words) or "int", tuple(dims), bool(dims), is_pointer,
                "const" in quals, decl.init, decl)
        self.vars[decl.name] = v
        if v.is_const and not dims and v.is_integer and isinstance(decl.init, c_ast.Node):
            val = const_eval(decl.init, self.constants)
            if val is not None:
                self.constants[decl.name] = val
        return v

    def collect(self, node: c_ast.Node) -> None:
        """Record every declaration below ``node`` (function parameters included)."""
        if isinstance(node, c_ast.Decl):
            self.add_decl(node)
        elif isinstance(node, c_ast.Typedef):
            self.add_typedef(node)
        for _, child in node.children():
            self.collect(child)


def const_eval(node: c_ast.Node, constants: dict[str, int]) -> int | None:
    """The value of an integer constant expression (literals, named constants, + - * / %), else None."""
    match node:
        case c_ast.Constant(type=t, value=v) if "int" in t or t == "long":
            return int_literal(v)
        case c_ast.ID(name=n):
            return constants.get(n)
        case c_ast.UnaryOp(op="-", expr=e):
            v = const_eval(e, constants)
            return None if v is None else -v
        case c_ast.UnaryOp(op="+", expr=e):
            return const_eval(e, constants)
        case c_ast.BinaryOp(op=op, left=a, right=b) if op in "+-*/%":
            x, y = const_eval(a, constants), const_eval(b, constants)
            if x is None or y is None:
                return None
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if y == 0:
                return None
            q = abs(x) // abs(y) * (1 if (x >= 0) == (y > 0) else -1)
            return q if op == "/" else x - q * y
    return None
