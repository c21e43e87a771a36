"""How a graded result looks in a notebook: a coloured box with the mark, the points, one line per specific
error and the pictures the check asked for (drawn here, with :mod:`polylab.notebook.plots`; never by a
check). Drawing a picture cannot fail the result: a picture that cannot be drawn is replaced by a line
saying why.
"""

from __future__ import annotations

from polylab import render
from polylab.grading.verdict import Picture, Report, Result, ViolationPicture
from polylab.notebook import plots
from polylab.notebook.display import figure_html
from polylab.notebook.geometry import picture_params
from polylab.render import esc

_COLOURS = {"correct": ("#1a7f37", "#eefbf1"), "partial": ("#b35900", "#fff8e6"),
            "recorded": ("#0b5cad", "#eef5fc")}
_BAD = ("#d62728", "#fdf0f0")
_MARKS = {"correct": "\u2714", "partial": "\u25d1", "recorded": "\u270e"}


def draw(picture: Picture):
    """The matplotlib figure of ``picture`` (a violating pair on the iteration space, points coloured by
    their time under the schedule)."""
    match picture:
        case ViolationPicture(schedule=schedule, violation=v, caption=caption):
            scop = schedule.scop
            stmt = v.dependence.sink
            values = picture_params(scop, dict(v.params))
            return plots.iteration_space(scop, None, params=values, statements=[stmt],
                                         schedule=schedule,
                                         highlight=(v.source_instance, v.sink_instance),
                                         title=caption or f"{stmt}: a violating pair in red")
    raise TypeError(f"no drawing for {type(picture).__name__}")


def _pictures_html(result: Result) -> str:
    out = []
    for pic in result.pictures:
        try:
            fig = draw(pic)
            out.append(figure_html(fig, 80, pic.caption or "picture"))
        except Exception as exc:  # a picture that cannot be drawn must not hide the feedback
            out.append(f"<div><i>(no picture: {esc(exc)})</i></div>")
    return "".join(out)


@render.html.register
def result_html(result: Result) -> str:
    fg, bg = _COLOURS.get(result.status, _BAD)
    mark = _MARKS.get(result.status, "\u2718")
    status = "" if result.status in ("correct", "partial", "wrong") else f" &mdash; {esc(result.status)}"
    title = f" {esc(result.title)}" if result.title else ""
    items = "".join(f"<li><pre style='margin:0;white-space:pre-wrap;font-family:inherit'>{esc(line)}</pre></li>"
                    for line in result.feedback)
    hidden = f" <i>(with {result.hidden_cases} hidden cases)</i>" if result.hidden_cases else ""
    return (f"<div class='polylab-grade' style='border-left:4px solid {fg};background:{bg};padding:6px 10px;"
            f"margin:4px 0;font-family:var(--jp-ui-font-family,sans-serif);font-size:13px'>"
            f"<b style='color:{fg}'>{mark} {esc(result.name)}</b>{title}: "
            f"<b>{'?' if result.status == 'recorded' else f'{result.score:g}'} / {result.max:g}</b> points"
            f"{' on the public cases' if result.provisional else ''}"
            f"{status}{hidden}"
            + (f"<ul style='margin:4px 0 0 0'>{items}</ul>" if items else "")
            + _pictures_html(result) + "</div>")


@render.html.register
def report_html(report: Report) -> str:
    head = f"<div style='font-family:var(--jp-ui-font-family,sans-serif)'><b>{esc(report.head)}</b></div>"
    return head + "".join(result_html(r) for r in report.results)


__all__ = ["draw", "report_html", "result_html"]
