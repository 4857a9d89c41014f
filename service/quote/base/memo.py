"""The engine's one memo mechanism: bounded caches, owned by the code that fills them.

What requests of one shape share (a snapshot's layouts, the texts of a GPU's conversion, a curve's
speed-up table) is worked out once and looked up after. Every such cache is one of two forms, each
bounded to ``size`` entries:

- ``memoized(size)``: a pure function of a few small hashable values (a message with its names written
  in, a speed-up table of some columns), cached for the process. It is ``functools.lru_cache``, the
  C implementation (least recently used out), so a hit costs what a dict lookup costs.
- ``MemoSlot``: a cache kept on an object that outlives requests and whose values depend on it (a
  snapshot's tables, a layout), declared by the module that fills it::

      LAYOUTS: MemoSlot[LayoutSpec, Layout] = MemoSlot("layouts", size=16)
      layout = LAYOUTS.of(tables.memos).get(spec, lambda: build_layout(tables, spec))

  The host holds one ``Memos`` and knows no type of what its users keep there, so a lower floor (the
  offer tables) hosts caches of the floors above it without importing them. The key is the whole input
  of ``make`` beside the host: a value is never looked up by less than what it was made from. The entry
  kept longest goes first when the cache is full. A hit is one dict lookup (``lookup``, bound to the
  dict's own ``get``), so the few lookups a returned quote makes cost what a dict costs; ``get`` does
  both steps where a hit's cost does not matter.

A cache of large values (a layout of a 100,000-offer catalog is tens of MB, and the speed-ups gathered
on it as much again) is bounded in bytes too (``max_bytes``): the arrays its values hold, counted by
``footprint`` when a value is kept, the oldest dropped until the rest fit (the newest always stays).

Every value made is counted on its cache (``BoundedMemo.misses``), so a test can say that a request
shape seen before made nothing new.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec, TypeVar, cast

import msgspec
import numpy as np

__all__ = [
    "BoundedMemo",
    "MemoSlot",
    "Memos",
    "footprint",
    "found_by_identity",
    "holds_no_arrays",
    "kept_by_identity",
    "memoized",
]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
V = TypeVar("V")
P = ParamSpec("P")
R = TypeVar("R")


def memoized(size: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A pure function of hashable arguments, its last ``size`` answers kept for the process."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        return cast(Callable[P, R], functools.lru_cache(maxsize=size)(function))

    return wrap


def holds_no_arrays(kind: type[T]) -> type[T]:
    """Class decorator: objects of ``kind`` hold no numpy array, however deep, so ``footprint`` passes
    over them without reading their fields (a speed-up curve's 40 columns, each with its curve's points,
    were most of what weighing the speed-ups gathered on a layout read: 100 us of 110)."""
    _NO_ARRAYS.add(kind)
    return kind


_NO_ARRAYS: set[type] = {type(None), int, float, str, bytes, bool}


def footprint(value: object) -> int:
    """Bytes of the numpy arrays ``value`` holds: through its fields (dataclasses, structs), tuples,
    lists, dicts and the caches kept on it (``Memos``), each array counted once, a view of another's
    data not at all (its owner is counted where it is held); objects of a type that ``holds_no_arrays``
    are not looked into."""
    seen: set[int] = set()
    total = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if type(item) in _NO_ARRAYS or id(item) in seen or isinstance(item, int | float | str | bytes):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes if item.flags.owndata else 0
        elif isinstance(item, Memos):
            for memo in item._by_slot.values():
                stack.extend(memo._entries.values())
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        else:
            stack.extend(getattr(item, name) for name in _field_names(type(item)))
    return total


def _field_names(kind: type) -> tuple[str, ...]:
    """The fields ``footprint`` reads of an object of type ``kind``: a struct's or a dataclass's, none of
    anything else; looked up once per type (``dataclasses.fields`` per object took most of a weighing)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        if issubclass(kind, msgspec.Struct):
            names = tuple(kind.__struct_fields__)
        elif dataclasses.is_dataclass(kind):
            names = tuple(field.name for field in dataclasses.fields(kind))
        else:
            names = ()
        _FIELD_NAMES[kind] = names
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class BoundedMemo(Generic[K, V]):
    """At most ``size`` values by key, and, with ``max_bytes``, at most that many bytes of arrays in
    them (``footprint``, the newest value always kept); the one kept longest dropped first. Values are
    never None."""

    __slots__ = ("_entries", "lookup", "max_bytes", "misses", "size")

    def __init__(self, size: int, max_bytes: int | None = None) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._entries: dict[K, V] = {}
        # The value kept for a key, or None: the dict's own ``get``, so a hit is one C call.
        self.lookup: Callable[[K], V | None] = self._entries.get
        self.misses = 0

    def keep(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (made on a miss of ``lookup``) and return it."""
        entries = self._entries
        if len(entries) >= self.size:
            del entries[next(iter(entries))]
        entries[key] = value
        self.misses += 1
        if self.max_bytes is not None:
            self._fit(self.max_bytes)
        return value

    def _fit(self, max_bytes: int) -> None:
        """Drop the oldest values until the rest hold at most ``max_bytes`` (values grow after they are
        kept, their own caches filling, so each is weighed now)."""
        entries = self._entries
        weights = [footprint(kept) for kept in entries.values()]
        total = sum(weights)
        for weight in weights[:-1]:
            if total <= max_bytes:
                break
            del entries[next(iter(entries))]
            total -= weight

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, made by ``make`` (and kept) the first time it is asked for."""
        found = self._entries.get(key)
        return self.keep(key, make()) if found is None else found

    def items(self) -> list[tuple[K, V]]:
        """What is kept, oldest first (for reading: tests and diagnostics)."""
        return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)


def kept_by_identity(
    memo: BoundedMemo[Hashable, tuple[tuple[object, ...], V]],
    held: tuple[object, ...],
    make: Callable[[], V],
    key: Hashable = None,
) -> V:
    """The value made from the objects ``held`` (and the small ``key``), kept by their identity rather than
    by hashing what they hold (an array of every row, a list of vendors): each entry holds them, so none
    of their ids is reused while it lives. ``make`` runs, and its value is kept, the first time."""
    found = found_by_identity(memo, held, key)
    return found if found is not None else memo.keep((tuple(map(id, held)), key), (held, make()))[1]


def found_by_identity(
    memo: BoundedMemo[Hashable, tuple[tuple[object, ...], V]], held: tuple[object, ...], key: Hashable = None
) -> V | None:
    """The value ``kept_by_identity`` keeps for ``held`` and ``key``, or None when none is kept."""
    found = memo.lookup((tuple(map(id, held)), key))
    if found is not None and all(kept is given for kept, given in zip(found[0], held, strict=True)):
        return found[1]
    return None


class Memos:
    """The caches one host keeps for the modules that declared them (``MemoSlot``)."""

    __slots__ = ("_by_slot",)

    def __init__(self) -> None:
        self._by_slot: dict[MemoSlot[Any, Any], Any] = {}

    def stats(self) -> dict[str, tuple[int, int]]:
        """``{slot name: (values made, entries kept)}`` for every cache used on this host so far."""
        return {slot.name: (memo.misses, len(memo)) for slot, memo in self._by_slot.items()}


class MemoSlot(Generic[K, V]):
    """A cache its owner declares once (a name for reading, its size) and finds on each host."""

    __slots__ = ("max_bytes", "name", "size")

    def __init__(self, name: str, *, size: int, max_bytes: int | None = None) -> None:
        self.name = name
        self.size = size
        self.max_bytes = max_bytes

    def of(self, memos: Memos) -> BoundedMemo[K, V]:
        """This slot's cache on ``memos``, made empty on first use."""
        memo = memos._by_slot.get(self)
        if memo is None:
            memo = memos._by_slot[self] = BoundedMemo(self.size, self.max_bytes)
        return memo

    def __repr__(self) -> str:
        return f"MemoSlot({self.name!r}, size={self.size}, max_bytes={self.max_bytes})"
