"""What one ``bench/market.py`` run measures: catalog sizes, request counts and durations (full or quick)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FULL", "QUICK", "Plan"]


@dataclass(frozen=True)
class Plan:
    """Catalog sizes, request counts and durations of one run."""

    small_offers: int
    medium_offers: int
    large_offers: int
    quotes_per_median: int
    varied_requests: int
    wrk_duration_s: int
    wrk_connections: int
    steady_s: float


FULL = Plan(2_000, 18_000, 96_000, 300, 200, 5, 32, 20.0)
QUICK = Plan(2_000, 4_000, 12_000, 60, 60, 2, 32, 5.0)
