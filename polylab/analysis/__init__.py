"""polylab.analysis: exact dependences (isl), dataflow facts, parallelism of the original schedule and
the textbook dependence tests beside them.

    >>> import polylab
    >>> from polylab.analysis import compute_dependences, parallelism
    >>> scop = polylab.parse_file(polylab.example_path("sweep2d.c")).scop
    >>> sorted(d.distance for d in compute_dependences(scop))
    [(0, 1), (1, 0)]

The package imports :mod:`polylab.analysis.display`, which registers the dependences' HTML renderers with
:mod:`polylab.render`.
"""

from polylab.analysis import display
from polylab.analysis.dataflow import Dataflow, ReadSources, Source, constant_expression, dataflow
from polylab.analysis.dependences import KINDS, Dependence, DependenceGraph, compute_dependences
from polylab.analysis.loops import LoopStructure
from polylab.analysis.parallelism import LoopParallelism, Parallelism, parallelism
from polylab.analysis.textbook import TextbookReport, textbook_all, textbook_test

__all__ = ["KINDS", "Dataflow", "Dependence", "DependenceGraph", "LoopParallelism", "LoopStructure",
           "Parallelism", "ReadSources", "Source", "TextbookReport", "compute_dependences",
           "constant_expression", "dataflow", "display", "parallelism", "textbook_all", "textbook_test"]
