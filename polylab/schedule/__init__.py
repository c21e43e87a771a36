"""polylab.schedule: schedules as values, legality with counterexamples, transformations, search.

    >>> import polylab
    >>> from polylab.schedule import parse_schedule, check
    >>> scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    >>> check(parse_schedule(scop, "wavefront; parallel")).legal
    True

The one legality check (:func:`check`, :func:`require_legal`), the one counterexample search
(:func:`smallest_example`) and the one spec reader (:func:`parse_schedule`) live here. The package imports
:mod:`polylab.schedule.display`, which registers the renderers of its values with :mod:`polylab.render`.
"""

from polylab.schedule import display
from polylab.schedule.compare import SchedulerComparison, compare_schedulers
from polylab.schedule.core import Band, Provenance, Schedule, Tiles, original
from polylab.schedule.isl_scheduler import isl_schedule, isl_step
from polylab.schedule.legality import (IllegalScheduleError, LegalityReport, Violation, check, coincident_members,
                                       is_legal, require_legal, small_parameters, smallest_example, violations)
from polylab.schedule.optimize import Machine, OptimizeReport, optimize_schedule
from polylab.schedule.pluto import PlutoResult, auto, pluto_schedule
from polylab.schedule.recipe import SCHEDULE_STEPS, Step, StepTable, make_step, schedule_steps, with_steps
from polylab.schedule.spacetime import SpaceTimeMapping, processor_allocation, space_time
from polylab.schedule.spec import as_schedule, from_union_map, parse_isl, parse_schedule, split_spec
from polylab.schedule.tiling import band_is_tilable, tile, tile_wavefront
from polylab.schedule.transform import (distribute, fuse, interchange, parallel, permute, reverse, scale, shift,
                                        skew)
from polylab.schedule.wavefront import WavefrontSolution, find_wavefront, wavefront

__all__ = ["Band", "IllegalScheduleError", "LegalityReport", "Machine", "OptimizeReport", "PlutoResult", "Provenance",
           "SCHEDULE_STEPS", "Schedule", "SchedulerComparison", "SpaceTimeMapping", "Step", "StepTable", "Tiles",
           "Violation", "WavefrontSolution", "as_schedule", "auto", "band_is_tilable", "check", "coincident_members",
           "compare_schedulers", "display", "distribute", "find_wavefront", "from_union_map", "fuse", "interchange",
           "is_legal", "isl_schedule", "isl_step", "make_step", "optimize_schedule", "original", "parallel",
           "parse_isl", "parse_schedule", "permute", "pluto_schedule", "processor_allocation", "require_legal",
           "reverse", "scale", "schedule_steps", "shift", "skew", "small_parameters", "smallest_example", "space_time",
           "split_spec", "tile", "tile_wavefront", "violations", "wavefront", "with_steps"]
