"""Hours on one card of each offer's GPU, as a range: low / expected / high, one row each.

A job given by its hours on a reference GPU takes, on each offer's GPU, those hours over the offer's
speed at each end of its range (``evaluate.conversion``). Every request reads the expected hours of every
offer, but most read the low and high ones at a few offers only (the returned quotes), so those two rows
are divided where they are first read: whole, or at some offers. Each element is the same quotient
either way (the job's hours over the same speed), so what is read never depends on which was divided
first. Hours worked out otherwise (a job sized by its tokens on each GPU's own peak) are given whole.
"""

from __future__ import annotations

import numpy as np

from service.quote.base.arrays import FloatArray, IntArray

__all__ = ["OneCardHours"]

_LOW, _EXPECTED, _HIGH = range(3)


class OneCardHours:
    """``(3, offers)`` hours on one card, low / expected / high, read by row (``row``), at some offers
    (``at``) or whole (``every``); ``expected`` is the expected row."""

    __slots__ = ("_hours", "_rows", "_speeds", "expected")

    def __init__(self, rows: list[FloatArray | None], hours: float | None, speeds: FloatArray | None) -> None:
        expected = rows[_EXPECTED]
        assert expected is not None
        self.expected: FloatArray = expected
        self._rows = rows
        self._hours = hours
        self._speeds = speeds

    @classmethod
    def of_rows(cls, rows: FloatArray) -> OneCardHours:
        """Hours worked out whole: ``rows`` is ``(3, offers)``."""
        return cls([rows[_LOW], rows[_EXPECTED], rows[_HIGH]], None, None)

    @classmethod
    def divided(cls, hours: float, speeds_fastest_first: FloatArray) -> OneCardHours:
        """``hours`` over each offer's speed (``(3, offers)``, the highest first: the fewest hours divide
        by it); the expected row now, the others where first read."""
        expected: FloatArray = hours / speeds_fastest_first[_EXPECTED]
        return cls([None, expected, None], hours, speeds_fastest_first)

    def quotient(self) -> tuple[float, FloatArray] | None:
        """The job's hours and every offer's expected speed, the expected row being the one over the
        other (``divided``); None for hours given whole."""
        if self._hours is None or self._speeds is None:
            return None
        return self._hours, self._speeds[_EXPECTED]

    @property
    def size(self) -> int:
        """How many offers."""
        return int(self.expected.size)

    def row(self, bound: int) -> FloatArray:
        """Every offer's hours at ``bound`` (0 low, 1 expected, 2 high)."""
        found = self._rows[bound]
        if found is None:
            assert self._hours is not None and self._speeds is not None
            found = self._rows[bound] = self._hours / self._speeds[bound]
        return found

    def at(self, bound: int, offers: IntArray) -> FloatArray:
        """The hours at ``bound`` of ``offers``: what ``row(bound).take(offers)`` gives."""
        found = self._rows[bound]
        if found is not None:
            taken: FloatArray = found.take(offers)
            return taken
        assert self._hours is not None and self._speeds is not None
        quotients: FloatArray = self._hours / self._speeds[bound].take(offers)
        return quotients

    def of_offer(self, offer: int) -> tuple[float, float, float]:
        """One offer's low, expected and high hours."""
        at = np.array([offer])
        low, expected, high = (float(self.at(bound, at)[0]) for bound in (_LOW, _EXPECTED, _HIGH))
        return low, expected, high

    def every(self) -> FloatArray:
        """``(3, offers)``: every row whole."""
        return np.stack([self.row(bound) for bound in (_LOW, _EXPECTED, _HIGH)])
