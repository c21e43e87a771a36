"""The parser's reader: tokens, position, values in scope, and the small pieces of the grammar (integers,
boxes, types, values, result lists). :mod:`polylab.stencil.parser` builds the operations on top of it.

Every error names the line and column of the token where the text stops making sense. A value used
before its definition (which is how a cycle shows in SSA text) is refused here.
"""

from __future__ import annotations

from polylab.errors import SourceLocation
from polylab.stencil.errors import StencilSyntaxError
from polylab.stencil.lexer import Token, location, tokenize
from polylab.stencil.types import SCALARS, Box, FieldType, ResultType, ScalarType, TempType, Type

class Reader:
    """The parser's state: the tokens, the position, and the values in scope with their types."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines() or [""]
        self.tokens = tokenize(text)
        self.pos = 0
        self.scopes: list[dict[str, Type]] = [{}]

    # -- tokens ---------------------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        return self.peek().text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.pos += 1
            return True
        return False

    def loc(self, tok: Token) -> SourceLocation:
        return location(self.lines, tok.line, tok.column, tok.text)

    def error(self, message: str, tok: Token | None = None, hint: str | None = None) -> StencilSyntaxError:
        tok = tok or self.peek()
        return StencilSyntaxError(message, location=self.loc(tok), hint=hint)

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.peek()
        if tok.text != text:
            found = "the end of the text" if tok.kind == "end" else repr(tok.text)
            raise self.error(f"expected {what or repr(text)}, found {found}", tok)
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            found = "the end of the text" if tok.kind == "end" else repr(tok.text)
            raise self.error(f"expected {what}, found {found}", tok)
        return self.next()

    # -- small pieces ---------------------------------------------------------------------------------------
    def integer(self, what: str = "an integer") -> int:
        tok = self.expect_kind("number", what)
        try:
            return int(tok.text)
        except ValueError:
            raise self.error(f"expected {what}, found {tok.text!r}", tok) from None

    def int_list(self) -> tuple[int, ...]:
        self.expect("[")
        out: list[int] = []
        if not self.at("]"):
            out.append(self.integer())
            while self.accept(","):
                out.append(self.integer())
        self.expect("]")
        return tuple(out)

    def box(self) -> Box:
        """``([lb] : [ub])``."""
        start = self.expect("(")
        lb = self.int_list()
        self.expect(":")
        ub = self.int_list()
        self.expect(")")
        if len(lb) != len(ub):
            raise self.error(f"the bounds {list(lb)} and {list(ub)} have different lengths", start)
        return Box(lb, ub)

    def type(self) -> Type:
        tok = self.peek()
        if tok.kind == "word" and tok.text in SCALARS:
            self.next()
            return ScalarType(tok.text)
        if tok.kind != "type":
            raise self.error(f"expected a type, found {tok.text!r}" if tok.kind != "end"
                             else "expected a type, found the end of the text")
        self.next()
        return parse_type(tok.text, lambda m: self.error(m, tok))

    def types(self) -> tuple[Type, ...]:
        out = [self.type()]
        while self.accept(","):
            out.append(self.type())
        return tuple(out)

    def scalar_type(self) -> ScalarType:
        tok = self.peek()
        t = self.type()
        if not isinstance(t, ScalarType):
            raise self.error(f"expected a scalar type (f64, index, ...), found {t.text()}", tok)
        return t

    def new_value(self, tok: Token) -> str:
        name = tok.text
        if name in self.scopes[-1]:
            raise self.error(f"the value {name} is defined twice", tok)
        return name

    def value(self, want: type | None = None) -> str:
        """A value in scope (optionally of a type class)."""
        tok = self.expect_kind("value", "a value (%name)")
        for scope in reversed(self.scopes):
            if tok.text in scope:
                t = scope[tok.text]
                if want is not None and not isinstance(t, want):
                    raise self.error(f"{tok.text} is a {t.text()}, not a {_kind(want)}", tok)
                return tok.text
        raise self.error(f"the value {tok.text} is used before it is defined (a cycle, or a value of "
                         f"another region)", tok,
                         hint="stencil programs are in SSA form: each value is defined once, before its uses; "
                              "an apply's body sees only its block arguments")

    def values(self) -> tuple[str, ...]:
        out = [self.value()]
        while self.accept(","):
            out.append(self.value())
        return tuple(out)

    def define(self, names: tuple[str, ...], types: tuple[Type, ...]) -> None:
        for n, t in zip(names, types):
            self.scopes[-1][n] = t

    def results(self) -> tuple[tuple[str, ...], Token | None]:
        """``%r =`` or ``%g:n =`` (``()`` when the operation has no result)."""
        if self.peek().kind != "value":
            return (), None
        tok = self.next()
        name = self.new_value(tok)
        if "#" in name:
            raise self.error(f"a result is named {name}: '#' is for uses of a result group", tok)
        if self.accept(":"):
            n = self.integer("a result count")
            names = tuple(f"{name}#{k}" for k in range(n))
        else:
            names = (name,)
        self.expect("=")
        return names, tok


def _kind(cls: type) -> str:
    return {TempType: "temp", FieldType: "field", ScalarType: "scalar", ResultType: "result"}.get(cls, cls.__name__)


def parse_type(text: str, error) -> Type:
    """``!stencil.field<...>``, ``!stencil.temp<...>`` or ``!stencil.result<...>``."""
    head, _, rest = text.partition("<")
    body = rest[:-1]
    if head == "!stencil.result":
        if body not in SCALARS:
            raise error(f"unknown element type {body!r} in {text}")
        return ResultType(body)
    if head not in ("!stencil.field", "!stencil.temp"):
        raise error(f"unknown type {text}")
    parts = body.split("x")
    element = parts[-1]
    if element not in SCALARS or len(parts) < 2:
        raise error(f"the type {text} needs a shape and an element type, as in {head}<?x?x?xf64>")
    shape: list[int | None] = []
    for p in parts[:-1]:
        if p == "?":
            shape.append(None)
        elif p.isdigit():
            shape.append(int(p))
        else:
            raise error(f"{p!r} is not an extent in {text} (an integer, or ? when unknown)")
    return (FieldType if head == "!stencil.field" else TempType)(tuple(shape), element)


