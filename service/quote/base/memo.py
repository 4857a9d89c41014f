"""The engine's one memo mechanism: bounded caches, owned by the code that fills them.

What requests of one shape share (a snapshot's layouts, the texts of a GPU's conversion, a curve's
speed-up table) is worked out once and looked up after. Every such cache is one of two forms with one
policy, least recently used out once the cache holds ``size`` entries:

- ``memoized(size)``: a pure function of a few small hashable values (a message with its names written
  in, a speed-up table of some columns), cached for the process. It is ``functools.lru_cache``, the
  C implementation, so a hit costs what a dict lookup costs.
- ``MemoSlot``: a cache kept on an object that outlives requests and whose values depend on it (a
  snapshot's tables, a layout), declared by the module that fills it::

      LAYOUTS: MemoSlot[LayoutSpec, Layout] = MemoSlot("layouts", size=16)
      layout = LAYOUTS.of(tables.memos).get(spec, lambda: build_layout(tables, spec))

  The host holds one ``Memos`` and knows no type of what its users keep there, so a lower floor (the
  offer tables) hosts caches of the floors above it without importing them. The key is the whole input
  of ``make`` beside the host: a value is never looked up by less than what it was made from.

A hit or a miss is counted on each cache (``BoundedMemo.hits`` / ``misses``), so a test can say which
path a request took.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, cast

__all__ = ["BoundedMemo", "MemoSlot", "Memos", "memoized"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")

_MISSING: Any = object()


def memoized(size: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A pure function of hashable arguments, its last ``size`` answers kept for the process."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        return cast(Callable[P, R], functools.lru_cache(maxsize=size)(function))

    return wrap


class BoundedMemo(Generic[K, V]):
    """At most ``size`` values by key, the least recently used dropped first."""

    __slots__ = ("_entries", "hits", "misses", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, made by ``make`` (and kept) the first time it is asked for."""
        entries = self._entries
        found = entries.get(key, _MISSING)
        if found is not _MISSING:
            self.hits += 1
            entries.move_to_end(key)
            return found  # type: ignore[no-any-return]
        self.misses += 1
        value = make()
        entries[key] = value
        if len(entries) > self.size:
            entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)


class Memos:
    """The caches one host keeps for the modules that declared them (``MemoSlot``)."""

    __slots__ = ("_by_slot",)

    def __init__(self) -> None:
        self._by_slot: dict[MemoSlot[Any, Any], Any] = {}

    def stats(self) -> dict[str, tuple[int, int, int]]:
        """``{slot name: (hits, misses, entries)}`` for every cache used on this host so far."""
        return {slot.name: (memo.hits, memo.misses, len(memo)) for slot, memo in self._by_slot.items()}


class MemoSlot(Generic[K, V]):
    """A cache its owner declares once (a name for reading, its size) and finds on each host."""

    __slots__ = ("name", "size")

    def __init__(self, name: str, *, size: int) -> None:
        self.name = name
        self.size = size

    def of(self, memos: Memos) -> BoundedMemo[K, V]:
        """This slot's cache on ``memos``, made empty on first use."""
        memo = memos._by_slot.get(self)
        if memo is None:
            memo = memos._by_slot[self] = BoundedMemo(self.size)
        return memo

    def __repr__(self) -> str:
        return f"MemoSlot({self.name!r}, size={self.size})"
