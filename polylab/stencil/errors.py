"""The stencil layer's errors (:class:`polylab.errors.PolylabError`'s hierarchy), and xDSL's diagnostics made
located errors: line, column, caret, hint."""

from __future__ import annotations

import re
from typing import Any

from polylab.errors import PolylabError, SourceLocation


class StencilError(PolylabError):
    """A stencil program that polylab cannot accept or transform as asked (the message says why)."""

    kind = "stencil error"


class StencilSyntaxError(StencilError):
    """The text is not a stencil program in the dialect's MLIR form (line and column of the token)."""

    kind = "syntax error"


class UnsupportedStencilError(StencilError):
    """A construct the dialect allows but polylab does not support (``stencil.dyn_access``, ...)."""

    kind = "not supported"


class PassVerificationError(StencilError):
    """A pass changed what the program computes: the reference interpreter's outputs after the pass differ
    from those before it (the message names the pass, the field, the point and both values)."""

    kind = "pass not verified"


def from_xdsl(exc: Exception, text: str, *, what: str = "the program") -> StencilError:
    """xDSL's diagnostic ``exc`` (a parse error with its span, or a verifier's message) as a located
    :class:`StencilError` on ``text``."""
    from xdsl.utils.exceptions import ParseError

    if isinstance(exc, ParseError):
        offset = exc.span.start
        undefined = re.search(r"used but not defined: \[(%[\w#.$-]+)", exc.msg)
        if undefined and text:
            use = re.search(re.escape(undefined.group(1)) + r"\b", text)
            offset = use.start() if use else offset
        loc = SourceLocation.at(text, offset) if text else None
        message = exc.msg.strip().rstrip(".")
        message = message[:1].lower() + message[1:]
        return StencilSyntaxError(f"{message} (line {loc.line})" if loc else message, location=loc,
                                  hint=_hint(message))
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StencilError(f"{what} does not verify: {message}", hint=_hint(message))


def failing_op(root: Any) -> Any:
    """The first operation under ``root`` whose own verifier fails, or the innermost failing one inside it
    (xDSL's exception does not say which operation failed)."""
    found = None
    for op in root.walk():
        try:
            op.verify(verify_nested_ops=False)
        except Exception:  # any failure of the operation's own verifier marks it
            found = op if found is None or found.is_ancestor(op) else found
    return found


def _hint(message: str) -> str | None:
    """A hint for the xDSL messages students meet most."""
    lower = message.lower()
    if "undefined" in lower or "not defined" in lower or "unknown ssa" in lower or "use of undeclared" in lower:
        return "define a value before its use (SSA: each %name is assigned once, above where it is read)"
    if "operation" in lower and ("unregistered" in lower or "unknown" in lower):
        return ("operations are named with their dialect: arith.addf, arith.mulf, arith.constant, math.sqrt, "
                "stencil.access, stencil.return, func.return")
    if "expected" in lower and "type" in lower:
        return "each operand needs its type: e.g. %a = stencil.access %t[0, 1] : !stencil.temp<?x?xf64>"
    if "too big for the loaded field" in lower or "too big" in lower:
        return "the field's bounds must hold every point the program reads: enlarge its halo in stencil.cast"
    return None
