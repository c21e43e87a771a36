"""An undeclared array used with two numbers of subscripts is a located error (found by the fuzz suite:
it was an isl 'spaces don't match' traceback)."""

from __future__ import annotations

import pytest

from polylab.errors import FrontendError
from polylab.frontend import parse

SRC = "for (i = 1; i < N; i++) { b[i] = a[i]; b[i] = a[i][i]; }\n"


def test_two_ranks_of_one_array_are_refused_at_the_second_reference():
    with pytest.raises(FrontendError) as info:
        parse(SRC)
    err = info.value
    assert "a is used with 1 subscript(s) at line 1 and with 2 here" in str(err)
    assert err.location.line == 1 and err.location.column == SRC.index("a[i][i]") + 1
    assert "declare a" in err.hint


def test_one_rank_everywhere_is_accepted():
    scop = parse("for (i = 1; i < N; i++) { b[i] = a[i]; b[i] = a[i - 1]; }\n").scops[0]
    assert scop.array("a").rank == 1
