"""One memo facility for the engine's caches: pure functions remembered by the content of their arguments.

The dependence analysis, the legality check and the optimizer ask the same questions of the same values
many times (a search changes a few statements' time maps at a time; the storage steps make SCoPs that
share most of their statements), so the engine remembers answers. Two kinds of memo, both registered by
name here:

* :func:`memo`: a function of *values* (isl sets, maps, affine functions, numbers, tuples of them),
  remembered in a bounded LRU table. isl hashes and compares its objects by content but not by the names
  of their dimensions (``{ S[i] -> A[i] }`` equals ``{ S[k] -> A[k] }``), so a key holds the dimension
  names of the arguments as well (:func:`content_key`): a result whose text shows names (a dependence
  relation, a set of distances) is never handed to a caller that named its dimensions differently. A
  function whose result cannot show a name (a verdict, a count) says so with ``named=()``.
* :class:`ObjectMemo`: facts about one immutable *object* (a SCoP, a schedule), compared by identity and
  kept while the object lives (a weak reference).

:func:`clear_all` forgets every answer of every registered memo, so a measurement can start cold
(``polylab bench --search-time``); :func:`registry` lists them. Clearing never changes a result.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, TypeVar

import islpy as isl

__all__ = ["MemoInfo", "ObjectMemo", "clear_all", "content_key", "memo", "names_of", "registry"]

R = TypeVar("R")
K = TypeVar("K")

#: the isl types whose dimensions have names
_NAMED = (isl.Map, isl.Set, isl.BasicMap, isl.BasicSet, isl.PwAff, isl.Aff)


@dataclass(frozen=True)
class MemoInfo:
    """One registered memo: its name, what it holds and how often it answered."""

    name: str
    kind: str        # "values" (LRU, content keys) or "objects" (weak, by identity)
    entries: int
    hits: int
    misses: int


class _Registered:
    """What the registry needs of a memo."""

    name: str

    def clear(self) -> None:
        raise NotImplementedError

    def info(self) -> MemoInfo:
        raise NotImplementedError


_REGISTRY: dict[str, _Registered] = {}


def _register(m: _Registered) -> None:
    if m.name in _REGISTRY:
        raise ValueError(f"a memo named {m.name!r} is already registered")
    _REGISTRY[m.name] = m


def names_of(obj: Any) -> Hashable:
    """The dimension names of ``obj`` (input and output, or set dimensions; the domain of an affine
    function), recursively through tuples; ``None`` for anything without dimensions."""
    if isinstance(obj, (isl.Map, isl.BasicMap)):
        return tuple(obj.get_dim_name(t, k) for t in (isl.dim_type.in_, isl.dim_type.out)
                     for k in range(obj.dim(t)))
    if isinstance(obj, (isl.Set, isl.BasicSet)):
        return tuple(obj.get_dim_name(isl.dim_type.set, k) for k in range(obj.dim(isl.dim_type.set)))
    if isinstance(obj, (isl.PwAff, isl.Aff)):
        return tuple(obj.get_dim_name(isl.dim_type.in_, k) for k in range(obj.dim(isl.dim_type.in_)))
    if isinstance(obj, tuple):
        return tuple(names_of(x) for x in obj)
    return None


def content_key(args: tuple, named: tuple[int, ...] | None = None) -> tuple:
    """The key of a call: the arguments (isl values compare by content) and the dimension names of the
    arguments at the positions ``named`` (all of them when None)."""
    positions = range(len(args)) if named is None else named
    return args + tuple(names_of(args[k]) for k in positions)


class _ValueMemo(_Registered, Generic[R]):
    """A function of values remembered in an LRU table keyed by :func:`content_key`."""

    def __init__(self, fn: Callable[..., R], name: str, maxsize: int | None, named: tuple[int, ...] | None):
        self.name, self.fn, self.named = name, fn, named
        self._table = functools.lru_cache(maxsize=maxsize)(self._compute)
        functools.update_wrapper(self, fn)

    def _compute(self, *key: Any) -> R:
        n = len(key) - (len(self.named) if self.named is not None else len(key) // 2)
        return self.fn(*key[:n])

    def __call__(self, *args: Any) -> R:
        return self._table(*content_key(args, self.named))

    def clear(self) -> None:
        self._table.cache_clear()

    def info(self) -> MemoInfo:
        i = self._table.cache_info()
        return MemoInfo(self.name, "values", i.currsize, i.hits, i.misses)


def memo(name: str, *, maxsize: int | None = 4096, named: tuple[int, ...] | None = None
         ) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate a pure function of hashable values (positional arguments only) as the memo ``name``.
    ``named``: the positions of the arguments whose dimension names go into the key (all by default;
    ``()`` when the result shows no name, a verdict or a number)."""

    def wrap(fn: Callable[..., R]) -> Callable[..., R]:
        m = _ValueMemo(fn, name, maxsize, named)
        _register(m)
        return m

    return wrap


class ObjectMemo(_Registered, Generic[K, R]):
    """Facts about immutable objects compared by identity (a SCoP, a schedule), each kept while its object
    lives: ``memo.get(obj, compute)`` is ``compute()`` the first time, the same value after."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._table: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._hits = self._misses = 0
        _register(self)

    def get(self, obj: K, compute: Callable[[], R]) -> R:
        try:
            value = self._table[obj]
        except KeyError:
            self._misses += 1
            value = self._table[obj] = compute()
            return value
        self._hits += 1
        return value

    def peek(self, obj: K) -> R | None:
        """The remembered value for ``obj``, or None (nothing computed)."""
        return self._table.get(obj)

    def clear(self) -> None:
        self._table.clear()

    def info(self) -> MemoInfo:
        return MemoInfo(self.name, "objects", len(self._table), self._hits, self._misses)


def registry() -> tuple[MemoInfo, ...]:
    """Every registered memo, by name."""
    return tuple(_REGISTRY[n].info() for n in sorted(_REGISTRY))


def clear_all() -> None:
    """Forget every remembered answer of every memo (results stay the same; only the time to get them
    changes)."""
    for m in _REGISTRY.values():
        m.clear()
