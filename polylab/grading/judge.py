"""The checks of a submission's answers, run under bounds in a child process of the grader that can be killed.

The answers come out of a submission's sandbox as data (:mod:`polylab.grading.kernel_side`); decoding them
parses isl text the student wrote, and checking them computes with isl on it. Both can take unbounded time
(a short union of sets with ``mod`` constraints parses for minutes), so neither happens in the grader's own
process: a judge (``python -m polylab.grading.judge HIDDEN_DIR``) reads one request per line on its
standard input, grades that one question under polylab's bounds (:func:`polylab.model.budget.bounded`: isl's
operation limit ``POLYLAB_MAX_OPERATIONS`` and the wall-clock ``POLYLAB_MAX_SECONDS``) and writes one line
of JSON, the :class:`~polylab.grading.verdict.Result`. The grader (:class:`Judges`) waits for that line at most
``seconds`` (the per-question limit); past it, it kills the judge, scores the question zero with "answer too
complex to check within N s" and starts a fresh judge for the next question. Judges are reused from question
to question and from submission to submission, one submission at a time each; nothing is shared between
them, so no lock is held across questions of different submissions.

Request: ``{"lab", "question", "answers": {NAME: ENCODED}, "unreadable": {NAME: REASON}, "calls": {NAME:
[...]}, "stopped": TEXT | null}``; reply: ``{"lab", "question", "title", "score", "max", "status",
"feedback": [...], "hidden_cases"}``.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Mapping, Sequence

from polylab.errors import PolylabError
from polylab.grading import codec
from polylab.grading.lab import Case, Lab, Question
from polylab.grading.registry import all_labs, get_lab, load_hidden
from polylab.grading.verdict import Result
from polylab.model import budget

#: seconds a judge may take to start (import polylab and the labs)
START_SECONDS = 120.0


# -- the judge's side --------------------------------------------------------------------------------------

def grade_one(lab: Lab, q: Question, request: Mapping[str, Any], hidden: Sequence[Case]) -> Result:
    """The result of ``q`` for the answers of one submission (``request``; see the module text)."""
    answers = request.get("answers") or {}
    unreadable = request.get("unreadable") or {}
    calls = request.get("calls") or {}
    stopped = request.get("stopped")
    bad = [f"{n}: {unreadable[n]}" for n in q.answers if n in unreadable]
    if bad:
        return Result(lab.name, q.name, q.title, 0.0, float(q.points), "wrong", tuple(bad))
    absent = [n for n in q.answers if n not in answers]
    if absent and stopped:
        return q.not_reached(lab.name, f"{', '.join(absent)} not defined when the run stopped: {stopped}")
    if q.is_function and not absent:
        name = q.answers[0]
        if name in calls:
            cases = [(c, False) for c in q.cases] + [(c, True) for c in hidden]
            return q.grade({name: codec.decode_calls(name, cases, calls[name])}, lab.name)
        if isinstance(answers[name], dict) and answers[name].get("$") == "function":
            return q.not_reached(lab.name, f"{name} is defined but was not called on the cases: "
                                           f"{stopped or 'the final check could not run'}")
    ns = {n: codec.decode(answers[n]) for n in q.answers if n in answers}
    return q.grade(ns, lab.name)


def _bounded_result(lab: Lab, q: Question, request: Mapping[str, Any], hidden: Sequence[Case]) -> Result:
    try:
        with budget.bounded(f"checking {lab.name}.{q.name}",
                            hint="the answer is too complex to check; a simpler equivalent answer is graded"):
            return grade_one(lab, q, request, hidden)
    except PolylabError as err:  # the bounds: too many isl operations or seconds
        return Result(lab.name, q.name, q.title, 0.0, float(q.points), "wrong",
                      (f"answer too complex to check: {err.message}",))


def result_json(r: Result) -> dict[str, Any]:
    return {"lab": r.lab, "question": r.question, "title": r.title, "score": r.score, "max": r.max,
            "status": r.status, "feedback": list(r.feedback), "hidden_cases": r.hidden_cases}


def result_from_json(d: Mapping[str, Any]) -> Result:
    return Result(str(d["lab"]), str(d["question"]), str(d["title"]), float(d["score"]), float(d["max"]),
                  d["status"], tuple(str(f) for f in d["feedback"]), (), int(d["hidden_cases"]))


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)  # the grader is gone: nothing is waiting for this judge


def main(argv: list[str]) -> int:
    """Serve requests (see the module text) until standard input closes."""
    hidden_dir = argv[0] if argv and argv[0] != "-" else None
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever a check prints goes to standard error, never into the replies
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    hidden: dict[str, Mapping[str, tuple[Case, ...]]] = {}
    all_labs()  # import the checks once, before the first question
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        lab = get_lab(request["lab"])
        q = lab.question(request["question"])
        try:
            if lab.name not in hidden:
                hidden[lab.name] = load_hidden(hidden_dir, lab)
            result = _bounded_result(lab, q, request, hidden[lab.name].get(q.name, ()))
        except Exception as exc:  # a bug of the grader on this answer: said in the result, the judge goes on
            result = Result(lab.name, q.name, q.title, 0.0, float(q.points), "error",
                            (f"internal error of the grader: {type(exc).__name__}: {exc}",))
        replies.write(json.dumps(result_json(result)) + "\n")
        replies.flush()
    return 0


# -- the grader's side -------------------------------------------------------------------------------------

class _Judge:
    """One judge process and its pipes."""

    def __init__(self, hidden_dir: str | None, memory_mb: int | None, env: Mapping[str, str]) -> None:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory_mb:
                hard = resource.getrlimit(resource.RLIMIT_AS)[1]
                want = memory_mb * 2**20
                resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard),
                                                        hard))

        self.proc = subprocess.Popen([sys.executable, "-m", "polylab.grading.judge", hidden_dir or "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env={**os.environ, **env}, preexec_fn=limit, start_new_session=True,
                                     text=True, encoding="utf-8")
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def reply(self, seconds: float) -> dict[str, Any] | str:
        """The next line of JSON within ``seconds``, or why none came: ``"timeout"`` or ``"died"``."""
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return "timeout"
        if line is None:
            self.lines.put(None)
            return "died"
        return json.loads(line)

    def ask(self, request: Mapping[str, Any], seconds: float) -> dict[str, Any] | str:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except OSError:
            return "died"
        return self.reply(seconds)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


class Judges:
    """The grader's judges: :meth:`grade` checks one submission's answers, question by question, each
    within ``seconds``; idle judges are kept for the next submission. :meth:`close` kills them all."""

    def __init__(self, hidden_dir: str | os.PathLike[str] | None, *, seconds: float = 60.0,
                 memory_mb: int | None = 4096, operations: int | None = None) -> None:
        self.hidden_dir = str(hidden_dir) if hidden_dir is not None else None
        self.seconds, self.memory_mb = seconds, memory_mb
        self.env = {"POLYLAB_MAX_SECONDS": str(seconds), "MPLBACKEND": "Agg"}
        if operations is not None:
            self.env["POLYLAB_MAX_OPERATIONS"] = str(operations)
        self._idle: list[_Judge] = []
        self._all: set[_Judge] = set()
        self._lock = threading.Lock()  # held only to take or return a judge
        self.closed = False

    def _take(self) -> _Judge:
        with self._lock:
            if self.closed:
                raise PolylabError("the grading was stopped")
            if self._idle:
                return self._idle.pop()
        judge = _Judge(self.hidden_dir, self.memory_mb, self.env)
        with self._lock:
            self._all.add(judge)
        if not isinstance(judge.reply(START_SECONDS), dict):
            self._discard(judge)
            raise PolylabError("the grader's judge process did not start (see python -m polylab.grading.judge)")
        return judge

    def _discard(self, judge: _Judge) -> None:
        judge.kill()
        with self._lock:
            self._all.discard(judge)

    def grade(self, lab: Lab, request: Mapping[str, Any]) -> tuple[Result, ...]:
        """Every question of ``lab`` for one submission's answers (``request`` without the question)."""
        results = []
        judge: _Judge | None = None
        for q in lab.questions:
            judge = judge or self._take()
            reply = judge.ask({**request, "lab": lab.name, "question": q.name}, self.seconds)
            if isinstance(reply, dict):
                results.append(result_from_json(reply))
                continue
            self._discard(judge)
            judge = None
            why = (f"answer too complex to check within {self.seconds:g} s" if reply == "timeout" else
                   "the check's process died (its memory limit?) while checking this answer")
            results.append(Result(lab.name, q.name, q.title, 0.0, float(q.points), "wrong", (why,)))
        if judge is not None:
            with self._lock:
                (self._idle if not self.closed else []).append(judge)
            if self.closed:
                self._discard(judge)
        return tuple(results)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            judges = list(self._all)
            self._idle.clear()
        for j in judges:
            j.kill()


__all__ = ["Judges", "grade_one", "main", "result_from_json", "result_json"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
