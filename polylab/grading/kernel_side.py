"""The code the batch grader runs *inside* a student's kernel to carry the answers out (standard library only).

The grader never imports this module in the kernel: it sends this file's text, which runs in a fresh
dictionary, so nothing the student's cells did to ``polylab`` (or to names in the notebook) changes how the
answers are read. It writes one JSON file (atomically: a temporary file, then a rename):

    {"answers": {NAME: ENCODED}, "missing": [NAME...], "unreadable": {NAME: REASON},
     "calls": {NAME: [{"value": ENCODED} | {"error": TEXT}, ...]}}

Encoding (decoded by :mod:`polylab.grading.codec`): JSON scalars as themselves; ``{"$": KIND, ...}`` for
tuples, lists, sets, dicts, big ints, non-finite floats, fractions, numpy and sympy numbers and matrices, isl
objects (their text), polylab SCoPs and schedules (their source and isl text), functions (their name) and
anything else (``opaque``: its type and a short repr). Types are recognised by their module and class name,
on purpose: this side must not import polylab. Sizes are bounded (:data:`MAX_ITEMS`, :data:`MAX_TEXT`).

A function answer is called on each case (arguments sent by the grader) under a per-call time limit
(``signal.setitimer``: a Python loop is interrupted; a call stuck in C code is caught by the grader's
overall time limit instead).
"""

import fractions
import json
import math
import os
import signal
import tempfile

MAX_ITEMS = 20000      # values (all containers together) per answer
MAX_TEXT = 200000      # characters per string / isl text / source
MAX_DEPTH = 32


class _TooLarge(Exception):
    pass


class _CallTimeout(BaseException):
    pass


def _type_of(v):
    t = type(v)
    return (t.__module__ or ""), t.__name__


def _text(s):
    if len(s) > MAX_TEXT:
        raise _TooLarge(f"a text of {len(s)} characters")
    return s


def encode(v, budget=None, depth=0):
    """``v`` as JSON-ready data (see the module text); raises _TooLarge past the limits."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge(f"more than {MAX_ITEMS} values")
    if depth > MAX_DEPTH:
        raise _TooLarge(f"nested more than {MAX_DEPTH} levels deep")
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v if abs(v) < 2**53 else {"$": "int", "v": _text(str(v))}
    if isinstance(v, float):
        return v if math.isfinite(v) else {"$": "float", "v": repr(v)}
    if isinstance(v, str):
        return _text(v)
    for kind in (tuple, list, set, frozenset):
        if type(v) is kind:
            items = [encode(x, budget, depth + 1) for x in v]
            if kind in (set, frozenset):
                items.sort(key=lambda e: json.dumps(e, sort_keys=True))
            return {"$": kind.__name__, "v": items}
    if type(v) is dict:
        return {"$": "dict", "v": [[encode(k, budget, depth + 1), encode(x, budget, depth + 1)] for k, x in v.items()]}
    return _encode_library(v, budget, depth)


def _encode_library(v, budget, depth):
    module, name = _type_of(v)
    root = module.split(".")[0]
    if module == "fractions" and name == "Fraction":
        return {"$": "fraction", "v": [encode(v.numerator, budget), encode(v.denominator, budget)]}
    if root == "numpy":
        if hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0:
            if v.size > MAX_ITEMS:
                raise _TooLarge(f"an array of {v.size} entries")
            return {"$": "ndarray", "v": encode(v.tolist(), budget, depth + 1)}
        if hasattr(v, "item"):
            return encode(v.item(), budget, depth + 1)
    if root == "sympy":
        return _encode_sympy(v, name, budget, depth)
    if root == "islpy":
        return {"$": "isl", "type": name, "v": _text(str(v))}
    if root == "polylab" and name == "Scop":
        return {"$": "scop", "name": v.name, "source": _text(v.source), "language": v.language,
                "context": _text(str(v.context))}
    if root == "polylab" and name == "Program":
        return {"$": "program", "source": _text(v.source), "language": v.language}
    if root == "polylab" and name == "Schedule":
        return {"$": "schedule", "scop": encode(v.scop, budget, depth + 1),
                "maps": {k: _text(str(m)) for k, m in v.maps.items()}, "steps": [str(s) for s in v.steps]}
    if callable(v):
        return {"$": "function", "name": getattr(v, "__qualname__", name)}
    return _opaque(v, module, name)


def _encode_sympy(v, name, budget, depth):
    if getattr(v, "is_Matrix", False):
        if v.rows * v.cols > MAX_ITEMS:
            raise _TooLarge(f"a {v.rows} x {v.cols} matrix")
        return {"$": "matrix", "v": [[encode(v[r, c], budget, depth + 1) for c in range(v.cols)]
                                     for r in range(v.rows)]}
    if getattr(v, "is_Integer", False):
        return encode(int(v), budget, depth)
    if getattr(v, "is_Rational", False):
        return {"$": "fraction", "v": [encode(int(v.p), budget), encode(int(v.q), budget)]}
    if getattr(v, "is_Float", False):
        return encode(float(v), budget, depth)
    if name in ("BooleanTrue", "BooleanFalse"):
        return bool(v)
    return {"$": "sympy", "type": name, "v": _text(str(v))}


def _opaque(v, module, name):
    try:
        text = repr(v)
    except Exception:  # a student's object whose repr fails: its type is enough
        text = "?"
    return {"$": "opaque", "type": f"{module}.{name}", "repr": text[:200]}


def decode(e):
    """The grader's case arguments (tuples, lists, sets, dicts, fractions, scalars) as Python values."""
    if not isinstance(e, dict):
        return e
    kind, v = e.get("$"), e.get("v")
    if kind in ("tuple", "list", "set", "frozenset"):
        return {"tuple": tuple, "list": list, "set": set, "frozenset": frozenset}[kind](decode(x) for x in v)
    if kind == "dict":
        return {decode(k): decode(x) for k, x in v}
    if kind == "fraction":
        return fractions.Fraction(v[0], v[1])
    if kind == "int":
        return int(v)
    if kind == "float":
        return float(v)
    return e


def _call(fn, args, seconds):
    def stop(signum, frame):
        raise _CallTimeout()

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return {"value": encode(fn(*args))}
    except _CallTimeout:
        return {"error": f"did not return within {seconds:g} s"}
    except _TooLarge as exc:
        return {"error": f"returned a value too large to grade ({exc})"}
    except Exception as exc:  # whatever the student's function raises is part of its answer
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def snapshot(ns, request):
    """Encode the requested names of ``ns`` (and call the function answers) into ``request['path']``."""
    out = {"answers": {}, "missing": [], "unreadable": {}, "calls": {}}
    for name in request["names"]:
        if name not in ns:
            out["missing"].append(name)
            continue
        try:
            out["answers"][name] = encode(ns[name])
        except _TooLarge as exc:
            out["unreadable"][name] = f"the answer is too large to grade ({exc})"
        except Exception as exc:  # an object that breaks while being read: graded as unreadable, with why
            out["unreadable"][name] = f"the answer could not be read: {type(exc).__name__}: {exc}"
    for name, cases in request.get("functions", {}).items():
        fn = ns.get(name)
        if callable(fn):
            out["calls"][name] = [_call(fn, [decode(a) for a in args], request.get("call_seconds", 5.0))
                                  for args in cases]
    path = request["path"]
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".snapshot-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(out, f)
    os.replace(tmp, path)


def cell_code(request):
    """The source of the cell the grader injects: run this file's text in a fresh dictionary and call
    :func:`snapshot` on the notebook's namespace (reached through the builtins, so no student name shadows
    it)."""
    here = open(__file__, encoding="utf-8").read()
    return ("__import__('builtins').exec(" + repr(here) + ", __polylab_g := {'__name__': '__polylab_grader__'})\n"
            "__polylab_g['snapshot'](__import__('builtins').globals(), " + repr(request) + ")\n"
            "del __polylab_g")
