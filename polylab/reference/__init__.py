"""polylab.reference: a reference interpreter and a builder of small SCoPs, the oracles of the tests.

It depends only on the model: :mod:`polylab.reference.cvalue` evaluates statement bodies with C's
arithmetic (the storage layer's folding uses it too, so both agree bit for bit),
:mod:`polylab.reference.interpret` runs a SCoP instance by instance in a given order (brute force, no
polyhedral reasoning), and :mod:`polylab.reference.builder` builds SCoPs from isl text and C-like bodies
without the front end (the shapes the storage tests need, and any a later layer wants to check).
"""

from polylab.reference.builder import isl_expr, make_scop, statement
from polylab.reference.cvalue import bits, evaluate, parse_expr
from polylab.reference.interpret import Memory, clobbers, execute, instances, live_out_elements, same_live_out

__all__ = ["Memory", "bits", "clobbers", "evaluate", "execute", "instances", "isl_expr", "live_out_elements",
           "make_scop", "parse_expr", "same_live_out", "statement"]
