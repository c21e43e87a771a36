"""Folding of live-in reads: a read that only ever sees one constant is replaced by that constant.

For a read ``r`` of statement ``S`` (an access ``S[x] -> A[f(x)]``) the exact value-based dataflow
(:func:`polylab.analysis.dataflow`) gives,
for every instance ``S[x]``, either the write instance ``W[y]`` whose value it reads (the last write of
``A[f(x)]`` before ``S[x]``) or no source (the value was in memory before the region). The read folds
to the constant ``c`` when

* every source statement ``W`` writes a constant expression (``A[g(y)] = c``, literals and arithmetic on
  literals, evaluated with C's arithmetic and stored in ``A``'s element type), and
* every instance without a source reads an element whose initial value is declared
  (``initial_values={'x': '1.0'}``), and
* all these values are the same number (bit for bit, in ``A``'s type).

The read is then replaced in the statement body by a literal of ``A``'s type holding exactly the stored
value (``1.0f`` for a float array), and its access is removed. Nothing else in the expression changes, so
floating-point results stay bit-identical (no reassociation, no change of precision). Reads that do not
qualify are kept, each with the reason (which instances see which source).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from polylab.analysis import dataflow
from polylab.analysis.dataflow import Dataflow, live_elements, source_constant
from polylab.errors import ModelError
from polylab.model.budget import budgeted
from polylab.model.expr import ArrayRef, Assignment, Binary, Const, Expr, assignment_to_c, transform, walk
from polylab.model.scop import Access, Scop, Statement
from polylab.reference.cvalue import NotConstant, bits, const_value, convert, evaluate, literal, parse_expr
from polylab.render import Displayable, esc, text_table
from polylab.storage.islutil import example_text, set_example_text
from polylab.storage.report import condition_text


@dataclass(frozen=True)
class FoldedRead:
    """A read replaced by a constant."""

    statement: str
    access: int
    text: str
    line: int
    constant: Const
    sources: str

    def text_line(self) -> str:
        return f"folded  {self.statement} line {self.line}: {self.text} -> {self.constant.text}   ({self.sources})"


@dataclass(frozen=True)
class KeptRead:
    """A read that cannot be folded, with the reason and an example instance."""

    statement: str
    access: int
    text: str
    line: int
    reason: str
    example: str = ""

    def text_line(self) -> str:
        ex = f" (e.g. {self.example})" if self.example else ""
        return f"kept    {self.statement} line {self.line}: {self.text}: {self.reason}{ex}"


@dataclass(frozen=True, eq=False, repr=False)
class FoldReport(Displayable):
    """What :func:`fold_live_ins` folded and why the other reads were kept."""

    folded: tuple[FoldedRead, ...]
    kept: tuple[KeptRead, ...]
    seconds: float = 0.0
    #: the dataflow of the new SCoP, derived from the old one's (:func:`folded_dataflow`)
    dataflow: Dataflow | None = field(default=None, repr=False)

    def text(self) -> str:
        lines = [f"fold_live_ins: {len(self.folded)} read(s) folded to constants, {len(self.kept)} kept"]
        rows = [("folded", f.statement, f.line, f.text, f.constant.text, f.sources) for f in self.folded]
        rows += [("kept", k.statement, k.line, k.text, "-", k.reason + (f" (e.g. {k.example})" if k.example else ""))
                 for k in self.kept]
        if rows:
            lines.append(text_table(("", "statement", "line", "read", "constant", "why"), rows, width=110))
        return "\n".join(lines)

    def html(self) -> str:
        rows = "".join(
            f"<tr><td>folded</td><td>{esc(f.statement)}</td><td>{f.line}</td><td><code>{esc(f.text)}</code>"
            f"</td><td><code>{esc(f.constant.text)}</code></td><td>{esc(f.sources)}</td></tr>"
            for f in self.folded)
        rows += "".join(
            f"<tr><td>kept</td><td>{esc(k.statement)}</td><td>{k.line}</td><td><code>{esc(k.text)}</code>"
            f"</td><td>—</td><td>{esc(k.reason)}{(' (e.g. ' + esc(k.example) + ')') if k.example else ''}"
            f"</td></tr>" for k in self.kept)
        return (f"<div class='polylab-fold'><b>fold_live_ins</b>: {len(self.folded)} read(s) folded, "
                f"{len(self.kept)} kept<table><tr><th></th><th>statement</th><th>line</th><th>read</th>"
                f"<th>constant</th><th>why</th></tr>{rows}</table></div>")


def constant_writers(scop: Scop) -> dict[str, Any]:
    """For each statement that stores a constant expression: the stored value (in the element type)."""
    out: dict[str, Any] = {}
    for s in scop.statements:
        if s.body.op != "=" or len(s.writes) != 1:
            continue
        try:
            v = evaluate(s.body.value)
        except (NotConstant, ZeroDivisionError):
            continue
        out[s.name] = convert(v, scop.array(s.body.target.array).ctype)
    return out


def _initial_value(scop: Scop, array: str, spec: Any):
    ctype = scop.array(array).ctype
    if isinstance(spec, str):
        try:
            return convert(evaluate(parse_expr(spec)), ctype)
        except (NotConstant, ModelError) as exc:
            raise ModelError(f"the initial value of {array} is not a constant: {spec!r}",
                             hint="give a number or a constant expression such as '1.0'") from exc
    if isinstance(spec, Const):
        return convert(const_value(spec), ctype)
    return convert(spec, ctype)


def _implicit_read(s: Statement, a: Access) -> bool:
    """Is ``a`` the read hidden in a compound assignment (``x[i] += ...`` reads ``x[i]``)?"""
    if s.body.op == "=":
        return False
    return not any(isinstance(r, ArrayRef) and r.access == a.index for r in walk(s.body.value))


def replace_reads(s: Statement, constants: Mapping[int, Const]) -> Statement:
    """``s`` with the reads ``constants`` (access index -> literal) replaced and the accesses renumbered."""
    if not constants:
        return s
    keep = [a for a in s.accesses if a.index not in constants]
    renum = {a.index: k for k, a in enumerate(keep)}
    body = s.body

    def fn(x: Expr):
        if isinstance(x, ArrayRef):
            if x.access in constants:
                return constants[x.access]
            return ArrayRef(x.array, x.indices, renum[x.access])
        return None

    value = transform(body.value, fn)
    op = body.op
    for idx, c in constants.items():
        if _implicit_read(s, s.accesses[idx]):
            value = Binary(op[0], c, value)
            op = "="
    target = ArrayRef(body.target.array, body.target.indices, renum[body.target.access])
    new_body = Assignment(target, op, value)
    accesses = tuple(replace(a, index=renum[a.index]) for a in keep)
    return replace(s, accesses=accesses, body=new_body, text=assignment_to_c(new_body))


@budgeted("the folding of live-in constants (fold_live_ins)")
def fold_live_ins(scop: Scop, *, initial_values: Mapping[str, Any] | None = None
                  ) -> tuple[Scop, FoldReport]:
    """Replace every read that sees only one constant value by that constant (see the module text).

    ``initial_values`` declares the value of array elements before the region (``{'x': '1.0'}``); reads
    without a source in the region fold only when their array has one. Returns the new SCoP (same
    domains and schedule; fewer accesses) and a :class:`FoldReport`.
    """
    t0 = time.perf_counter()
    initial_values = dict(initial_values or {})
    init = {a: _initial_value(scop, a, v) for a, v in initial_values.items()}
    writers = constant_writers(scop)
    stmts = {s.name: s for s in scop.statements}
    folded: list[FoldedRead] = []
    kept: list[KeptRead] = []
    to_fold: dict[str, dict[int, Const]] = {}
    flow = dataflow(scop)
    for rf in flow.reads:
        s = stmts[rf.statement]
        a = s.accesses[rf.access]
        ctype = scop.array(a.array).ctype
        dom = s.domain.intersect_params(scop.context)
        base = dict(statement=s.name, access=a.index, text=a.text, line=a.location.line)
        values: dict[Any, list[str]] = {}
        refused = None
        live_in = rf.live_in_instances
        for source in rf.sources:
            m = source.relation
            src = source.statement
            sinks = m.range()
            if src not in writers:
                w = stmts[src]
                refused = KeptRead(**base, reason=f"{condition_text(sinks, dom)} its value comes from "
                                   f"{src} (line {w.line}), which does not store a constant",
                                   example=example_text(m))
                break
            values.setdefault(bits(writers[src]), []).append(f"{literal(writers[src], ctype).text} stored by {src}")
        if refused is None and not live_in.is_empty():
            if a.array not in init:
                refused = KeptRead(**base, reason=f"{condition_text(live_in, dom)} the value is "
                                   f"live-in (not written in the region) and no initial value of "
                                   f"{a.array} is declared", example=set_example_text(live_in))
            else:
                values.setdefault(bits(init[a.array]), []).append(
                    f"{literal(init[a.array], ctype).text}, the declared initial value")
        if refused is None and len(values) > 1:
            refused = KeptRead(**base, reason="its sources store different constants: " + "; ".join(
                ", ".join(v) for v in values.values()))
        if refused is None and not values:
            refused = KeptRead(**base, reason="the read has no instances")
        if refused is not None:
            kept.append(refused)
            continue
        value = writers.get(rf.sources[0].statement if rf.sources else "", init.get(a.array))
        c = literal(value, ctype)
        to_fold.setdefault(s.name, {})[a.index] = c
        folded.append(FoldedRead(**base, constant=c,
                                 sources="every instance reads " + " or ".join(sorted(set(next(iter(values.values())))))))
    new_stmts = tuple(replace_reads(s, to_fold.get(s.name, {})) for s in scop.statements)
    new = replace(scop, statements=new_stmts)
    report = FoldReport(tuple(folded), tuple(kept), time.perf_counter() - t0,
                        folded_dataflow(flow, new, {n: set(c) for n, c in to_fold.items()}))
    return new, report


def folded_dataflow(flow: Dataflow, scop: Scop, removed: Mapping[str, set[int]]) -> Dataflow:
    """The dataflow of ``scop``: ``flow.scop`` with the reads ``removed`` (statement -> access indices)
    replaced by constants and the accesses renumbered (:func:`replace_reads`), derived from ``flow``
    (computed with the default live set) instead of analysed anew.

    The domains, the schedule and every write are unchanged, so every remaining read has the same sources
    and live-in instances, and every write the same last instances; only the access numbers change, a
    read's constant is found again (its source statements' right-hand sides may have become constant
    expressions), and, when the SCoP declares no live-out set, the live set (every element an access
    touches) loses the elements only the removed reads touched, which no write writes."""
    renum = {s.name: {a.index: k for k, a in enumerate(x for x in s.accesses
                                                        if x.index not in removed.get(s.name, ()))}
             for s in flow.scop.statements}
    reads = []
    for r in flow.reads:
        if r.access in removed.get(r.statement, ()):
            continue
        sources = tuple(replace(src, access=renum[src.statement][src.access]) for src in r.sources)
        reads.append(replace(r, access=renum[r.statement][r.access], sources=sources,
                             constant=source_constant(scop, sources, r.live_in)))
    last = tuple((s, renum[s][a], m) for s, a, m in flow.last_writes)
    return Dataflow(scop, tuple(reads), last, live_elements(scop, None))
