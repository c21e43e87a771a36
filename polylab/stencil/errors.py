"""The stencil layer's errors: subclasses of :class:`polylab.errors.PolylabError` (one hierarchy).

A parse error carries the line and column of the offending token; a refusal of a pass or of the lowering
names the operation (and its line when the program was parsed from text), the access, the offset and the
bound that fail.
"""

from __future__ import annotations

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


def located(message: str, loc: SourceLocation | None, *, hint: str | None = None,
            error: type[StencilError] = StencilError) -> StencilError:
    """An error at ``loc`` (its line is named in the message too, so the text alone says where)."""
    where = f" (line {loc.line})" if loc is not None and loc.line else ""
    return error(message + where, location=loc, hint=hint)
