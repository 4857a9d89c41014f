"""A circuit breaker for the shared store: after a call fails, most callers skip the store for a moment.

One store outage should cost a request at most one store deadline, not one per store call it makes (the
rate limiter and the snapshot check each make one). While the breaker is open, one caller per
``probe_interval_s`` tries the store again; everyone else answers without it (from the held snapshot,
counting rate limits in-process). The first success closes the breaker.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["StoreBreaker"]


class StoreBreaker:
    def __init__(self, *, probe_interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._probe_interval_s = probe_interval_s
        self._clock = clock
        self._open_since: float | None = None
        self._next_probe_at = 0.0
        self.last_error: str | None = None

    @property
    def closed(self) -> bool:
        """The store answered the last call made to it."""
        return self._open_since is None

    def allow(self) -> bool:
        """Whether this caller should try the store now (always while closed; one probe at a time else)."""
        if self._open_since is None:
            return True
        now = self._clock()
        if now < self._next_probe_at:
            return False
        self._next_probe_at = now + self._probe_interval_s
        return True

    def failed(self, reason: str) -> bool:
        """Record a failed call; True when it starts an outage (so it is logged once, not per request)."""
        self.last_error = reason
        now = self._clock()
        self._next_probe_at = now + self._probe_interval_s
        if self._open_since is not None:
            return False
        self._open_since = now
        return True

    def succeeded(self) -> bool:
        """Record a call that worked; True when it ends an outage."""
        if self._open_since is None:
            return False
        self._open_since = None
        self.last_error = None
        return True
