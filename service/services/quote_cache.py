"""A small per-process cache of quote responses, so a repeated question costs no engine run.

Chatbots and the explorer ask the same question again (a retry, a language switch back, many users asking
the article's example). A response depends on the request, the snapshot version, whether the store is
reachable, and the time only through staleness; the key holds the first three and the time in whole
minutes, so a cached answer is at most a minute behind a price turning stale (against a max age of hours).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from schemas.quote import QuoteResponse

__all__ = ["QuoteCache"]

STALENESS_GRANULARITY_S = 60


class QuoteCache:
    """Least-recently-used, bounded by entry count; one event loop, so no locking."""

    def __init__(self, max_entries: int = 512) -> None:
        self._entries: OrderedDict[Hashable, QuoteResponse] = OrderedDict()
        self._max_entries = max_entries
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(request_bytes: bytes, version: int, store_state: Hashable, now_s: float) -> Hashable:
        """``store_state`` is whatever changes the answer's warnings (reachable, empty)."""
        return (request_bytes, version, store_state, int(now_s // STALENESS_GRANULARITY_S))

    def get(self, key: Hashable) -> QuoteResponse | None:
        response = self._entries.get(key)
        if response is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return response

    def put(self, key: Hashable, response: QuoteResponse) -> None:
        self._entries[key] = response
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
