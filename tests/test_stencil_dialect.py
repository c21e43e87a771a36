"""The stencil dialect's text: parsing, printing (round trip), refusals with line and column, the builder."""

from __future__ import annotations

import pytest

from polylab.corpus import example_path
from polylab.errors import PolylabError
from polylab.stencil import (Builder, StencilError, StencilSyntaxError, UnsupportedStencilError, parse,
                             print_program, select, sqrt)
from polylab.stencil.ops import Access, Apply, Cast, Load, Store

EXAMPLES = ["laplace3d.mlir", "diffusion.mlir", "chain.mlir", "blur2d.mlir"]


def text(name: str) -> str:
    return example_path(f"stencil/{name}").read_text()


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_round_trip(name):
    p = parse(text(name))
    printed = print_program(p)
    q = parse(printed)
    assert q == p
    assert print_program(q) == printed


def test_structure_of_a_parsed_program():
    p = parse(text("diffusion.mlir"))
    assert p.name == "diffusion" and p.rank == 3
    assert [type(op) for op in p.ops[:5]] == [Cast, Cast, Cast, Load, Load]
    assert len(p.applies) == 4 and len(p.stores) == 1
    lap = p.applies[0]
    assert len(p.consumers(lap.results[0])) == 2      # the two flux applies
    accesses = [op.offset for op in lap.body if isinstance(op, Access)]
    assert (-1, 0, 0) in accesses and (0, 1, 0) in accesses
    assert p.input_fields() == ("%in", "%coeff") and p.output_fields() == ("%out",)
    assert p.bounds("%fin").lb == (-3, -3, 0)


def test_a_changed_offset_is_a_different_program():
    a = parse(text("laplace3d.mlir"))
    b = parse(text("laplace3d.mlir").replace("[-1, 0, 0]", "[-2, 0, 0]"))
    assert a != b


def test_new_mlir_spellings_are_accepted():
    new = text("laplace3d.mlir").replace("= addf", "= arith.addf").replace("= constant", "= arith.constant") \
        .replace("func @", "func.func @")
    assert parse(new) == parse(text("laplace3d.mlir"))


@pytest.mark.parametrize("edit, line, col, words", [
    (("%x = addf %w, %e : f64", "%x = addf %w %e : f64"), 16, 20, "expected ','"),
    (("stencil.access %v [0, 0, 0]", "stencil.acces %v [0, 0, 0]"), 9, 12, "unknown operation 'stencil.acces'"),
    (("!stencil.temp<?x?x?xf64>) -> f64\n      %w", "!stencil.tmp<?x?x?xf64>) -> f64\n      %w"), 9, 43,
     "unknown type"),
    (("%sum = addf %xy, %z : f64", "%sum = addf %xy, %zz : f64"), 20, 24, "%zz is used before it is defined"),
    (("%c = stencil.access %v [0, 0, 0]", "%c = stencil.access %v [0, 0]"), 9, 12, "needs 3 entries"),
])
def test_malformed_text_names_line_and_column(edit, line, col, words):
    src = text("laplace3d.mlir")
    assert edit[0] in src
    with pytest.raises(StencilError) as info:
        parse(src.replace(edit[0], edit[1], 1))
    err = info.value
    assert words in err.message
    assert err.location is not None and (err.location.line, err.location.column) == (line, col)
    assert "^" in err.render()          # the caret picture


def test_a_cycle_is_refused():
    src = text("chain.mlir").replace("%sm = stencil.apply (%x = %t", "%sm = stencil.apply (%x = %gi")
    with pytest.raises(StencilSyntaxError, match="used before it is defined"):
        parse(src)


def test_dyn_access_is_refused_naming_the_operation_and_line():
    src = text("laplace3d.mlir").replace(
        "%c = stencil.access %v [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64",
        "%c = stencil.dyn_access %v(%w, %w, %w) in [0, 0, 0] : [0, 0, 0] : (!stencil.temp<?x?x?xf64>) -> f64")
    with pytest.raises(UnsupportedStencilError) as info:
        parse(src)
    assert "stencil.dyn_access" in info.value.message and "(line 9)" in info.value.message
    assert info.value.location.line == 9


def test_no_store_is_refused():
    src = "\n".join(ln for ln in text("laplace3d.mlir").splitlines() if "stencil.store %lap" not in ln)
    with pytest.raises(StencilError, match="no stencil.store"):
        parse(src)


def test_store_range_outside_the_field_is_refused():
    src = text("laplace3d.mlir").replace("[0, 0, 0] : [32, 32, 32]", "[0, 0, 0] : [32, 40, 32]")
    with pytest.raises(StencilError, match="does not fit the field %dst"):
        parse(src)


@pytest.mark.parametrize("garbage", ["", "module {", "module { func @f() { return } }", "func @f(",
                                     "module { func @f(%a: !stencil.field<?xf64>) { %0 = stencil.cast %a([0] : [4])"])
def test_garbage_never_raises_a_traceback(garbage):
    with pytest.raises(PolylabError):
        parse(garbage)


def build_laplace():
    b = Builder("lap", rank=3)
    inp = b.field("inp", lb=(-1, -1, -1), ub=(9, 9, 9))
    out = b.field("out", lb=(-1, -1, -1), ub=(9, 9, 9))
    t = b.load(inp)
    r = b.apply([t], lambda a: a[-1, 0, 0] + a[1, 0, 0] - 2.0 * a[0, 0, 0])
    b.store(r, out, lb=(0, 0, 0), ub=(8, 8, 8))
    return b.build()


def test_builder_program_prints_and_parses_back():
    p = build_laplace()
    assert parse(print_program(p)) == p
    apply = p.applies[0]
    assert isinstance(apply, Apply) and isinstance(p.stores[0], Store)
    assert sorted(op.offset for op in apply.body if isinstance(op, Access)) == [(-1, 0, 0), (0, 0, 0), (1, 0, 0)]


def test_builder_select_sqrt_and_several_results():
    b = Builder("two", rank=2)
    f = b.field("f", lb=(0, 0), ub=(6, 6))
    g = b.field("g", lb=(0, 0), ub=(6, 6))
    h = b.field("h", lb=(0, 0), ub=(6, 6))
    t = b.load(f)
    r = b.apply([t], lambda a: (select(a[1, 0] > a[0, 0], a[1, 0], 0.0), sqrt(a[0, 1])))
    b.store(r[0], g, lb=(0, 0), ub=(5, 5))
    b.store(r[1], h, lb=(0, 0), ub=(5, 5))
    p = b.build()
    assert parse(print_program(p)) == p
    assert "select" in print_program(p) and "sqrt" in print_program(p)


def test_builder_refuses_a_wrong_offset():
    b = Builder("x", rank=3)
    t = b.load(b.field("f", lb=(0, 0, 0), ub=(4, 4, 4)))
    with pytest.raises(StencilError, match="3 constant integer offsets"):
        b.apply([t], lambda a: a[1, 0])


def test_shipped_examples_by_name():
    from polylab.stencil import example, examples

    assert examples() == sorted(EXAMPLES)
    assert example("chain").name == "chain" and example("chain.mlir") == example("chain")
    with pytest.raises(PolylabError, match="no example named"):
        example("nope")
