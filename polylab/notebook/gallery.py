"""Write the pictures a reviewer should look at: ``python -m polylab.notebook.gallery OUTDIR [--run]``.

Each PNG is produced by the same functions the magics and explorers use:

* ``sweep2d_space.png``: iteration space of sweep2d with its flow dependences (N = 8);
* ``sweep2d_wavefront.png``: the same points coloured by the wavefront schedule found by the engine;
* ``sweep2d_illegal.png``: the illegal schedule ``[i - j, i]`` with its violating pair marked;
* ``sweep2d_tiles.png``: 3 x 3 tiles and tile waves;
* ``sl3_sweep_3d.png``: the 3D sweep of sl3 (n = 8) with dependences;
* ``sl3_wavefront_3d.png``: the sweep coloured by i + j + k;
* ``sl3_slices.png``: the sweep as slices of i;
* ``jacobi2d_graph.png``: the statement dependence graph of jacobi2d;
* ``explorer_schedule_sweep2d.png``, ``explorer_tiling_sweep2d.png``, ``explorer_schedule_sl3.png``:
  what the explorers show after a slider move;
* ``timing.png`` (with ``--run``): a timing chart of measured variants of sweep2d.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import islpy as isl  # noqa: E402

from polylab.corpus import example_path  # noqa: E402
from polylab.errors import PolylabError  # noqa: E402
from polylab.frontend import parse_file  # noqa: E402
from polylab.notebook import backend, plots  # noqa: E402
from polylab.notebook.display import figure_png  # noqa: E402


def write_gallery(outdir: str | Path, run: bool = False) -> list[Path]:
    """Write the gallery into ``outdir``; returns the files written."""
    from polylab.notebook.widgets import ScheduleExplorer, TilingExplorer

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(name: str, fig) -> None:
        path = out / name
        path.write_bytes(figure_png(fig, 100))
        written.append(path)

    sweep = parse_file(example_path("sweep2d.c")).scop
    deps = backend.dependences(sweep)
    save("sweep2d_space.png", plots.iteration_space(sweep, deps, params={"N": 8}))
    wave = backend.parse_schedule(sweep, "wavefront")
    save("sweep2d_wavefront.png", plots.wavefront(sweep, wave, deps, params={"N": 8},
                                                  title="sweep2d under the wavefront schedule"))
    bad = backend.parse_schedule(sweep, "{ S0[i, j] -> [i - j, i] }")
    report = backend.legality(bad)
    hl = report.violations[0] if report.violations else None
    save("sweep2d_illegal.png", plots.iteration_space(sweep, deps, params={"N": 8}, schedule=bad, highlight=hl,
                                                      title="illegal schedule [i - j, i]: violating pair"))
    save("sweep2d_tiles.png", plots.tiles(sweep, [3, 3], deps, params={"N": 8}))

    sl3 = parse_file(example_path("sl3.sy")).scop
    sdeps = backend.dependences(sl3)
    own = [d for d in sdeps.dependences if d.source == "S1" and d.sink == "S1"]
    save("sl3_sweep_3d.png", plots.iteration_space(sl3, own, params={"n": 8}, statements=["S1"],
                                                   title="sl3 sweep (S1), n = 8"))
    save("sl3_wavefront_3d.png", plots.wavefront(sl3, isl.UnionMap("[n] -> { S1[i, j, k] -> [i + j + k, i, j, k] }"),
                                                 params={"n": 8}, statements=["S1"],
                                                 title="sl3 sweep coloured by i + j + k"))
    save("sl3_slices.png", plots.iteration_space(sl3, own, params={"n": 8}, statements=["S1"], mode="slices"))
    jac = parse_file(example_path("jacobi2d.c")).scop
    save("jacobi2d_graph.png", plots.dependence_graph(backend.dependences(jac)))

    e = ScheduleExplorer(sweep, params={"N": 16})
    e.sliders[1].value = 1
    save("explorer_schedule_sweep2d.png", e.fig)
    e.sliders[1].value = -1
    save("explorer_schedule_sweep2d_illegal.png", e.fig)
    t = TilingExplorer(sweep, params={"N": 16}, sizes=[4, 4])
    save("explorer_tiling_sweep2d.png", t.fig)
    s = ScheduleExplorer(sl3, params={"n": 8})
    for slider in s.sliders:
        slider.value = 1
    save("explorer_schedule_sl3.png", s.fig)

    if run:
        results = {}
        base = None
        for name, spec in (("wavefront", "wavefront"), ("tile 16x16", "tile(16, 16)")):
            r = backend.experiment(sweep, backend.parse_schedule(sweep, spec), params={"N": 1024}, repeat=3)
            results[name] = r.seconds
            base = r.baseline
        chart = {"original": base, **results} if base is not None else results
        save("timing.png", plots.timing_chart(chart, baseline="original"))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polylab.notebook.gallery",
                                     description="Write the notebook layer's pictures as PNG files.")
    parser.add_argument("outdir")
    parser.add_argument("--run", action="store_true", help="also compile and time variants (timing chart)")
    args = parser.parse_args(argv)
    try:
        files = write_gallery(args.outdir, run=args.run)
    except PolylabError as err:
        print(err.render(), file=sys.stderr)
        return 2
    for f in files:
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
