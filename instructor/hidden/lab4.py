"""Hidden cases of lab 4 (instructors only: never copied to labs/, never in the student release)."""

from polylab.grading import Case

HIDDEN = {
    "q6": [
        Case((3,), "n = 3: one point"),
        Case((2,), "n = 2: the sweep is empty"),
        Case((400,), "n = 400, the size of the contest"),
    ],
}
