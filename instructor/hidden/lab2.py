"""Hidden cases of lab 2 (instructors only: never copied to labs/, never in the student release).

``polylab grade --hidden instructor/hidden`` adds them to the public cases of each function question; the
student sees a failing hidden case by its label only.
"""

from polylab.grading import Case

HIDDEN = {
    "q3": [
        Case(([0, 0], 0), "all coefficients zero, b = 0"),
        Case(([0, 0], 3), "all coefficients zero, b != 0"),
        Case(([-4, 6], -2), "negative coefficients and constant"),
        Case(([6, 9, 12], 4), "three unknowns, gcd 3 does not divide 4"),
        Case(([7], 14), "one unknown"),
        Case(([0, 5], 10), "a zero coefficient"),
    ],
}
