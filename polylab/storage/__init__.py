"""polylab.storage: storage optimisations, each an exact, separately usable step.

* :func:`fold_live_ins` — reads that only ever see one constant become that constant;
* :func:`remove_dead_writes` — statement instances whose value nobody reads (and that are not live-out)
  disappear;
* :func:`interleave` (alias :func:`fuse_producers`) — a legal schedule that runs each initialisation
  instance next to the loop iteration that first reads it;
* :func:`contract` — the smallest modulo mapping ``x[i][j][k] -> xbuf[i % m][j][k]`` proven safe with isl
  (with copy-outs for live-out elements), or a refusal with a concrete counterexample;
* :func:`home_scalars` — each live range of a scalar kept in the array element it ends in (ludcmp's ``w``
  in ``A[i][j]``), where the rewritten program has the original's dataflow;
* :func:`expand_scalars` — each live range of a scalar that stays inside one iteration of its loops kept
  in a buffer with one element per iteration (symm's ``temp2`` in ``temp2_x[i][j]``), same check;
* :func:`split_index_sets` — a loop cut where the only dependences it carries start or end (index-set
  splitting: Floyd-Warshall's ``i`` and ``j`` loops at ``k``), each piece a parallel loop;
* :func:`storage_pipeline` — finds the chain above automatically (the ``sl3.sy`` story);
* :func:`optimize_program` — those steps that apply around the loop optimizer (the ``optimize`` step).

Each takes and returns values (a SCoP, a :class:`~polylab.schedule.Schedule`) and a report that displays
itself as text and HTML. :data:`STORAGE_STEPS` are the same steps as recipe steps, and
:func:`recipe_steps` the step table (schedule and storage steps) that the spec readers of the layers above
pass to :func:`polylab.schedule.parse_schedule`. The brute-force oracle of the tests, a reference
interpreter, is :mod:`polylab.reference`.
"""

from polylab.storage.contract import Attempt, ContractionRefused, ContractionReport, contract
from polylab.storage.dead import DeadWriteReport, remove_dead_writes
from polylab.storage.expand import expand_scalars
from polylab.storage.fold import FoldReport, fold_live_ins
from polylab.storage.homes import HomesReport, home_scalars
from polylab.storage.interleave import InterleaveReport, fuse_producers, interleave
from polylab.storage.optimize import optimize_program
from polylab.storage.pipeline import StoragePlan, storage_pipeline
from polylab.storage.split import Split, SplitReport, split_index_sets
from polylab.storage.steps import STORAGE_STEPS, recipe_steps, storage_steps

__all__ = ["Attempt", "ContractionRefused", "ContractionReport", "DeadWriteReport", "FoldReport", "HomesReport", "InterleaveReport", "STORAGE_STEPS", "Split", "SplitReport", "StoragePlan",
           "contract", "expand_scalars", "fold_live_ins", "fuse_producers", "home_scalars", "interleave",
           "optimize_program", "recipe_steps", "remove_dead_writes", "split_index_sets", "storage_pipeline",
           "storage_steps"]
