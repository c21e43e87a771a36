"""polylab.schedule: schedules as values, legality with counterexamples, transformations, search.

    >>> import polylab
    >>> from polylab.schedule import parse_schedule, check
    >>> scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    >>> check(parse_schedule(scop, "wavefront; parallel")).legal
    True
"""

from polylab.schedule.core import Band, Schedule, original
from polylab.schedule.isl_scheduler import SchedulerComparison, compare_schedulers, isl_schedule, isl_step
from polylab.schedule.legality import (LegalityReport, Violation, check, coincident_members, is_legal,
                                       require_legal)
from polylab.schedule.pluto import PlutoResult, auto, pluto_schedule
from polylab.schedule.recipe import parse_schedule, register_step, steps
from polylab.schedule.spacetime import SpaceTimeMapping, processor_allocation, space_time
from polylab.schedule.tiling import band_is_tilable, tile, tile_wavefront
from polylab.schedule.transform import (distribute, fuse, interchange, parallel, permute, reverse, scale, shift,
                                        skew)
from polylab.schedule.wavefront import WavefrontSolution, find_wavefront, wavefront

__all__ = ["Band", "LegalityReport", "PlutoResult", "Schedule", "SchedulerComparison", "SpaceTimeMapping",
           "Violation", "WavefrontSolution", "auto", "band_is_tilable", "check", "coincident_members",
           "compare_schedulers", "distribute", "find_wavefront", "fuse", "interchange", "is_legal",
           "isl_schedule", "isl_step", "original", "parallel", "parse_schedule", "permute",
           "pluto_schedule", "processor_allocation", "register_step", "require_legal", "reverse", "scale", "shift", "skew",
           "space_time", "steps", "tile", "tile_wavefront", "wavefront"]
