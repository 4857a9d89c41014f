"""The rows to bill read off every candidate's own figures, where a request has them all worked out.

A deadline or a budget that most rows can meet works out every cell's expected hours and cost to judge
them (``evaluation._ranked_within_limits``), then bills the rows that can reach what the response
returns. The rows' lower bounds (``pruning.kept_rows``) know nothing of the limits: a row whose one card
is cheap but far past a deadline, met only at many cards and many times the cost, has a bound as low as
its one card's. At 96,000 offers a deadline of 105 hours for 1,344 GPU-hours kept 24,630 rows by their
bounds, 168,000 cells to bill, where the candidates within the limits needed a few hundred rows.

The figures judged are the very floats the figure block bills (``figures.expected_figures``), so a row
holds a candidate within a threshold exactly when one of its own figures is within it: every row that can
be returned is kept, as with the bounds, and only those. The rows returned beside the ranking are among
them: the cheapest and the fastest are candidates, the plan without the recommendation's risk is a
candidate up to whose key the thresholds reach (``evaluation._reaching``), and the single card the summary
compares is found by its own cost (it need not be a candidate: its count may not be one asked for): its
rows' one-card cells alone are billed for it (``single_card_rows``), not every cell of each row with a
candidate up to its cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schemas.quote import QuoteRequest
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, unique_sorted
from service.quote.evaluate.pruning import SafeRows, Thresholds, widened

__all__ = ["KnownCandidates"]


@dataclass(frozen=True, slots=True)
class KnownCandidates:
    """Every candidate within the request's limits (its expected cost and hours, and its row, in cell
    order), and the rows whose one-card cell can be the single card with its expected cost there."""

    cost: FloatArray
    hours: FloatArray
    rows: IntArray
    single_rows: IntArray
    single_cost: FloatArray

    @classmethod
    def of(
        cls, candidates: tuple[FloatArray, FloatArray, IntArray], single: tuple[IntArray, FloatArray]
    ) -> KnownCandidates | None:
        """The candidates' figures and rows, and the single card's rows and costs; None when a figure is
        unknown (NaN: the rows' bounds decide then, as they always did)."""
        cost, hours, rows = candidates
        if np.isnan(cost).any() or np.isnan(hours).any() or np.isnan(single[1]).any():
            return None
        return cls(cost, hours, rows, single[0], single[1])

    def single_card_rows(self) -> IntArray:
        """The rows (ascending) whose one-card cell can be the single card the summary compares: those
        whose one-card cost is the least, past float noise (its ties are broken by hours, then id)."""
        if self.single_cost.size == 0:
            return self.single_rows
        return self.single_rows[self.single_cost <= widened(float(self.single_cost.min()))]

    def kept(
        self, thresholds: Thresholds, request: QuoteRequest, safe: SafeRows
    ) -> tuple[IntArray, IntArray]:
        """``pruning.kept_rows`` read off the candidates: the rows (ascending) holding one within a
        threshold of cost or value (or of hours when the ranking is by time), or one without the spot
        risk within the ranking key's own, billed whole; and the other rows holding one within the
        hours' threshold, the fastest candidate's, of which only the cells within it can be returned."""
        cost, hours = self.cost, self.hours
        within: BoolArray = cost <= thresholds.cost
        time_value = request.time_value_cny_per_hour
        value = cost if time_value is None else cost + time_value * hours
        if np.isfinite(thresholds.value):
            within |= value <= thresholds.value
        if thresholds.safe_key is not None:
            ranked = cost if request.rank_by == "cost" else hours if request.rank_by == "time" else value
            within |= (ranked <= thresholds.safe) & safe.rows.take(self.rows)
        if request.rank_by == "time":
            within |= hours <= thresholds.hours
        whole = unique_sorted(self.rows[within])
        if request.rank_by == "time":
            return whole, np.empty(0, dtype=np.int64)
        by_hours = unique_sorted(self.rows[hours <= thresholds.hours])
        return whole, np.setdiff1d(by_hours, whole, assume_unique=True)
