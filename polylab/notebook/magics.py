"""IPython magics: ``%%scop``, ``%%schedule`` and ``%polyrun`` (load with ``%load_ext polylab``).

Each magic behaves like a small compiler driver (in the style of Cython's ``%%cython``): options are parsed
with IPython's ``magic_arguments`` (``%%scop?`` prints the usage; an unknown option is a one-line usage
error), results are stored in the user namespace, and a user error shows its message with a caret under
the offending text of the cell, never a traceback. What isl prints on the C-level stderr while a magic
runs is captured and shown in the cell.

``%%scop [NAME] [--param N=8 ...]``
    Parse the cell (a C fragment, a C function with ``#pragma scop``, or a SysY program), store the model
    under NAME (default ``scop``; the :class:`~polylab.model.Scop`, or the
    :class:`~polylab.model.Program` when the input has several static control parts) and show a summary:
    statements, domains as inequalities, access functions ``F x + c``, the dependence table and pictures
    of the iteration spaces with dependence arrows (drawn at the ``--param`` values, default 8).

``%%schedule [SCOP] [NAME]``
    The cell holds a schedule for the SCoP stored as SCOP (default ``scop``): isl text
    (``{ S0[i, j] -> [i + j, i] }``) or recipe steps (``wavefront``, ``tile(32, 32)``, ...). Shows the
    legality verdict (when illegal: the violated dependence and a violating pair, marked on the picture),
    the picture coloured by time and the transformed code, and stores the schedule under NAME (default
    ``schedule``).

``%polyrun [VARIANT ...] [--target c|openmp|cuda] [--param N=...] [--threads T] [--repeat R] [-o] [--force]``
    Compile, verify and time each stored schedule VARIANT (default ``schedule``) against the original
    program; prints a ``%timeit``-style line and a chart of every variant timed so far in the session.
    Results are cached per (code, options); ``--force`` verifies and times again and rebuilds every binary
    (``polylab.experiment.measure(..., force=True)`` passes it to the toolchain's ``compile``). An illegal
    schedule is never run. ``-o`` returns the result.

``%%see_why lab2.q1 [...]`` (registered here, defined in :mod:`polylab.notebook.course`)
    Run the cell only once the named questions are answered right in the notebook: the labs' "see why"
    parts, which show an answer, open after the student has given it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Mapping

import islpy as isl
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from polylab.codegen import PROGRAM_TARGETS, TARGETS
from polylab.errors import ModelError, PolylabError
from polylab.model import Scop
from polylab.model.params import parse_params
from polylab.notebook import backend, geometry, views
from polylab.notebook.capture import c_stderr
from polylab.notebook.course import CourseMagics
from polylab.notebook.display import ErrorBox, InternalErrorBox, StderrBox, locate_schedule_error
from polylab.notebook.stencil_magic import StencilMagics
from polylab import processes
from polylab.schedule import Schedule


def _parse_line(magic: Callable[..., Any], line: str) -> Any:
    """``parse_argstring`` that turns a line shlex cannot split (``%%scop "abc``: no closing quotation)
    into IPython's one-line usage error instead of a traceback."""
    try:
        return parse_argstring(magic, line)
    except ValueError as exc:
        raise UsageError(f"cannot read the options {line.strip()!r}: {exc}") from None


class _Failed(Exception):
    """A magic's body already displayed its error."""


@magics_class
class PolylabMagics(Magics):
    """The polylab magics; one instance per shell keeps the ``--param`` values of each stored SCoP and
    the run results of the session (for the comparison chart)."""

    def __init__(self, shell=None, **kwargs) -> None:
        super().__init__(shell, **kwargs)
        self.params: dict[str, dict[str, int]] = {}
        self.runs: dict[str, Any] = {}
        self.run_origins: dict[str, tuple[str, tuple]] = {}  # label -> (original program, parameters)
        self._cache: dict[str, Any] = {}
        self.last_error: PolylabError | None = None
        #: the magics' own step table (schedule and storage steps, ``optimize`` for this machine)
        self.steps = backend.notebook_steps()

    # -- plumbing ---------------------------------------------------------------------------------------
    def _guard(self, cell: str | None, body: Callable[[], list[Any]]) -> Any:
        """Run ``body`` with descriptor 2 captured; display what it returns (or the error box)."""
        self.last_error = None
        cap = None
        try:
            with processes.children_end_with_us(), c_stderr() as cap:  # SIGTERM/SIGHUP end its programs too
                shown = body()
        except PolylabError as err:
            self.last_error = err
            display(ErrorBox.of(err, cell, cap.text if cap else ""))
            return None
        except isl.Error as exc:
            err = PolylabError(f"isl refused the request: {exc}",
                               hint="check the cell's text; isl's own message is shown below if it gave one")
            self.last_error = err
            display(ErrorBox.of(err, cell, cap.text if cap else ""))
            return None
        except KeyboardInterrupt:  # the stop button: the toolchain has killed and reaped what it started
            err = PolylabError("interrupted", hint="the magic was stopped; any program it was running was "
                                                   "killed with its process group")
            self.last_error = err
            display(ErrorBox.of(err, None, cap.text if cap else ""))
            return None
        except SystemExit:
            raise
        except Exception as exc:  # a bug in polylab, not the student's mistake: say so, keep the details
            self.last_error = exc
            display(InternalErrorBox(exc, cap.text if cap else ""))
            return None
        if cap is not None and cap:
            display(StderrBox(cap.text))
        result = None
        for item in shown:
            if isinstance(item, _Return):
                result = item.value
            elif item is not None:
                display(item)
        return result

    def _lookup(self, name: str, what: str, magic: str) -> Any:
        ns = self.shell.user_ns if self.shell is not None else {}
        if name not in ns:
            raise PolylabError(f"no {what} named {name!r} in the notebook",
                               hint=f"create it first with {magic}")
        return ns[name]

    def _store(self, name: str, value: Any) -> None:
        if not name.isidentifier():
            raise PolylabError(f"{name!r} is not a Python name", hint="use a name such as scop or s1")
        self.shell.user_ns[name] = value

    # -- %%scop -----------------------------------------------------------------------------------------
    @magic_arguments()
    @argument("name", nargs="?", default="scop", help="variable that receives the model (default: scop)")
    @argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
              help="parameter values for the pictures (default 8), e.g. --param N=8")
    @argument("--language", choices=["c", "sysy"], default=None,
              help="language of the cell (default: detected)")
    @argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
              help="define a macro for the C preprocessor, as a C compiler does (repeatable), e.g. -DN=100")
    @argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
              help="search DIR for #include files (repeatable)")
    @argument("--value-based", action="store_true",
              help="show value-based (dataflow) dependences instead of memory-based ones")
    @argument("--no-picture", action="store_true", help="do not draw the iteration spaces")
    @argument("-q", "--quiet", action="store_true", help="store the model without showing the summary")
    @cell_magic
    def scop(self, line: str, cell: str) -> None:
        """Parse the cell into a polyhedral model, store it and show its summary."""
        args = _parse_line(self.scop, line)

        def body() -> list[Any]:
            params = parse_params(args.param)
            if not cell.strip():  # nothing to model: storing an empty SCoP would only hide the mistake
                raise PolylabError("the cell is empty", hint="write a loop nest below the %%scop line")
            program = backend.parse(cell, language=args.language, defines=args.defines,
                                    include_dirs=args.include_dirs)
            if program.scops and not any(s.statements for s in program.scops):
                raise PolylabError("the cell holds no statement to model",
                                   hint="write a loop nest with at least one assignment")
            if not program.scops:
                if program.rejected:
                    r = program.rejected[0]
                    raise PolylabError(r.reason, location=r.location, hint=r.hint)
                raise PolylabError("the cell holds no loop nest that is a static control part",
                                   hint="write a loop nest with affine bounds and subscripts")
            stored = program.scops[0] if len(program.scops) == 1 else program
            scops = list(program.scops)
            for s in scops:
                if params:
                    geometry.picture_params(s, params)  # unknown names are an error now, not in a picture
            self._store(args.name, stored)
            self.params[args.name] = params
            if args.quiet:
                return []
            out = []
            for k, s in enumerate(scops):
                deps = backend.dependences(s, value_based=args.value_based)
                name = args.name if len(scops) == 1 else f"{args.name}.scops[{k}]"
                try:
                    out.append(views.scop_summary(s, deps, params=params, name=name,
                                                  program=program if k == 0 else None,
                                                  pictures=not args.no_picture))
                except ModelError as err:  # no picture at these values (too many points): the rest, and why
                    out.append(views.scop_summary(s, deps, params=params, name=name,
                                                  program=program if k == 0 else None, pictures=False))
                    out.append(ErrorBox.of(err, None, ""))
            return out

        self._guard(cell, body)

    # -- %%schedule -------------------------------------------------------------------------------------
    @magic_arguments()
    @argument("scop", nargs="?", default="scop", help="the stored SCoP to schedule (default: scop)")
    @argument("name", nargs="?", default="schedule", help="variable that receives the schedule "
                                                         "(default: schedule)")
    @argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
              help="parameter values for the picture (default: those of %%%%scop, else 8)")
    @argument("-t", "--target", default="c", choices=list(TARGETS),
              help="language of the transformed code shown (default: c)")
    @argument("--no-picture", action="store_true", help="do not draw the schedule")
    @argument("-q", "--quiet", action="store_true", help="store the schedule without showing it")
    @cell_magic
    def schedule(self, line: str, cell: str) -> None:
        """Apply the schedule written in the cell (isl text or recipe steps), check it, show its code."""
        args = _parse_line(self.schedule, line)

        def body() -> list[Any]:
            params = {**self.params.get(args.scop, {}), **parse_params(args.param)}
            scop = backend.as_scop(self._lookup(args.scop, "SCoP", "%%scop " + args.scop))
            spec = cell.strip()
            if not spec:
                raise PolylabError("the cell is empty",
                                   hint="write isl text such as { S0[i, j] -> [i + j, i] } or steps such "
                                        "as wavefront")
            try:
                sched = backend.parse_schedule(scop, cell, self.steps)
            except PolylabError as err:  # caret on the piece of the cell the error is about
                raise locate_schedule_error(err, cell) from None
            report = backend.legality(sched)
            self._store(args.name, sched)
            if args.quiet:
                return []
            deps = backend.dependences(scop)
            code, code_error = None, None
            if report.legal:
                try:
                    code = backend.generate(scop, sched, args.target).kernel
                except PolylabError as exc:  # the verdict and the picture still show; the code box says why
                    code_error = exc.render()
            else:
                code_error = "no code for an illegal schedule"
            panel = views.schedule_summary(scop, sched, report, code, deps=deps, params=params,
                                           name=args.name, spec=spec, code_error=code_error)
            if args.no_picture:
                panel.figures.clear()
            return [panel]

        self._guard(cell, body)

    # -- %polyrun -----------------------------------------------------------------------------------------
    @magic_arguments()
    @argument("variants", nargs="*", help="stored schedules to run (default: schedule)")
    @argument("-s", "--scop", default=None, help="the stored SCoP (default: the schedule's own)")
    @argument("-t", "--target", default="c", choices=list(PROGRAM_TARGETS), help="code to build")
    @argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
              help="parameter values of the run, e.g. --param N=512")
    @argument("-n", "--threads", type=int, default=None, help="OpenMP threads")
    @argument("-r", "--repeat", type=int, default=3, help="timed runs (median reported)")
    @argument("-o", "--output", action="store_true", help="return the result object")
    @argument("--force", action="store_true", help="verify, rebuild and time again even when a result is cached")
    @argument("--timeout", type=float, default=300.0, help="seconds allowed for each run (default 300)")
    @line_magic
    def polyrun(self, line: str) -> Any:
        """Compile, verify and time stored schedules against the original program."""
        args = _parse_line(self.polyrun, line)

        def body() -> list[Any]:
            params = parse_params(args.param)
            if args.repeat < 1:
                raise PolylabError("--repeat must be at least 1")
            names = args.variants or ["schedule"]
            out: list[Any] = []
            results = []
            for name in names:
                sched = self._lookup(name, "schedule", "%%schedule")
                scop = backend.as_scop(self._lookup(args.scop, "SCoP", "%%scop") if args.scop else sched)
                if not isinstance(sched, Schedule):  # a SCoP stored under that name, say: not runnable
                    raise PolylabError(f"{name} is a {type(sched).__name__}, not a schedule",
                                       hint="store one with %%schedule SCOP " + name)
                key = self._key(scop, sched, args, params)
                label = f"{name} ({args.target}" + (f", {args.threads}t" if args.threads else "") + ")"
                if key in self._cache and not args.force:
                    result = self._cache[key]
                else:
                    if not isinstance(sched, Schedule):
                        raise PolylabError(f"{name} is a {type(sched).__name__}, not a schedule",
                                           hint="store one with %%schedule SCOP " + name)
                    backend.require_legal(
                        sched, name, consequence="so it is not run",
                        hint="fix the schedule (see %%schedule's picture of the violating pair)")
                    result = backend.experiment(scop, sched, target=args.target, params=params,
                                                threads=args.threads, repeat=args.repeat, force=args.force,
                                                timeout=args.timeout)
                    self._cache[key] = result
                self.runs[label] = result
                origin = (scop.source, tuple(sorted(params.items())))
                self.run_origins[label] = origin
                results.append(result)
                out.append(views.run_summary(label, result, runs_of(self.runs, self.run_origins, origin)))
            if args.output:
                out.append(_Return(results[0] if len(results) == 1 else results))
            return out

        return self._guard(line, body)

    @staticmethod
    def _key(scop: Scop, sched: Schedule, args: Any, params: dict[str, int]) -> str:
        h = hashlib.sha256()
        for part in (scop.source, str(sched.tree), args.target,
                     sorted(params.items()), args.threads, args.repeat):
            h.update(repr(part).encode())
        return h.hexdigest()


def runs_of(runs: Mapping[str, Any], origins: Mapping[str, tuple], origin: tuple) -> dict[str, Any]:
    """The runs whose original program and parameters are ``origin``: a chart compares a kernel only with
    its own original (at the same sizes), never with another kernel's."""
    return {k: r for k, r in runs.items() if origins.get(k) == origin}


class _Return:
    """Marks the value a magic returns (``-o``) among the things it displays."""

    def __init__(self, value: Any) -> None:
        self.value = value


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext polylab``: register ``%%scop``, ``%%schedule`` and ``%polyrun`` (and ``%%stencil``). Nothing
    else changes: the magics read specs with their own step table (storage steps included), and
    :func:`polylab.schedule.parse_schedule` reads the same specs the same way whether or not the extension
    was loaded (a lab passes ``steps=polylab.storage.recipe_steps()`` for the storage steps)."""
    ipython.register_magics(PolylabMagics)
    ipython.register_magics(StencilMagics)   # %%stencil (polylab/notebook/stencil_magic.py)
    ipython.register_magics(CourseMagics)    # %%see_why (polylab/notebook/course.py)


def unload_ipython_extension(ipython) -> None:
    """``%unload_ext polylab``: remove the magics again."""
    mm = ipython.magics_manager
    for kind, names in (("cell", ("scop", "schedule")), ("line", ("polyrun",))):
        for n in names:
            mm.magics[kind].pop(n, None)
    mm.registry.pop("PolylabMagics", None)
    mm.magics["cell"].pop("stencil", None)
    mm.registry.pop("StencilMagics", None)
    mm.magics["cell"].pop("see_why", None)
    mm.registry.pop("CourseMagics", None)


__all__ = ["PolylabMagics", "load_ipython_extension", "unload_ipython_extension", "parse_params"]
