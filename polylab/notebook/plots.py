"""Pictures of the polyhedral model with matplotlib (Agg-safe: every function returns a ``Figure``).

* :func:`iteration_space`: the integer points of the iteration domains (2D, 3D scatter or 3D as slices),
  dependence arrows coloured by kind, points coloured by their time under a schedule (wavefronts), and a
  violating pair of instances marked;
* :func:`tiles`: rectangular tiles of a statement's domain and the tile waves (tiles of one wave may run in
  parallel);
* :func:`dependence_graph`: statements as nodes, one arrow per (kind, source, sink) with the arrays;
* :func:`timing_chart`: run times of variants with their spread and speedups.

Every point is enumerated by isl at fixed, small parameter values (:mod:`polylab.notebook.geometry`); the
library never calls ``plt.show``: a notebook displays the returned figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import islpy as isl
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib import colormaps

from polylab.analysis import Dependence, DependenceGraph
from polylab.errors import ModelError
from polylab.experiment import MIN_TIMED_SECONDS, RunReport
from polylab.model import Program, Scop
from polylab.model.islutil import maps_of, sets_of
from polylab.notebook import geometry
from polylab.schedule import Schedule, Violation
from polylab.toolchain import Timing

#: colours of the dependence kinds (flow = RAW, anti = WAR, output = WAW, input = RAR)
KIND_COLORS = {"flow": "#d62728", "anti": "#1f77b4", "output": "#2ca02c", "input": "#9a9a9a"}
KIND_LABELS = {"flow": "flow (RAW)", "anti": "anti (WAR)", "output": "output (WAW)", "input": "input (RAR)"}
#: colours of statements when points are not coloured by time
STATEMENT_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
POINT_COLOR = "#4c72b0"
TIME_CMAP = "viridis"


# -- inputs ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DepView:
    """What a picture needs of a dependence: its kind, a label, its isl relation ``{ S[u] -> T[v] }`` and
    the array (when known)."""

    kind: str
    label: str
    relation: isl.Map
    array: str = ""

    @property
    def source(self) -> str:
        return self.relation.get_tuple_name(isl.dim_type.in_) or ""

    @property
    def sink(self) -> str:
        return self.relation.get_tuple_name(isl.dim_type.out) or ""


#: what the pictures accept as dependences: the analysis layer's values, views, ``(kind, map)`` or
#: ``(kind, label, map)`` pairs, or plain isl relations (drawn as flow dependences)
Dependences = (DependenceGraph | Iterable[Dependence | DepView | tuple[str, isl.Map] | tuple[str, str, isl.Map]]
               | isl.Map | isl.UnionMap)
#: what the pictures draw points of: a SCoP (or a program's first one) or isl sets
Model = Scop | Program | isl.Set | isl.UnionSet
#: a schedule to colour points by: the schedule layer's value or an isl map ``{ S[x] -> [t] }`` (or its text)
TimeMap = Schedule | isl.Map | isl.UnionMap | str


def dependence_label(dep: Dependence) -> str:
    """``flow (RAW) S0 a[i][j] -> S0 a[i - 1][j]``: the dependence's own label, with an arrow."""
    return dep.label.replace(" -> ", " \u2192 ")


def as_dep_views(deps: Dependences | None) -> list[DepView]:
    """The :class:`DepView` of each dependence of ``deps`` (see :data:`Dependences`)."""
    if deps is None:
        return []
    if isinstance(deps, DependenceGraph):
        deps = deps.dependences
    if isinstance(deps, isl.UnionMap):
        return [DepView("flow", f"{m.get_tuple_name(isl.dim_type.in_)} \u2192 "
                        f"{m.get_tuple_name(isl.dim_type.out)}", m) for m in maps_of(deps)]
    if isinstance(deps, isl.Map):
        return [DepView("flow", "dependence", deps)]
    out = []
    for d in deps:
        if isinstance(d, DepView):
            out.append(d)
        elif isinstance(d, Dependence):
            out.append(DepView(d.kind, dependence_label(d), d.relation, d.array))
        else:
            kind, rel = d[0], d[-1]
            out.append(DepView(kind, d[1] if len(d) == 3 else kind, rel))
    return out


def _statement_domains(obj: Model, statements: Sequence[str] | None) -> list[tuple[str, isl.Set, tuple]]:
    """``(name, domain, iterator names)`` of the statements to draw."""
    if isinstance(obj, Program):
        obj = obj.scop
    if isinstance(obj, Scop):
        out = [(s.name, s.domain, tuple(s.iterators)) for s in obj.statements]
    else:
        out = []
        for s in sets_of(obj):
            n = s.dim(isl.dim_type.set)
            out.append((s.get_tuple_name() or "", s,
                        tuple(s.get_dim_name(isl.dim_type.set, k) or f"x{k}" for k in range(n))))
    if statements is not None:
        known = {n for n, _, _ in out}
        for name in statements:
            if name not in known:
                raise ModelError(f"no statement named {name!r}",
                                 hint=f"the statements are {', '.join(sorted(known))}")
        out = [t for t in out if t[0] in statements]
    return out


def _params_for(obj: Model, params: Mapping[str, int] | None) -> dict[str, int]:
    if isinstance(obj, Program):
        obj = obj.scop
    if isinstance(obj, Scop):
        return geometry.picture_params(obj, params)
    out = dict(params or {})
    names = [obj.get_dim_name(isl.dim_type.param, k) for k in range(obj.dim(isl.dim_type.param))]
    for n in names:
        out.setdefault(n, geometry.DEFAULT_PICTURE_SIZE)
    return out


def time_map(schedule: TimeMap) -> isl.UnionMap:
    """``{ S[x] -> [t] }`` of a schedule value (on its domains) or of an isl map."""
    if isinstance(schedule, Schedule):
        return schedule.union_map
    if isinstance(schedule, isl.Map):
        return isl.UnionMap.from_map(schedule)
    if isinstance(schedule, str):
        return isl.UnionMap(schedule)
    return schedule


def instance_times(schedule: TimeMap, name: str, pts: np.ndarray, domain: isl.Set,
                   values: Mapping[str, int]) -> np.ndarray:
    """Time vectors of the points ``pts`` of statement ``name`` under ``schedule`` (rows align with ``pts``)."""
    maps = [m for m in maps_of(time_map(schedule)) if m.get_tuple_name(isl.dim_type.in_) == name]
    if not maps or len(pts) == 0:
        return np.zeros((len(pts), 1), dtype=int)
    m = maps[0].intersect_domain(domain)
    src, dst = geometry.pairs(m, values)
    index = {tuple(p): k for k, p in enumerate(src.tolist())}
    out = np.zeros((len(pts), dst.shape[1] if dst.ndim == 2 else 0), dtype=int)
    for k, p in enumerate(pts.tolist()):
        j = index.get(tuple(p))
        if j is not None:
            out[k] = dst[j]
    return out


def wave_numbers(times: np.ndarray) -> tuple[np.ndarray, int]:
    """The first time dimension that is not constant (the wave), and its index (0 when all constant)."""
    if times.size == 0:
        return np.zeros(len(times)), 0
    for d in range(times.shape[1]):
        if len(np.unique(times[:, d])) > 1:
            return times[:, d].astype(float), d
    return times[:, 0].astype(float), 0


# -- the drawing surface reused by figures and explorers ------------------------------------------------

class SpacePlot:
    """One figure with one (2D or 3D) axes whose artists can be updated in place.

    The explorers keep one ``SpacePlot`` and call :meth:`set_points`, :meth:`set_colors`, :meth:`set_arrows`,
    :meth:`set_highlight`, :meth:`set_tiles`; figures built by the functions below use it once.
    """

    def __init__(self, dims: int, labels: Sequence[str] = (), *, figsize=None, title: str = "",
                 fig: Figure | None = None, ax=None) -> None:
        if dims > 3:
            raise ModelError(f"cannot draw {dims} dimensions",
                             hint="pictures show up to three loop dimensions; pick a statement with fewer")
        self.dims = max(1, dims)
        self.fig = fig if fig is not None else Figure(figsize=figsize or ((6.4, 5.6) if dims == 3 else (5.4, 5)),
                                                      layout="constrained")
        if ax is None:
            ax = self.fig.add_subplot(projection="3d" if self.dims == 3 else None)
        self.ax = ax
        self.labels = list(labels) + [f"x{k}" for k in range(len(labels), self.dims)]
        self._points = None
        self._arrows: dict[str, Any] = {}
        self._highlight: list = []
        self._tiles: list = []
        self._colorbar = None
        self.n_points = 0
        ax.set_xlabel(self.labels[0])
        if self.dims >= 2:
            ax.set_ylabel(self.labels[1])
        if self.dims == 3:
            ax.set_zlabel(self.labels[2])
        if self.dims < 3:
            ax.set_aspect("equal", adjustable="datalim")
            ax.grid(True, color="#e6e6e6", linewidth=0.6, zorder=0)
            ax.set_axisbelow(True)
        if title:
            ax.set_title(title, fontsize=10)

    # coordinates: 1D domains are drawn on a line (y = 0)
    def _xyz(self, pts: np.ndarray) -> list[np.ndarray]:
        pts = np.asarray(pts, dtype=float)
        pts = pts.reshape(len(pts), -1) if len(pts) else np.zeros((0, max(2, self.dims)))  # nothing runs
        cols = [pts[:, k] if k < pts.shape[1] else np.zeros(len(pts)) for k in range(max(2, self.dims))]
        return cols

    def set_points(self, pts: np.ndarray, colors: Any = POINT_COLOR, size: float | None = None,
                   marker: str = "o", label: str | None = None) -> Any:
        """Draw (or replace) the points; ``colors`` is one colour or one RGBA row per point."""
        n = len(pts)
        size = size if size is not None else _marker_size(n, self.dims)
        if self._points is not None and self._points[1] == n and self.dims < 3:
            sc = self._points[0]
            sc.set_offsets(np.column_stack(self._xyz(pts)[:2]) if n else np.zeros((0, 2)))
            sc.set_facecolors(colors)
            self.n_points = n
            return sc
        if self._points is not None:
            self._points[0].remove()
        xyz = self._xyz(pts)
        if self.dims == 3:
            sc = self.ax.scatter(xyz[0], xyz[1], xyz[2], c=colors if not isinstance(colors, str) else None,
                                 color=colors if isinstance(colors, str) else None, s=size,
                                 marker=marker, depthshade=False, edgecolors="none", label=label)
        else:
            sc = self.ax.scatter(xyz[0], xyz[1], s=size, marker=marker, zorder=3, edgecolors="none",
                                 c=colors if not isinstance(colors, str) else None,
                                 color=colors if isinstance(colors, str) else None, label=label)
            _integer_ticks(self.ax, pts)
        self._points = (sc, n)
        self.n_points = n
        return sc

    def add_points(self, pts: np.ndarray, color: str, label: str, marker: str = "o") -> Any:
        """Extra points (another statement) that are not updated later."""
        xyz = self._xyz(pts)
        size = _marker_size(len(pts), self.dims)
        if self.dims == 3:
            return self.ax.scatter(xyz[0], xyz[1], xyz[2], color=color, s=size, marker=marker,
                                   depthshade=False, edgecolors="none", label=label)
        return self.ax.scatter(xyz[0], xyz[1], color=color, s=size, marker=marker, zorder=3,
                               edgecolors="none", label=label)

    def freeze_limits(self) -> None:
        """Fix the view limits to what is drawn now (later marks, tiles and rings do not move them)."""
        ax = self.ax
        ax.set_autoscale_on(True)
        ax.relim()
        ax.autoscale_view()
        if self.dims < 3:
            ax.apply_aspect()
        if self.dims < 3:
            ax.set_adjustable("box")
        ax.set_xlim(ax.get_xlim())
        ax.set_ylim(ax.get_ylim())
        if self.dims == 3:
            ax.set_zlim(ax.get_zlim())
        ax.set_autoscale_on(False)

    def set_colors(self, colors: Any) -> None:
        if self._points is not None:
            self._points[0].set_facecolors(colors)

    def set_arrows(self, key: str, src: np.ndarray, dst: np.ndarray, label: str | None = None,
                   color: str | None = None, kind: str | None = None) -> None:
        """Draw (or replace) the arrows ``key`` (usually a dependence kind) from ``src`` to ``dst`` points.

        In 2D, arrows of different kinds are shifted slightly sideways so that a flow and an anti
        dependence between the same points both stay visible."""
        old = self._arrows.pop(key, None)
        if old is not None:
            old.remove()
        if len(src) == 0:
            return
        kind = kind or key
        color = color or KIND_COLORS.get(kind, "black")
        a, b = self._xyz(src), self._xyz(dst)
        if self.dims == 3:
            art = self.ax.quiver(a[0], a[1], a[2], b[0] - a[0], b[1] - a[1], b[2] - a[2], color=color,
                                 arrow_length_ratio=0.25, linewidth=0.8, alpha=0.75,
                                 label=label or KIND_LABELS.get(kind, kind))
        else:
            d = np.hypot(b[0] - a[0], b[1] - a[1])
            shrink = np.where(d > 0, 0.16 / np.maximum(d, 1e-9), 0)
            span = max(1.0, float(np.ptp(np.concatenate([a[0], b[0]]))), float(np.ptp(np.concatenate([a[1], b[1]]))))
            width = min(0.006, 0.07 / span)
            side = {"flow": 0.0, "anti": 0.11, "output": -0.11, "input": 0.2}.get(kind, 0.0)
            ux = np.where(d > 0, -(b[1] - a[1]) / np.maximum(d, 1e-9), 0)
            uy = np.where(d > 0, (b[0] - a[0]) / np.maximum(d, 1e-9), 0)
            x0 = a[0] + (b[0] - a[0]) * shrink + side * ux
            y0 = a[1] + (b[1] - a[1]) * shrink + side * uy
            dx = (b[0] - a[0]) * (1 - 2 * shrink)
            dy = (b[1] - a[1]) * (1 - 2 * shrink)
            art = self.ax.quiver(x0, y0, dx, dy, angles="xy", scale_units="xy", scale=1, color=color,
                                 width=width, headwidth=3.5, headlength=4, headaxislength=3.6, alpha=0.85,
                                 zorder=4, label=label or KIND_LABELS.get(kind, kind))
        self._arrows[key] = art

    def clear_arrows(self) -> None:
        for k in list(self._arrows):
            self._arrows.pop(k).remove()

    def set_highlight(self, u: Sequence[int] | None, v: Sequence[int] | None, text: str = "") -> None:
        """Mark a violating pair ``u -> v`` (two ringed points and a thick arrow); None removes it."""
        for art in self._highlight:
            art.remove()
        self._highlight = []
        if u is None or v is None:
            return
        a, b = self._xyz(np.array([u])), self._xyz(np.array([v]))
        if self.dims == 3:
            self._highlight.append(self.ax.scatter([a[0][0], b[0][0]], [a[1][0], b[1][0]], [a[2][0], b[2][0]],
                                                   s=160, facecolors="none", edgecolors="#e41a1c",
                                                   linewidths=2.2, depthshade=False))
            self._highlight.append(self.ax.quiver(a[0][0], a[1][0], a[2][0], b[0][0] - a[0][0],
                                                  b[1][0] - a[1][0], b[2][0] - a[2][0], color="#e41a1c",
                                                  linewidth=2.5, arrow_length_ratio=0.3))
            if text:
                self._highlight.append(self.ax.text(b[0][0], b[1][0], b[2][0], "  " + text,
                                                    color="#e41a1c", fontsize=9, weight="bold"))
        else:
            self._highlight.append(self.ax.scatter([a[0][0], b[0][0]], [a[1][0], b[1][0]], s=220,
                                                   facecolors="none", edgecolors="#e41a1c", linewidths=2.2,
                                                   zorder=6))
            self._highlight.append(self.ax.annotate(
                "", xy=(b[0][0], b[1][0]), xytext=(a[0][0], a[1][0]), zorder=7,
                arrowprops=dict(arrowstyle="-|>", color="#e41a1c", lw=2.5, shrinkA=6, shrinkB=6)))
            if text:
                self._highlight.append(self.ax.annotate(
                    text, xy=(b[0][0], b[1][0]), xytext=(8, 8), textcoords="offset points", color="#e41a1c",
                    fontsize=9, weight="bold", zorder=7,
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="#e41a1c", alpha=0.9)))

    def set_tiles(self, rects: Sequence[tuple[float, float, float, float]], colors: Sequence | None = None
                  ) -> None:
        """Draw (or replace) tile outlines ``(x0, y0, width, height)`` in a 2D picture."""
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Rectangle

        for art in self._tiles:
            art.remove()
        self._tiles = []
        if self.dims == 3 or not rects:
            return
        patches = [Rectangle((x0, y0), w, h) for x0, y0, w, h in rects]
        fc = colors if colors is not None else "none"
        pc = PatchCollection(patches, facecolors=fc, edgecolors="#333333", linewidths=1.2, alpha=0.25
                             if colors is not None else 1.0, zorder=1)
        self.ax.add_collection(pc, autolim=not self._frozen())
        edge = PatchCollection([Rectangle((x0, y0), w, h) for x0, y0, w, h in rects], facecolors="none",
                               edgecolors="#333333", linewidths=1.2, zorder=2)
        self.ax.add_collection(edge, autolim=not self._frozen())
        self._tiles = [pc, edge]

    def _frozen(self) -> bool:
        return not self.ax.get_autoscale_on()

    def set_colorbar(self, norm: Normalize, cmap: str, label: str) -> None:
        from matplotlib.cm import ScalarMappable

        sm = ScalarMappable(norm=norm, cmap=cmap)
        if self._colorbar is None:
            self._colorbar = self.fig.colorbar(sm, ax=self.ax, shrink=0.8, pad=0.1 if self.dims == 3 else 0.02)
        else:
            self._colorbar.update_normal(sm)
        self._colorbar.set_label(label)

    def legend(self) -> None:
        handles, labels = self.ax.get_legend_handles_labels()
        if handles:
            self.ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.12 if self.dims < 3
                                                                                 else -0.02),
                           ncol=min(3, len(handles)), fontsize=8, frameon=False, borderaxespad=0)


def _marker_size(n: int, dims: int) -> float:
    if dims == 3:
        return max(6.0, min(40.0, 4000.0 / max(n, 1)))
    return max(10.0, min(70.0, 9000.0 / max(n, 1)))


def _integer_ticks(ax, pts: np.ndarray) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def time_colors(values: np.ndarray, cmap: str = TIME_CMAP) -> tuple[np.ndarray, Normalize]:
    """RGBA rows for the scalar ``values`` (one per point) and the normalisation used."""
    if len(values) == 0:
        return np.zeros((0, 4)), Normalize(0, 1)
    lo, hi = float(np.min(values)), float(np.max(values))
    norm = Normalize(lo, hi if hi > lo else lo + 1)
    return colormaps[cmap](norm(values)), norm


def _sample_pairs(src: np.ndarray, dst: np.ndarray, max_arrows: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_arrows`` pairs, chosen as all pairs whose source lies on a regular sub-lattice
    (every ``step``-th point in each dimension), so the picture shows the dependence pattern evenly."""
    if len(src) <= max_arrows:
        return src, dst
    base = src.min(axis=0)
    for step in range(2, 64):
        keep = np.all((src - base) % step == step // 2, axis=1)
        if 0 < keep.sum() <= max_arrows:
            return src[keep], dst[keep]
    idx = np.linspace(0, len(src) - 1, max_arrows).astype(int)
    return src[idx], dst[idx]


# -- figures ---------------------------------------------------------------------------------------------

HighlightPair = tuple[Sequence[int], Sequence[int]] | Violation


def iteration_space(model: Model, deps: Dependences | None = None, *, params: Mapping[str, int] | None = None,
                    statements: Sequence[str] | None = None, schedule: TimeMap | None = None,
                    kinds: Iterable[str] | None = ("flow", "anti", "output"),
                    highlight: HighlightPair | None = None,
                    mode: str = "scatter", max_arrows: int = 400, title: str | None = None,
                    figsize=None) -> Figure:
    """The iteration space of ``model`` (a Scop, Program, ``isl.Set`` or ``isl.UnionSet``) at ``params``.

    ``deps`` adds dependence arrows ``u -> v`` (only between statements drawn in the same coordinates),
    coloured by kind; ``schedule`` colours each point by its wave (the first non-constant dimension of its
    time vector); ``highlight`` is a violating pair ``(u, v)`` (or a
    :class:`~polylab.schedule.Violation`) drawn in red. Statements of different depths are padded with zeros; three dimensions
    are drawn as a 3D scatter (``mode="scatter"``) or as one panel per value of the first iterator
    (``mode="slices"``).
    """
    doms = _statement_domains(model, statements)
    values = _params_for(model, params)
    dims = max((len(it) for _, _, it in doms), default=1)
    if dims > 3:
        raise ModelError(f"cannot draw the {dims}-dimensional iteration space",
                         hint="pictures show up to three loop dimensions; pass statements=[...] to pick some")
    labels = list(max((it for _, _, it in doms), key=len)) if doms else []
    pts = {name: geometry.points(dom, values) for name, dom, _ in doms}
    views = [d for d in as_dep_views(deps) if kinds is None or d.kind in set(kinds)]
    views = [d for d in views if d.source in pts and d.sink in pts]
    suffix = ", ".join(f"{k} = {v}" for k, v in values.items())
    title = title if title is not None else (
        ("iteration space" + (" and dependences" if views else "")) + (f" ({suffix})" if suffix else ""))
    if dims == 3 and mode == "slices":
        return _slices(doms, pts, views, values, schedule, labels, title, max_arrows, figsize)
    sp = SpacePlot(dims, labels, figsize=figsize, title=title)
    _draw_statements(sp, doms, pts, schedule, values)
    _draw_deps(sp, views, values, max_arrows)
    u, v = _highlight_pair(highlight)
    if u is not None:
        sp.set_highlight(u, v, "violated")
    sp.legend()
    return sp.fig


def _highlight_pair(h: HighlightPair | None) -> tuple[Any, Any]:
    if h is None:
        return None, None
    if isinstance(h, Violation):
        return h.source_instance, h.sink_instance
    return tuple(h[0]), tuple(h[1])


def _draw_statements(sp: SpacePlot, doms, pts, schedule, values) -> None:
    multi = len(doms) > 1
    if schedule is None:
        for k, (name, _, _) in enumerate(doms):
            color = STATEMENT_COLORS[k % len(STATEMENT_COLORS)]
            if k == 0:
                sp.set_points(pts[name], color, label=name if multi else None)
            else:
                sp.add_points(pts[name], color, name, marker="os^Dv"[k % 5])
        return
    waves, dims_used = {}, 0
    for name, dom, _ in doms:
        t = instance_times(schedule, name, pts[name], dom, values)
        waves[name], d = wave_numbers(t)
        dims_used = max(dims_used, d)
    allw = np.concatenate([w for w in waves.values()]) if waves else np.zeros(0)
    _, norm = time_colors(allw)
    cmap = colormaps[TIME_CMAP]
    for k, (name, _, _) in enumerate(doms):
        colors = cmap(norm(waves[name])) if len(waves[name]) else "k"
        if k == 0:
            sp.set_points(pts[name], colors, label=name if multi else None)
        else:
            sc = sp.add_points(pts[name], "k", name, marker="os^Dv"[k % 5])
            sc.set_facecolors(colors)
    sp.set_colorbar(norm, TIME_CMAP, f"time (schedule dimension {dims_used})")


def _draw_deps(sp: SpacePlot, views: list[DepView], values, max_arrows: int) -> None:
    by_kind: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for d in views:
        src, dst = geometry.pairs(d.relation, values)
        by_kind.setdefault(d.kind, []).append((src, dst))
    for kind, lst in by_kind.items():
        width = max((a.shape[1] for a, _ in lst), default=0)
        src = np.concatenate([_pad(a, width) for a, _ in lst]) if lst else np.zeros((0, 0))
        dst = np.concatenate([_pad(b, width) for _, b in lst]) if lst else np.zeros((0, 0))
        total = len(src)
        src, dst = _sample_pairs(src, dst, max_arrows)
        label = KIND_LABELS.get(kind, kind) + (f" ({len(src)} of {total} pairs)" if total > len(src) else "")
        sp.set_arrows(kind, src, dst, label=label)


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    if a.shape[1] >= width:
        return a
    return np.hstack([a, np.zeros((len(a), width - a.shape[1]), dtype=a.dtype)])


def _slices(doms, pts, views, values, schedule, labels, title, max_arrows, figsize) -> Figure:
    firsts = sorted({int(p[0]) for name in pts for p in pts[name]})
    firsts = firsts[:8]
    ncols = min(4, max(1, len(firsts)))
    nrows = max(1, math.ceil(len(firsts) / ncols))
    fig = Figure(figsize=figsize or (3.0 * ncols + 1, 3.0 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    dep_pairs = [(d, *geometry.pairs(d.relation, values)) for d in views]
    for ax, v0 in zip(axes.flat, firsts):
        sp = SpacePlot(2, labels[1:], fig=fig, ax=ax, title=f"{labels[0]} = {v0}")
        sub = {n: p[p[:, 0] == v0][:, 1:] for n, p in pts.items()}
        for k, (name, _, _) in enumerate(doms):
            color = STATEMENT_COLORS[k % len(STATEMENT_COLORS)]
            (sp.set_points if k == 0 else sp.add_points)(sub[name], color, label=name)
        for d, src, dst in dep_pairs:
            keep = (src[:, 0] == v0) & (dst[:, 0] == v0) if len(src) else np.zeros(0, dtype=bool)
            if keep.any():
                sp.set_arrows(d.kind + d.label, src[keep][:, 1:], dst[keep][:, 1:], kind=d.kind)
    for ax in list(axes.flat)[len(firsts):]:
        ax.set_visible(False)
    kinds = [k for k in KIND_COLORS if any(d.kind == k for d in views)]
    if kinds:
        from matplotlib.lines import Line2D

        fig.legend([Line2D([], [], color=KIND_COLORS[k], lw=2) for k in kinds], [KIND_LABELS[k] for k in kinds],
                   loc="outside lower center", ncol=len(kinds), fontsize=8, frameon=False)
    fig.suptitle(title + " \u2014 slices; arrows within a slice", fontsize=10)
    return fig


def wavefront(model: Model, schedule: TimeMap, deps: Dependences | None = None, **kwargs: Any) -> Figure:
    """:func:`iteration_space` with the points coloured by their time under ``schedule`` (the waves)."""
    kwargs.setdefault("title", "points coloured by their time under the schedule")
    return iteration_space(model, deps, schedule=schedule, **kwargs)


def tile_rectangles(pts: np.ndarray, sizes: Sequence[int]) -> tuple[list, np.ndarray, np.ndarray]:
    """Rectangles ``(x0, y0, w, h)`` of the non-empty 2D tiles of ``pts``, each point's tile coordinates
    ``floor(x / T)`` and the tile wave of each point (the sum of its tile coordinates)."""
    sizes = [max(1, int(s)) for s in sizes]
    if len(pts) == 0:
        return [], np.zeros((0, len(sizes)), dtype=int), np.zeros(0, dtype=int)
    tcoord = np.floor_divide(pts[:, :len(sizes)], np.array(sizes))
    waves = tcoord.sum(axis=1)
    rects = []
    if pts.shape[1] >= 2 and len(sizes) >= 2:
        for t in np.unique(tcoord[:, :2], axis=0):
            rects.append((t[0] * sizes[0] - 0.5, t[1] * sizes[1] - 0.5, sizes[0], sizes[1]))
    elif pts.shape[1] >= 1:
        for t in np.unique(tcoord[:, :1], axis=0):
            rects.append((t[0] * sizes[0] - 0.5, -0.5, sizes[0], 1))
    return rects, tcoord, waves


def tiles(model: Model, sizes: Sequence[int], deps: Dependences | None = None, *, statement: str | None = None,
          params: Mapping[str, int] | None = None, waves: bool = True, title: str | None = None,
          figsize=None) -> Figure:
    """Rectangular tiles of one statement's domain: tile outlines and points coloured by tile wave
    ``w = sum_k floor(x_k / T_k)`` (tiles of one wave are independent when every dependence distance is
    non-negative in the tiled dimensions)."""
    doms = _statement_domains(model, [statement] if statement else None)
    if not doms:
        raise ModelError("nothing to tile: no statements")
    name, dom, labels = max(doms, key=lambda t: len(t[2])) if statement is None else doms[0]
    values = _params_for(model, params)
    pts = geometry.points(dom, values)
    dims = len(labels)
    sp = SpacePlot(dims, labels, figsize=figsize,
                   title=title or f"{name}: tiles {' x '.join(map(str, sizes))}"
                   + (" coloured by tile wave" if waves else ""))
    rects, tcoord, w = tile_rectangles(pts, sizes)
    if waves:
        colors, norm = time_colors(w.astype(float), "plasma")
        sp.set_points(pts, colors)
        sp.set_colorbar(norm, "plasma", "tile wave (sum of tile coordinates)")
    else:
        sp.set_points(pts, POINT_COLOR)
    sp.set_tiles(rects)
    views = [d for d in as_dep_views(deps) if d.source == name and d.sink == name]
    _draw_deps(sp, views, values, 300)
    sp.legend()
    return sp.fig


def dependence_graph(deps: Dependences, statements: Sequence[str] | None = None, *, title: str | None = None,
                     figsize=None) -> Figure:
    """The statement-level dependence graph: one node per statement, one arrow per (source, sink, kind)
    labelled with the arrays, self-dependences as loops."""
    from matplotlib.patches import FancyArrowPatch

    views = as_dep_views(deps)
    if isinstance(deps, DependenceGraph) and statements is None:
        statements = [s.name for s in deps.scop.statements]
    names = list(statements or sorted({d.source for d in views} | {d.sink for d in views}))
    edges: dict[tuple[str, str, str], set[str]] = {}
    for d in views:
        edges.setdefault((d.source, d.sink, d.kind), set()).add(d.array or d.label.split(" on ")[-1])
    n = max(1, len(names))
    fig = Figure(figsize=figsize or (max(4.0, 2.2 * min(n, 5)), 3.6 if n <= 3 else 4.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    if n <= 3:
        pos = {s: (k * 2.0, 0.0) for k, s in enumerate(names)}
    else:
        pos = {s: (2.0 * math.cos(2 * math.pi * k / n), 2.0 * math.sin(2 * math.pi * k / n))
               for k, s in enumerate(names)}
    for s, (x, y) in pos.items():
        ax.add_patch(_circle((x, y)))
        ax.text(x, y, s, ha="center", va="center", fontsize=11, weight="bold", zorder=5)
    kinds_order = ["flow", "anti", "output", "input"]
    for (a, b, kind), arrs in sorted(edges.items(), key=lambda e: (e[0][0], e[0][1], kinds_order.index(e[0][2])
                                                                     if e[0][2] in kinds_order else 9)):
        if a not in pos or b not in pos:
            continue
        color = KIND_COLORS.get(kind, "black")
        k = kinds_order.index(kind) if kind in kinds_order else 0
        label = f"{kind}: {', '.join(sorted(arrs))}"
        (x0, y0), (x1, y1) = pos[a], pos[b]
        if a == b:
            loop = FancyArrowPatch((x0 - 0.12, y0 + 0.3), (x0 + 0.12, y0 + 0.3),
                                   connectionstyle=f"arc3,rad=-{2.2 + 0.3 * k}", arrowstyle="-|>",
                                   mutation_scale=12, color=color, lw=1.5, zorder=3)
            ax.add_patch(loop)
            ax.text(x0, y0 + 0.95 + 0.22 * k, label, color=color, ha="center", fontsize=8)
        else:
            rad = 0.15 + 0.12 * k
            arr = FancyArrowPatch((x0, y0), (x1, y1), connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>",
                                  mutation_scale=14, color=color, lw=1.5, shrinkA=22, shrinkB=22, zorder=3)
            ax.add_patch(arr)
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            dx, dy = x1 - x0, y1 - y0
            ax.text(mx + dy * rad * 0.7, my - dx * rad * 0.7 - 0.08, label, color=color, ha="center", fontsize=8)
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    ax.set_xlim(min(xs) - 1.2, max(xs) + 1.2)
    ax.set_ylim(min(ys) - 1.0, max(ys) + 1.8)
    ax.set_aspect("equal")
    ax.set_title(title or "statement dependence graph", fontsize=10)
    return fig


def _circle(xy):
    from matplotlib.patches import Circle

    return Circle(xy, 0.32, facecolor="#eef3fb", edgecolor="#4c72b0", lw=1.5, zorder=4)


#: run times: one number, several runs, the toolchain's :class:`~polylab.toolchain.Timing`, or an
#: experiment's :class:`~polylab.experiment.RunReport` (its variant's times)
Seconds = float | Sequence[float] | Timing | RunReport


def timing_chart(results: Mapping[str, Seconds], baseline: str | None = None, *, title: str | None = None,
                 figsize=None) -> Figure:
    """Horizontal bars of median run times with min..max whiskers and speedups over ``baseline`` (only
    where both medians are at least :data:`~polylab.experiment.MIN_TIMED_SECONDS`: shorter runs are drawn,
    their ratio is not reported). ``baseline`` must be the original of the same kernel at the same sizes.

    ``results`` maps a variant name to its run times (:data:`Seconds`: a float, a sequence of run times or
    a :class:`~polylab.toolchain.Timing` or a :class:`~polylab.experiment.RunReport`).
    """
    names = list(results)
    med, lo, hi = [], [], []
    for name in names:
        m, a, b = _timing_stats(results[name])
        med.append(m), lo.append(a), hi.append(b)
    fig = Figure(figsize=figsize or (6.4, 0.55 * len(names) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    if not names:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no timings yet", ha="center", va="center")
        return fig
    scale, unit = _time_unit(max(med))
    y = np.arange(len(names))[::-1]
    base = med[names.index(baseline)] if baseline in names else None
    colors = ["#8c8c8c" if n == baseline else "#4c72b0" for n in names]
    ax.barh(y, [m * scale for m in med], color=colors, height=0.6,
            xerr=[[max(0.0, (m - a) * scale) for m, a in zip(med, lo)],
                  [max(0.0, (b - m) * scale) for m, b in zip(med, hi)]], capsize=3)
    for yy, m, b, name in zip(y, med, hi, names):
        txt = format_seconds(m)
        if base and name != baseline and min(base, m) >= MIN_TIMED_SECONDS:  # no ratio of unresolved times
            txt += f"  ({base / m:.2f}x)"
        ax.text(max(m, b) * scale, yy, "  " + txt, va="center", fontsize=8)
    ax.set_yticks(y, names)
    ax.set_xlabel(f"median run time ({unit})")
    ax.set_xlim(0, max(max(hi) * scale, max(med) * scale) * 1.45)
    ax.set_title(title or "run time of the variants" + (f" (speedup over {baseline})" if base else ""),
                 fontsize=10)
    return fig


def _timing_stats(r: Seconds) -> tuple[float, float, float]:
    """(median, min, max) of a timing."""
    if isinstance(r, RunReport):
        if r.seconds is None:
            raise ModelError(f"the {r.target} variant was not timed: {r.reason}")
        r = r.seconds
    if isinstance(r, Timing):
        return float(r.median), float(r.min), float(r.max)
    if isinstance(r, (int, float)):
        return float(r), float(r), float(r)
    runs = [float(x) for x in r]
    return float(np.median(runs)), min(runs), max(runs)


def _time_unit(t: float) -> tuple[float, str]:
    if t >= 1:
        return 1.0, "s"
    if t >= 1e-3:
        return 1e3, "ms"
    if t >= 1e-6:
        return 1e6, "\u00b5s"
    return 1e9, "ns"


def format_seconds(t: float) -> str:
    """``1.23 ms``: three significant digits in a readable unit."""
    scale, unit = _time_unit(t)
    return f"{t * scale:.3g} {unit}"
