"""Hidden cases of lab 1 (instructors only: never copied to labs/, never in the student release)."""

from polylab.grading import Case

HIDDEN = {
    "q6": [
        Case((0,), "n = 0: no instance"),
        Case((2,), "n = 2"),
        Case((100,), "n = 100"),
    ],
}
