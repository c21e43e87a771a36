"""Hidden cases of lab 8 (instructors only: never copied to labs/, never in the student release)."""

from polylab.grading import Case

HIDDEN = {
    "q5": [
        Case((3,), "factor 3"),
        Case((4,), "factor 4"),
        Case((8,), "factor 8"),
        Case((16,), "a large factor"),
    ],
}
