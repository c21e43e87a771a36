"""Widget explorers (ipywidgets): move a slider, see the schedule, the tiles or the dependence test change.

* :class:`ScheduleExplorer`: one integer slider per coefficient of the hyperplane ``theta(x) = a . x``;
  the points are coloured by ``theta`` (the waves) and the verdict follows: the schedule ``[theta(x), x]``
  is legal iff ``theta(d) >= 0`` for every dependence distance ``d``, and the points of one wave may run in
  parallel iff ``theta(d) >= 1`` for every ``d`` (both decided exactly with isl over all parameter values;
  a violating pair is marked on the picture).
* :class:`TilingExplorer`: tile sizes (and an optional skew); tiles and tile waves on the picture; the
  tiled schedule ``[floor(x / T), x]`` and its tile-wave form are checked exactly with isl.
* :class:`DependenceExplorer`: pick two references; the textbook test (equations, GCD, Banerjee) and the
  exact isl answer side by side.

Each explorer owns ONE matplotlib figure whose artists are updated in place (``set_facecolors``,
``set_offsets``), rendered into one ``ipywidgets.Image`` (no flicker: the old picture stays until the new
one replaces it). An exception in a callback is shown in the widget (an error box) and kept in
``last_error``; it is never lost. ``last_latency`` holds the seconds the last update took.
"""

from __future__ import annotations

import html
import time
import traceback
from dataclasses import replace
from typing import Any, Mapping, Sequence

import ipywidgets
import islpy as isl
import numpy as np

from polylab.analysis import DependenceGraph, textbook_test
from polylab.errors import ModelError, PolylabError
from polylab.model import Access, Program, Scop, Statement
from polylab.model.islutil import fix_parameters
from polylab.notebook import backend, geometry, plots
from polylab.notebook.display import verdict_html
from polylab.schedule import Schedule, Violation, violations
from polylab.schedule.deps import Dep

_DPI = 80
#: ``min theta(d)`` over a dependence whose distances are unbounded below
MINUS_INFINITY = float("-inf")


def _error_html(exc: BaseException) -> str:
    if isinstance(exc, PolylabError):
        body = html.escape(exc.render())
    else:
        tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        body = html.escape(tb)
    return ("<div style='border-left:4px solid #d62728;background:#fdf0f0;padding:4px 8px'>"
            f"<b>error in the explorer</b><pre style='margin:2px 0;white-space:pre-wrap'>{body}</pre></div>")


def _pick_statement(scop: Scop, statement: str | None, deps: DependenceGraph | None) -> Statement:
    if statement is not None:
        return scop.statement(statement)
    drawable = [s for s in scop.statements if 1 <= len(s.iterators) <= 3]
    if not drawable:
        raise ModelError("no statement has one to three loop dimensions to draw")
    with_self = {d.source for d in plots.as_dep_views(deps) if d.source == d.sink} if deps is not None else set()
    best = [s for s in drawable if s.name in with_self] or drawable
    return max(best, key=lambda s: (len(s.iterators), scop.statements.index(s)))


class _Explorer:
    """Shared machinery: statement, points, dependences, one figure, one image, verdict and error boxes."""

    def __init__(self, scop: Scop | Program | Schedule, *, statement: str | None = None,
                 params: Mapping[str, int] | None = None, deps: DependenceGraph | None = None) -> None:
        self.scop = backend.as_scop(scop)
        self.deps = deps if deps is not None else backend.dependences(self.scop)
        self.stmt = _pick_statement(self.scop, statement, self.deps)
        self.params = plots.geometry.picture_params(self.scop, params)
        self.domain = self.stmt.domain
        self.points = geometry.points(self.domain, self.params)
        depth = len(self.stmt.iterators)
        #: the statements scheduled together with the chosen one: same depth, same outermost loop
        self.group = [s for s in self.scop.statements if s.name == self.stmt.name or (
            len(s.iterators) == depth and geometry.same_nest(self.scop, s.name, self.stmt.name))]
        names = {s.name for s in self.group}
        self.views = [d for d in plots.as_dep_views(self.deps) if d.source in names and d.sink in names]
        #: the views as the schedule layer's dependences (for its legality check), and back
        self._deps = [Dep(d.kind, d.source, d.sink, d.array, d.relation) for d in self.views]
        self._view_of = {id(dep): view for dep, view in zip(self._deps, self.views)}
        self.pairs = [geometry.pairs(d.relation, self.params) for d in self.views]
        self.original = {s.name: geometry.statement_schedule(self.scop, s.name) for s in self.group}
        self.last_error: BaseException | None = None
        self.last_latency = 0.0
        self.latencies: list[float] = []
        self.cpu_latencies: list[float] = []
        self._canvas = None
        self._background = None
        self._background_key: Any = None
        w = ipywidgets
        self.image = w.Image(format="png", layout=w.Layout(max_width="640px"))
        self.verdict = w.HTML()
        self.error = w.HTML()
        self.fig = None

    # callbacks never lose an exception
    def _safe_update(self, change: Any = None) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            self.update()
            self.error.value = ""
            self.last_error = None
        except Exception as exc:  # any failure of a redraw is shown in the widget and kept, never lost
            self.last_error = exc
            self.error.value = _error_html(exc)
        self.last_latency = time.perf_counter() - t0
        self.latencies.append(self.last_latency)
        self.cpu_latencies.append(time.process_time() - c0)

    def _render(self) -> None:
        """Render the one figure into the one image.

        The layout is computed once, then frozen (the picture does not jump). Everything that does not
        change between updates (axes, ticks, grid, dependence arrows, legend) is drawn once into a cached
        background; an update restores it and draws only the changing artists (points, tiles, the marked
        pair, the title, the colour bar) before encoding the PNG: blitting, as interactive backends do.
        """
        fig = self.fig
        canvas = self._ensure_canvas()
        dynamic = self._dynamic_artists()
        if self._background is None or self._background_key != self._static_key():
            if fig.get_layout_engine() is not None:
                canvas.draw()  # lay out once with everything visible, then freeze the layout
                fig.set_layout_engine("none")
            hidden = [a for a in dynamic if a.get_visible()]
            for a in hidden:
                a.set_visible(False)
            canvas.draw()
            self._background = canvas.copy_from_bbox(fig.bbox)
            self._background_key = self._static_key()
            for a in hidden:
                a.set_visible(True)
        canvas.restore_region(self._background)
        for a in dynamic:
            if hasattr(a, "do_3d_projection"):
                a.do_3d_projection()
            fig.draw_artist(a)
        self.image.value = _canvas_png(canvas)

    def _ensure_canvas(self) -> Any:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        if self._canvas is None:
            self.fig.set_dpi(_DPI)
            self._canvas = FigureCanvasAgg(self.fig)
        return self._canvas

    def _freeze_layout(self, widest: tuple[float, float] = (-100.0, 100.0)) -> None:
        """Lay the figure out once with a colour bar whose tick labels are as wide as they will ever be
        (so later updates never clip them), then keep that layout."""
        from matplotlib.colors import Normalize

        self.sp.set_colorbar(Normalize(*widest), plots.TIME_CMAP, "")
        canvas = self._ensure_canvas()
        if self.fig.get_layout_engine() is not None:
            canvas.draw()
            self.fig.set_layout_engine("none")

    def _dynamic_artists(self) -> list:
        sp = self.sp
        out = [sp._points[0]] if sp._points is not None else []
        out += list(sp._tiles) + list(sp._highlight)
        if sp._colorbar is not None:
            out.append(sp._colorbar.ax)
        if self.fig._suptitle is not None:
            out.append(self.fig._suptitle)
        return out

    def _static_key(self) -> Any:
        return None

    def _title(self, text: str, bad: bool = False) -> None:
        self.fig.suptitle(text, fontsize=10, color="#d62728" if bad else "black")

    def update(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _schedules(self, exprs_of) -> dict[str, isl.Map]:
        """``{ S[x] -> [exprs(S), original(x)] }`` for every statement of the group."""
        return {s.name: geometry.prefixed_schedule(s.domain, exprs_of(s), self.original[s.name])
                for s in self.group}

    def _violations(self, maps: dict[str, isl.Map], deps: Sequence[Dep], at_picture: bool
                    ) -> list[Violation]:
        """The dependences ``deps`` of the group that the per-statement schedules ``maps`` break, with
        their smallest violating pairs (the schedule layer's one check); at the picture's parameter values
        when ``at_picture``, else at the smallest ones that show a violation."""
        context = fix_parameters(self.scop.context, self.params) if at_picture else self.scop.context
        group = replace(self.scop, statements=tuple(self.group), context=context)
        return list(violations(Schedule.from_maps(group, maps), deps))

    def _label(self, v: Violation) -> str:
        return self._view_of[id(v.dependence)].label

    def _group_note(self) -> str:
        if len(self.group) == 1:
            return f"dependences of {self.stmt.name} on itself"
        return ("statements " + ", ".join(s.name for s in self.group)
                + " share the schedule; their dependences are all checked")

    def _draw_arrows(self, sp: plots.SpacePlot, transform=None) -> None:
        by_kind: dict[str, list] = {}
        for d, (src, dst) in zip(self.views, self.pairs):
            if transform is not None:
                src, dst = transform(src), transform(dst)
            by_kind.setdefault(d.kind, []).append((src, dst))
        for kind, lst in by_kind.items():
            src = np.concatenate([a for a, _ in lst])
            dst = np.concatenate([b for _, b in lst])
            src, dst = plots._sample_pairs(src, dst, 600 if sp.dims < 3 else 60)
            sp.set_arrows(kind, src, dst)


# -- schedule explorer --------------------------------------------------------------------------------------

class ScheduleExplorer(_Explorer):
    """Sliders for the hyperplane ``theta(x) = a . x`` of one statement; the picture and verdict follow.

    ``explorer.sliders[k].value = 1`` changes coefficient ``k``; ``explorer.verdict.value`` holds the
    verdict's HTML, ``explorer.state`` a dictionary of what is shown (for tests and graders).
    """

    def __init__(self, scop: Scop | Program | Schedule, *, statement: str | None = None,
                 params: Mapping[str, int] | None = None, deps: DependenceGraph | None = None,
                 coefficients: Sequence[int] | None = None, bounds: tuple[int, int] = (-2, 3)) -> None:
        super().__init__(scop, statement=statement, params=params, deps=deps)
        w = ipywidgets
        iters = list(self.stmt.iterators)
        coeffs = list(coefficients) if coefficients is not None else [1] + [0] * (len(iters) - 1)
        if len(coeffs) != len(iters):
            raise ModelError(f"{self.stmt.name} has {len(iters)} loop dimensions, {len(coeffs)} coefficients given")
        self.sliders = [w.IntSlider(value=int(c), min=bounds[0], max=bounds[1], description=f"a_{it}",
                                    continuous_update=False) for c, it in zip(coeffs, iters)]
        space = self.domain.get_space()
        self._deltas = [(d, geometry.anonymous_deltas(d.relation)) for d in self.views]
        self._space = space
        self.sp = plots.SpacePlot(len(iters), iters, title="")
        self.fig = self.sp.fig
        self.sp.set_points(self.points, plots.POINT_COLOR)
        self._draw_arrows(self.sp)
        self.sp.legend()
        self.sp.freeze_limits()
        self._title("colour = wave \u03b8")
        self._freeze_layout()
        self.state: dict[str, Any] = {}
        for s in self.sliders:
            s.observe(self._safe_update, names="value")
        self.formula = w.HTML()
        self.widget = w.VBox([w.HTML(f"<b>schedule explorer</b>: {html.escape(self.stmt.name)}: "
                                     f"<code>{html.escape(self.stmt.text)}</code> "
                                     f"({', '.join(f'{k} = {v}' for k, v in self.params.items())})"),
                              w.HBox(self.sliders[:3]), w.HBox(self.sliders[3:]), self.formula,
                              w.HBox([self.image, self.verdict]), self.error])
        self._safe_update()

    @property
    def coefficients(self) -> tuple[int, ...]:
        return tuple(int(s.value) for s in self.sliders)

    def theta_text(self) -> str:
        return geometry.linear_text(self.coefficients, self.stmt.iterators)

    def update(self) -> None:
        a = np.array(self.coefficients)
        theta = self.points @ a if len(self.points) else np.zeros(0)
        colors, norm = plots.time_colors(theta.astype(float))
        self.sp.set_colors(colors)
        self.sp.set_colorbar(norm, plots.TIME_CMAP, "")  # the title names \u03b8; tick labels may grow
        mins = []
        for d, deltas in self._deltas:
            aff = geometry.linear_aff(deltas.get_space(), a)
            m = deltas.min_val(aff)
            mins.append((d, None if m.is_nan() else (m.to_python() if m.is_int() else MINUS_INFINITY)))
        bad = [(d, m) for d, m in mins if m is not None and m < 0]
        same = [(d, m) for d, m in mins if m is not None and m == 0]
        legal = not bad
        parallel = legal and not same
        waves = len(np.unique(theta)) if len(theta) else 0
        width = int(np.max(np.unique(theta, return_counts=True)[1])) if len(theta) else 0
        pair = None
        if bad:
            scheds = self._schedules(lambda st: [geometry.linear_text(a, st.iterators)])
            dep = [self._deps[self.views.index(bad[0][0])]]
            v = self._violations(scheds, dep, True) or self._violations(scheds, dep, False)
            if v:
                pair = (v[0].source_instance, v[0].sink_instance)
        self.sp.set_highlight(*(pair if pair else (None, None)), text="violated" if pair else "")
        title = f"\u03b8({', '.join(self.stmt.iterators)}) = {self.theta_text()}"
        self._title("colour = wave " + title + ("" if legal else "  \u2014 ILLEGAL"), bad=not legal)
        self._render()
        self.formula.value = (f"<code>{html.escape(title)}</code>: schedule "
                              f"<code>[\u03b8, original order]</code>, {waves} waves, "
                              f"up to {width} points per wave; {html.escape(self._group_note())}")
        items = []
        for d, m in mins:
            mm = "\u2212\u221e" if m == MINUS_INFINITY else m
            items.append(f"<li>{html.escape(d.label)}: min \u03b8(d) = {mm}</li>")
        if not legal:
            d0 = bad[0][0]
            msg = (f"illegal: {d0.label} has \u03b8(d) < 0, so a sink would run before its source"
                   + (f" (e.g. {d0.source}{list(pair[0])} \u2192 {d0.sink}{list(pair[1])})"
                      if pair else ""))
            head = verdict_html(False, msg)
        elif not parallel:
            msg = (f"legal, but not a parallel wavefront: {same[0][0].label} has \u03b8(d) = 0 (it stays inside "
                   "a wave, so the points of a wave must run in order)")
            head = verdict_html(True, msg, warn=True)
        else:
            msg = ("legal wavefront: \u03b8(d) \u2265 1 for every dependence, so the points of one wave can run "
                   "in parallel")
            head = verdict_html(True, msg)
        self.verdict.value = f"<div style='max-width:420px'>{head}<ul>{''.join(items)}</ul></div>"
        self.state = {"coefficients": self.coefficients, "theta": self.theta_text(), "legal": legal,
                      "parallel": parallel, "waves": waves, "max_wave_width": width, "violating_pair": pair,
                      "n_points": self.sp.n_points, "message": msg,
                      "colors": np.asarray(self.sp._points[0].get_facecolors()).copy()}


# -- tiling explorer --------------------------------------------------------------------------------------

class TilingExplorer(_Explorer):
    """Tile-size sliders (and a skew) for one statement; tiles, tile waves and the verdict follow.

    With skew ``s`` the picture shows ``x' = (x_0, x_1 + s x_0, x_2 + s x_0)``; tiles are rectangles
    ``floor(x'_k / T_k)``; a tile wave is ``w = sum_k floor(x'_k / T_k)``.
    """

    def __init__(self, scop: Scop | Program | Schedule, *, statement: str | None = None,
                 params: Mapping[str, int] | None = None, deps: DependenceGraph | None = None,
                 sizes: Sequence[int] | None = None, max_size: int = 8, skew: int = 0) -> None:
        super().__init__(scop, statement=statement, params=params, deps=deps)
        w = ipywidgets
        iters = list(self.stmt.iterators)
        sizes = list(sizes) if sizes is not None else [min(4, max_size)] * len(iters)
        self.sliders = [w.IntSlider(value=int(t), min=1, max=max_size, description=f"T_{it}",
                                    continuous_update=False) for t, it in zip(sizes, iters)]
        self.skew_slider = w.IntSlider(value=int(skew), min=0, max=2, description="skew",
                                       continuous_update=False, disabled=len(iters) < 2)
        self.sp = plots.SpacePlot(len(iters), iters, title="")
        self.fig = self.sp.fig
        self.sp.set_points(self.points, plots.POINT_COLOR)
        self._skew_drawn: int | None = None
        self.state: dict[str, Any] = {}
        for s in self.sliders + [self.skew_slider]:
            s.observe(self._safe_update, names="value")
        self.widget = w.VBox([w.HTML(f"<b>tiling explorer</b>: {html.escape(self.stmt.name)}: "
                                     f"<code>{html.escape(self.stmt.text)}</code> "
                                     f"({', '.join(f'{k} = {v}' for k, v in self.params.items())})"),
                              w.HBox(self.sliders[:3] + [self.skew_slider]),
                              w.HBox([self.image, self.verdict]), self.error])
        self._safe_update()

    def _static_key(self) -> Any:
        return self._skew_drawn

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(int(s.value) for s in self.sliders)

    def _matrix(self) -> np.ndarray:
        n = len(self.stmt.iterators)
        m = np.eye(n, dtype=int)
        s = int(self.skew_slider.value)
        for k in range(1, n):
            m[k, 0] = s
        return m

    def update(self) -> None:
        m = self._matrix()
        skew = int(self.skew_slider.value)
        pts = self.points @ m.T if len(self.points) else self.points
        sizes = self.sizes
        if self._skew_drawn != skew:
            self.sp.set_points(pts, plots.POINT_COLOR)
            self._draw_arrows(self.sp, lambda a: a @ m.T if len(a) else a)
            it = list(self.stmt.iterators)
            labels = [it[0]] + [f"{x} + {skew}{it[0]}" if skew > 1 else (f"{x} + {it[0]}" if skew else x)
                                for x in it[1:]]
            self.sp.ax.set_xlabel(labels[0])
            if len(labels) > 1:
                self.sp.ax.set_ylabel(labels[1])
            if len(labels) > 2:
                self.sp.ax.set_zlabel(labels[2])
            self.sp.set_tiles([])
            self.sp.set_highlight(None, None)
            self.sp.freeze_limits()
            self.sp.legend()
            self._skew_drawn = skew
        rects, tcoord, waves = plots.tile_rectangles(pts, sizes)
        colors, norm = plots.time_colors(waves.astype(float), "plasma")
        self.sp.set_colors(colors)
        self.sp.set_colorbar(norm, "plasma", "tile wave")
        self.sp.set_tiles(rects)
        # exact legality with isl at the picture's parameters
        rows = [list(r) for r in m]
        tiled = self._schedules(lambda st: _tile_exprs(st, rows, sizes, wave=False))
        waved = self._schedules(lambda st: _tile_exprs(st, rows, sizes, wave=True))
        v_tile = self._violations(tiled, self._deps, False)
        v_wave = self._violations(waved, self._deps, False) if not v_tile else []
        # dependences between different tiles of one wave (then that wave's tiles are not independent)
        tsz = np.array(sizes)
        inner = 0
        for d, (src, dst) in zip(self.views, self.pairs):
            if len(src) == 0:
                continue
            ts = np.floor_divide(src @ m.T, tsz)
            td = np.floor_divide(dst @ m.T, tsz)
            same_wave = ts.sum(axis=1) == td.sum(axis=1)
            other_tile = np.any(ts != td, axis=1)
            inner += int(np.sum(same_wave & other_tile))
        n_waves = len(np.unique(waves)) if len(waves) else 0
        per_wave = int(np.max(np.unique(waves, return_counts=True)[1])) if len(waves) else 0
        tiles_per_wave = 0
        if len(tcoord):
            uniq = np.unique(tcoord, axis=0)
            tiles_per_wave = int(np.max(np.unique(uniq.sum(axis=1), return_counts=True)[1]))
        pair = None
        if v_tile or v_wave:
            v = (v_tile or v_wave)[0]
            pair = (v.source_instance, v.sink_instance)
            self.sp.set_highlight(tuple(np.array(pair[0]) @ m.T), tuple(np.array(pair[1]) @ m.T), "violated")
        else:
            self.sp.set_highlight(None, None)
        legal = not v_tile
        wave_ok = legal and not v_wave and inner == 0
        self._title(f"tiles {' x '.join(map(str, sizes))}" + (f", skew {skew}" if skew else "")
                    + ("" if legal else " \u2014 ILLEGAL"), bad=not legal)
        self._render()
        if not legal:
            v = v_tile[0]
            where = ", ".join(f"{k} = {x}" for k, x in v.params.items())
            msg = (f"illegal tiling: {self._label(v)} goes from tile {_tile_of(v.source_instance, m, tsz)} back to "
                   f"tile {_tile_of(v.sink_instance, m, tsz)} ({v.source} \u2192 {v.sink} at {where}); skew "
                   f"(or shift) first")
            head = verdict_html(False, msg)
        elif not wave_ok:
            msg = ("legal tiling, but the tiles of a wave are not independent"
                   + (f": {self._label(v_wave[0])}" if v_wave else f" ({inner} dependent pairs between tiles of one wave)"))
            head = verdict_html(True, msg, warn=True)
        else:
            msg = (f"legal tiling; tile waves are parallel: {n_waves} waves, up to {tiles_per_wave} tiles "
                   "per wave run at the same time")
            head = verdict_html(True, msg)
        self.verdict.value = (f"<div style='max-width:420px'>{head}<ul><li>{len(rects) or len(np.unique(tcoord, axis=0))}"
                              f" tiles, {n_waves} tile waves</li><li>largest wave: {tiles_per_wave} tiles, "
                              f"{per_wave} points</li></ul></div>")
        self.state = {"sizes": sizes, "skew": skew, "legal": legal, "waves_parallel": wave_ok,
                      "n_tiles": int(len(np.unique(tcoord, axis=0))) if len(tcoord) else 0,
                      "n_waves": n_waves, "violating_pair": pair, "n_points": self.sp.n_points,
                      "message": msg, "colors": np.asarray(self.sp._points[0].get_facecolors()).copy()}


def _canvas_png(canvas: Any) -> bytes:
    """The canvas's pixels as PNG bytes (fast compression: the image is redrawn often)."""
    import io

    from PIL import Image

    w, h = canvas.get_width_height(physical=True)
    img = Image.frombuffer("RGBA", (w, h), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buf = io.BytesIO()
    img.save(buf, format="png", compress_level=1)
    return buf.getvalue()


def _tile_of(x: Sequence[int], m: np.ndarray, tsz: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.floor_divide(np.array(x) @ m.T, tsz))


def _tile_exprs(stmt: Statement, rows: Sequence[Sequence[int]], sizes: Sequence[int], wave: bool) -> list[str]:
    """``[(w,) floor((M x)_k / T_k)]`` as isl expressions in the statement's iterators."""
    lin = [geometry.linear_text(r, stmt.iterators) for r in rows]
    tiles = [f"floor(({e})/{int(t)})" for e, t in zip(lin, sizes)]
    return ([" + ".join(tiles)] if wave else []) + tiles


# -- dependence explorer ------------------------------------------------------------------------------------

class DependenceExplorer:
    """Two dropdowns (a pair of references to one array); the textbook test and the exact answer.

    The exact answer is computed with isl: the instance pairs ``u -> v`` (``u`` before ``v`` in the original
    order) that touch the same element, split by kind, from the exact dependence graph.
    """

    def __init__(self, scop: Scop | Program | Schedule, *, deps: DependenceGraph | None = None, first: int = 0,
                 second: int | None = None,
                 params: Mapping[str, int] | None = None) -> None:
        w = ipywidgets
        self.scop = backend.as_scop(scop)
        self.params = dict(params or {})
        self.deps = deps if deps is not None else backend.dependences(self.scop, kinds=("flow", "anti",
                                                                                         "output", "input"))
        self.refs = [(s, a) for s in self.scop.statements for a in s.accesses]
        options = [(f"{s.name}: {a.text} ({a.kind})", k) for k, (s, a) in enumerate(self.refs)]
        if not options:
            raise ModelError("the SCoP has no array references")
        if second is None:
            second = next((k for k, (s, a) in enumerate(self.refs)
                           if k != first and a.array == self.refs[first][1].array), first)
        self.first = w.Dropdown(options=options, value=first, description="reference 1")
        self.second = w.Dropdown(options=options, value=second, description="reference 2")
        self.textbook = w.HTMLMath()
        self.exact = w.HTML()
        self.error = w.HTML()
        self.last_error: BaseException | None = None
        self.last_latency = 0.0
        self.latencies: list[float] = []
        self.state: dict[str, Any] = {}
        self.first.observe(self._safe_update, names="value")
        self.second.observe(self._safe_update, names="value")
        box = w.Layout(width="50%", padding="0 8px")
        self.widget = w.VBox([w.HTML("<b>dependence explorer</b>: the textbook test beside the exact answer"),
                              w.HBox([self.first, self.second]),
                              w.HBox([w.VBox([w.HTML("<h4>textbook</h4>"), self.textbook], layout=box),
                                      w.VBox([w.HTML("<h4>exact (isl)</h4>"), self.exact], layout=box)]),
                              self.error])
        self._safe_update()

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _safe_update(self, change: Any = None) -> None:
        t0 = time.perf_counter()
        try:
            self.update()
            self.error.value = ""
            self.last_error = None
        except Exception as exc:  # any failure of a redraw is shown in the widget and kept, never lost
            self.last_error = exc
            self.error.value = _error_html(exc)
        self.last_latency = time.perf_counter() - t0
        self.latencies.append(self.last_latency)

    def update(self) -> None:
        s1, a1 = self.refs[self.first.value]
        s2, a2 = self.refs[self.second.value]
        self.textbook.value = _textbook_html(self.scop, s1, a1, s2, a2, self.params)
        found = [d for d in self.deps.dependences
                 if {(d.source, d.source_access), (d.sink, d.sink_access)} == {(s1.name, a1.index), (s2.name, a2.index)}]
        if a1.array != a2.array:
            verdict = f"independent: they access different arrays ({a1.array}, {a2.array})"
            body = verdict_html(True, verdict)
        elif a1.kind == "read" and a2.kind == "read" and not found:
            verdict = "no dependence that constrains order (two reads); no input dependence either"
            body = verdict_html(True, verdict)
        elif not found:
            verdict = "independent: no pair of instances touches the same element"
            body = verdict_html(True, verdict)
        else:
            verdict = "dependent: " + ", ".join(sorted({d.kind for d in found}))
            rows = []
            for d in found:
                dist = d.distance_description
                carried = d.carried_text()
                rows.append(f"<li><b>{html.escape(d.kind)}</b> {html.escape(d.source)} \u2192 {html.escape(d.sink)}: "
                            f"distance {html.escape(str(dist))}; carried: {html.escape(carried)}<br>"
                            f"<code>{html.escape(str(d.relation))}</code></li>")
            body = verdict_html(False, verdict, warn=True) + "<ul>" + "".join(rows) + "</ul>"
        self.exact.value = body
        self.state = {"first": f"{s1.name}: {a1.text}", "second": f"{s2.name}: {a2.text}",
                      "exact": verdict, "kinds": sorted({d.kind for d in found}),
                      "textbook": self.textbook.value}


def _textbook_html(scop: Scop, s1: Statement, a1: Access, s2: Statement, a2: Access,
                   params: Mapping[str, int] | None = None) -> str:
    """The analysis layer's textbook test for the pair (its HTML); why there is none for references to
    different arrays or with subscripts that are not affine."""
    if a1.array != a2.array or a1.matrix is None or a2.matrix is None:
        return _equations_html(s1, a1, s2, a2)
    report = textbook_test(scop, (s1.name, a1.index), (s2.name, a2.index), params=dict(params or {}) or None)
    return report._repr_html_()


def _equations_html(s1: Statement, a1: Access, s2: Statement, a2: Access) -> str:
    """``F1 x1 + c1 = F2 x2 + c2``, one equation per subscript (when both accesses are affine)."""
    if a1.array != a2.array:
        return (f"different arrays: <code>{html.escape(a1.array)}</code> and <code>{html.escape(a2.array)}</code>; "
                "no subscript equations to solve: the references never touch the same element")
    if a1.matrix is None or a2.matrix is None:
        return "a subscript is not affine without division: no textbook equations"
    import sympy

    x1 = [sympy.Symbol(f"{v}\u2081") for v in s1.iterators]
    x2 = [sympy.Symbol(f"{v}\u2082") for v in s2.iterators]
    eqs = []
    for r in range(a1.matrix.rows):
        lhs = sum(a1.matrix[r, k] * x1[k] for k in range(len(x1))) + a1.offset[r]
        rhs = sum(a2.matrix[r, k] * x2[k] for k in range(len(x2))) + a2.offset[r]
        eqs.append(f"{sympy.sstr(lhs)} = {sympy.sstr(rhs)}")
    return ("<div>F\u2081 x\u2081 + c\u2081 = F\u2082 x\u2082 + c\u2082:</div><ul>"
            + "".join(f"<li><code>{html.escape(e)}</code></li>" for e in eqs) + "</ul>")
