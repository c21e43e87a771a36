"""Hidden cases of lab 7 (instructors only: never copied to labs/, never in the student release)."""

from polylab.grading import Case

HIDDEN = {
    "q5": [
        Case((1,), "N = 1: no iteration, no launch"),
        Case((0,), "N = 0: no iteration, no launch"),
        Case((2,), "N = 2: one point, one wave"),
        Case((3,), "N = 3"),
        Case((1000,), "N = 1000"),
    ],
}
