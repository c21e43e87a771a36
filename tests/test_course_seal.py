"""The courtesy locks of the course (docs/course.md rule 1, polylab/notebook/course.py): the student release
seals every see-why cell's code, the magic opens a sealed cell only once its questions are right, and a
notebook's check of a multiple-choice answer says only that it is recorded (the grader judges it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from polylab.grading import check, get_lab, lab_names
from polylab.grading.checks import VERDICTS
from polylab.notebook.course import SEALED, seal, unseal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "solutions"))
import make_labs  # noqa: E402

NAMES = [p.name for p in make_labs.solutions()]


def _see_why(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [make_labs.source_text(c) for c in nb["cells"]
            if c["cell_type"] == "code" and make_labs.source_text(c).startswith("%%see_why")]


@pytest.mark.parametrize("name", NAMES)
def test_the_release_shows_no_line_of_a_see_why_cell(name):
    """Every see-why cell of labs/ carries its solution's code sealed: no line of that code is in the student's
    notebook in clear text, and unsealing gives it back exactly."""
    solved, release = _see_why(ROOT / "solutions" / name), _see_why(ROOT / "labs" / name)
    assert solved and len(solved) == len(release)
    nb = json.loads((ROOT / "labs" / name).read_text(encoding="utf-8"))
    clear = {ln.strip() for c in nb["cells"] for ln in make_labs.source_text(c).splitlines()}
    solved_nb = json.loads((ROOT / "solutions" / name).read_text(encoding="utf-8"))
    given = {ln.strip() for c in solved_nb["cells"] if not make_labs.source_text(c).startswith("%%see_why")
             for ln in make_labs.source_text(c).splitlines()}   # a line an open cell runs as well
    for plain, sealed in zip(solved, release):
        magic, _, code = plain.partition("\n")
        assert sealed.splitlines()[0] == magic
        assert unseal(sealed.partition("\n")[2]) == code
        lines = [ln.strip() for ln in code.splitlines() if len(ln.strip()) > 6 and not ln.strip().startswith("#")]
        shown = [ln for ln in lines if ln in clear and ln not in given]
        assert not shown, f"labs/{name} shows see-why code in clear: {shown[:2]}"


def test_seal_round_trip_and_plain_bodies():
    code = 'print("F =", [[1, 2], [0, 1]])\nfor k in range(3):\n    x = k  # ü'
    sealed = seal(code)
    assert all(ln.startswith("#") for ln in sealed.splitlines()) and SEALED.strip() in sealed
    assert "[[1, 2]" not in sealed and unseal(sealed) == code
    assert unseal("print(1)") is None                     # a plain body (the solutions) is not sealed
    assert unseal(SEALED + "not base64!") == ""           # a sealed body edited by hand runs nothing


@pytest.fixture
def shell(global_ipython):
    global_ipython.run_line_magic("load_ext", "polylab")
    for name in ("Z_F", "Z_c", "second_thread", "__seal_ran"):
        global_ipython.user_ns.pop(name, None)
    yield global_ipython
    for name in ("Z_F", "Z_c", "second_thread", "__seal_ran"):
        global_ipython.user_ns.pop(name, None)


def test_the_magic_opens_a_sealed_body_only_when_right(shell, capsys):
    body = seal('__seal_ran = "yes"\nprint("opened")')
    shell.run_cell(f"%%see_why lab1.q1\n{body}")                    # unanswered: closed
    assert "__seal_ran" not in shell.user_ns
    shell.user_ns.update(Z_F=[[0, 1]], Z_c=(0,))                    # answered wrong: closed
    shell.run_cell(f"%%see_why lab1.q1\n{body}")
    assert "__seal_ran" not in shell.user_ns
    shell.user_ns.update(Z_F=[[1, 0]], Z_c=(-1,))                   # right: unsealed and run
    capsys.readouterr()
    shell.run_cell(f"%%see_why lab1.q1\n{body}")
    assert shell.user_ns.pop("__seal_ran") == "yes"
    assert "opened" in capsys.readouterr().out


def test_a_sealed_cell_without_its_magic_line_runs_nothing(shell):
    shell.user_ns.update(Z_F=[[1, 0]], Z_c=(-1,))
    result = shell.run_cell(seal('__seal_ran = "yes"'))
    assert result.success and "__seal_ran" not in shell.user_ns


def test_a_sealed_choice_never_opens_a_plain_one_does_when_right(shell):
    from polylab.grading.labs import lab4

    right = next(v for v in VERDICTS if lab4.check_q8(v).correct)
    shell.user_ns["second_thread"] = right
    shell.run_cell(f"%%see_why lab4.q8\n{seal('__seal_ran = 1')}")
    assert "__seal_ran" not in shell.user_ns                       # trying options would eliminate them
    shell.run_cell("%%see_why lab4.q8\n__seal_ran = 1")             # the solutions' plain body
    assert shell.user_ns.pop("__seal_ran") == 1


def _options(lab: str, q: str) -> list:
    from polylab.grading.labs import lab2, lab8

    return {("lab2", "q5"): [{t} for t in lab2.TESTS] + [set(lab2.TESTS)],
            ("lab8", "q6"): list(lab8.KERNEL_OPTIONS)}.get((lab, q), list(VERDICTS))


CHOICES = [(lab, q.name) for lab in lab_names() for q in get_lab(lab).questions if q.kind == "choice"]


@pytest.mark.parametrize("lab,q", CHOICES)
def test_a_notebook_check_of_a_choice_reveals_nothing(lab, q):
    """Every option gets the same 'recorded' result in the notebook (no verdict, no score, the same words),
    while the grader's own grading tells right from wrong; a malformed answer is still told so."""
    question = get_lab(lab).question(q)
    name = question.answers[0]
    shown, verdicts = set(), set()
    for option in _options(lab, q):
        r = check(f"{lab}.{q}", option)
        assert r.status == "recorded" and r.score == 0 and not r.correct, r.text
        assert "?/" in r.text and "\u2714" not in r.text and "\u2718" not in r.text
        shown.add((r.text, r.feedback))
        verdicts.add(question.grade({name: option}, lab).correct)
    assert len(shown) == 1 and verdicts == {True, False}
    bad = check(f"{lab}.{q}", {"no such option"} if isinstance(_options(lab, q)[0], set) else "no such option")
    assert bad.status == "wrong" and "not one of" in " ".join(bad.feedback), bad.text
    assert check(lab, q, namespace={}).status == "missing"
