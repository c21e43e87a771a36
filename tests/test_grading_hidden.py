"""Hidden cases: instructor files read as data (nothing in them runs), outside the student release; the
notebook's check runs the public cases only and says so, the grader counts both."""

from __future__ import annotations

from pathlib import Path

import pytest

from polylab.errors import PolylabError
from polylab.grading import Call, Calls, Case, check, get_lab, load_hidden
from polylab.grading.labs.lab1 import triangle_count_reference

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_hidden_cases_are_read():
    hidden = load_hidden(ROOT / "instructor" / "hidden", get_lab("lab1"))
    assert [c.label for c in hidden["q6"]][0] == "n = 0: no instance"
    assert all(isinstance(c, Case) and isinstance(c.args, tuple) for c in hidden["q6"])


def test_a_hidden_file_is_data_and_never_runs(tmp_path):
    marker = tmp_path / "ran"
    lab = get_lab("lab1")
    (tmp_path / "lab1.py").write_text(
        '"""doc"""\nfrom polylab.grading import Case\n'
        'HIDDEN = {"q6": [Case((3,), "three"), ((5,), "five"), Case(((1, -2), {1, 2}, [None, True]), "mixed")]}\n')
    cases = load_hidden(tmp_path, lab)["q6"]
    assert [c.label for c in cases] == ["three", "five", "mixed"]
    assert cases[2].args == ((1, -2), {1, 2}, [None, True])
    for text, said in [
        (f"open({str(marker)!r}, 'w')\nHIDDEN = {{}}\n", "only HIDDEN = {...} is read here"),
        (f"HIDDEN = {{'q6': [Case((__import__('os').system('touch {marker}'),), 'x')]}}\n", "is not a literal"),
        ("HIDDEN = {'q6': [Case((1,), 'a')]}\ndef f():\n    pass\n", "line 2"),
        ("HIDDEN = {'q6': [Case((1,), 'a')]\n", "line 1"),
        ("X = 1\n", "only HIDDEN"),
        ("'''doc'''\n", "defines no HIDDEN"),
        ("HIDDEN = {'q1': [Case((1,), 'a')]}\n", "not a function question"),
        ("HIDDEN = {'q6': [3]}\n", "is not a Case"),
    ]:
        (tmp_path / "lab1.py").write_text(text)
        with pytest.raises(PolylabError) as err:
            load_hidden(tmp_path, lab)
        assert said in err.value.render(), text
    assert not marker.exists()


def test_the_notebook_check_runs_public_cases_and_says_so():
    r = check("lab1.q6", triangle_count_reference)
    assert r.correct and r.hidden_cases == 0
    assert r.feedback[-1] == "public cases: 3/3; the grader also runs hidden cases"
    r = check("lab1.q6", lambda n: 0)
    assert r.feedback[-1] == "public cases: 0/3; the grader also runs hidden cases"


def test_the_grader_counts_public_and_hidden_cases():
    q = get_lab("lab1").question("q6")
    hidden = load_hidden(ROOT / "instructor" / "hidden", get_lab("lab1"))["q6"]
    calls = [Call(c, triangle_count_reference(*c.args)) for c in q.cases]
    calls += [Call(c, 1, None, True) for c in hidden]
    r = q.grade({"triangle_count": Calls("triangle_count", tuple(calls), in_notebook=False)}, "lab1")
    assert r.hidden_cases == len(hidden)
    assert r.feedback[-1] == f"public cases: 3/3; hidden cases: 0/{len(hidden)}"
    assert any(f"hidden case {hidden[0].label!r}: wrong result" in f for f in r.feedback)
