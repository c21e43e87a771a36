"""``%%stencil``: a stencil program in a cell (the Open Earth MLIR dialect), stored and drawn.

``%%stencil [NAME] [--passes SPEC] [--domain 64,64,64] [-q]``
    Parse the cell (:func:`polylab.stencil.parse`, xDSL's parser and verifier), apply ``--domain`` and the
    ``--passes`` pipeline (xDSL's: ``stencil-inlining,shape-inference``), infer the shapes, store the
    :class:`~polylab.stencil.Program` under NAME (default: the function's name) and show: the applies with
    their boxes; the shapes drawn as boxes; the def-use graph (fields -> loads -> applies -> stored fields);
    and each apply's access pattern, its offsets drawn on an ``i, j`` grid. A mistake in the cell shows its
    line, column and caret, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from polylab import stencil
from polylab.errors import PolylabError
from polylab.notebook.display import ErrorBox, InternalErrorBox
from polylab.render import Displayable, esc
from polylab.stencil.display import access_offsets, access_pattern_svg, dataflow_svg, shapes_svg
from polylab.stencil.program import box_of, name_of


@dataclass(frozen=True, repr=False)
class StencilView(Displayable):
    """What ``%%stencil`` shows for a program stored as ``name`` (text: the summary; HTML: the summary, the
    data-flow graph and the access patterns)."""

    program: stencil.Program
    name: str

    def summary_lines(self) -> list[str]:
        p = self.program
        lines = [f"stencil program {p.name} stored as `{self.name}` ({p.rank} dimensions, "
                 f"{len(p.applies)} applies, {len(p.stores)} stores)",
                 f"fields: inputs {', '.join(p.input_fields()) or '-'}; outputs {', '.join(p.output_fields())}"]
        for a in p.applies:
            offsets = access_offsets(a)
            reads = "; ".join(f"{v} at {', '.join(str(list(o)) for o in offs)}" for v, offs in offsets.items())
            box = box_of(a.results[0].type) if a.results else None
            where = f"<{list(box[0])}, {list(box[1])}>" if box else "?"
            lines.append(f"  apply {', '.join(name_of(r) for r in a.results)} on {where}: reads {reads or 'nothing'}")
        return lines

    def text(self) -> str:
        return "\n".join(self.summary_lines())

    def __str__(self) -> str:
        return self.text()

    def html(self) -> str:
        text = self.text()
        panels = "".join(f"<div><b>{esc(', '.join(name_of(r) for r in a.results))}</b> {access_pattern_svg(a)}</div>"
                         for a in self.program.applies)
        html = (f"<div class='polylab-stencil'><pre>{esc(text)}</pre>"
                f"<p><b>shapes</b> (dimension 0 down, 1 across)</p>{shapes_svg(self.program)}"
                f"<p><b>def-use graph</b></p>{dataflow_svg(self.program)}"
                f"<p><b>access patterns</b> (dimensions i down, j across; the centre is the point computed)</p>"
                f"{panels}</div>")
        return html

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": self.text(), "text/html": self.html()}


@magics_class
class StencilMagics(Magics):
    """The ``%%stencil`` cell magic (registered by ``%load_ext polylab``)."""

    @magic_arguments()
    @argument("name", nargs="?", default=None, help="variable that receives the program (default: its name)")
    @argument("--passes", default="", metavar="SPEC", help="pass pipeline, e.g. inline,unroll(j=2),cse")
    @argument("--domain", default=None, metavar="N0,N1,N2", help="run the operators on another domain")
    @argument("-q", "--quiet", action="store_true", help="store the program without showing it")
    @cell_magic
    def stencil(self, line: str, cell: str) -> None:
        """Parse a stencil program, run passes, store it and show its data flow and access patterns."""
        args = parse_argstring(self.stencil, line)
        try:
            view = self._body(args, cell)
        except PolylabError as err:
            display(ErrorBox.of(err, cell))
            return
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a bug in polylab, not the student's mistake: say so, keep the details
            display(InternalErrorBox(exc, ""))
            return
        if not args.quiet:
            display(view)

    def _body(self, args: Any, cell: str) -> StencilView:
        program = stencil.parse(cell)
        if args.domain:
            try:
                extents = tuple(int(x) for x in args.domain.split(","))
            except ValueError:
                raise PolylabError(f"--domain {args.domain!r} is not a list of integers",
                                   hint="for example --domain 64,64,64") from None
            program = stencil.with_domain(program, extents)
        if args.passes:
            program = stencil.run_passes(program, args.passes)
        from polylab.stencil.lower import require_shapes

        program = require_shapes(program)
        name = args.name or (program.name if program.name.isidentifier() else "stencil_program")
        if not name.isidentifier():
            raise PolylabError(f"{name!r} is not a Python name", hint="use a name such as prog")
        self.shell.user_ns[name] = program
        return StencilView(program, name)
