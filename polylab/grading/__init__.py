"""polylab.grading: the checks of the labs and the batch grader.

Every lab question is a named, weighted check: a pure function from the student's answer to a
:class:`Verdict` (a fraction of the points and feedback that names each specific error). A lab is a module
``polylab/grading/labs/<name>.py`` that declares ``LAB = Lab(...)`` with its :class:`Question` s. In a
notebook, a check cell is one call that never raises:

    from polylab.grading import check
    check("lab1", "q1")

``polylab grade SUBMISSION.ipynb ...`` runs each submission in a fresh kernel under limits and runs the
same checks (and the instructor's hidden cases) on the answers it produced. The guide for lab authors is
``docs/grading.md``. This layer uses the engine like any user; nothing below it knows about grading.
"""

from polylab.grading import answers, checks, display  # display registers the renderers of results
from polylab.grading.answers import AnswerError
from polylab.grading.interactive import check
from polylab.grading.lab import Call, Calls, Case, Lab, Question
from polylab.grading.registry import all_labs, get_lab, lab_names, load_hidden
from polylab.grading.verdict import (Report, Result, Verdict, ViolationPicture, combine, partial, right,
                                     wrong)

__all__ = ["AnswerError", "Call", "Calls", "Case", "Lab", "Question", "Report", "Result", "Verdict",
           "ViolationPicture", "all_labs", "answers", "check", "checks", "combine", "get_lab", "lab_names",
           "load_hidden", "partial", "right", "wrong"]
