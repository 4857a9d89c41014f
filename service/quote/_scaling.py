"""Speed-up of n cards over one, as a range (low, expected, high).

The curve is a few measured points ``n → (low, high)`` (1 → 1.0 is always implied). Between points,
efficiency (speed-up / n) is interpolated linearly in log2(n): 1 → 1.0 and 4 → 2.8–3.2 give 2 → 1.7–1.8.

Past the last point the curve knows nothing, so:

- up to one machine (``cards_per_node``), efficiency stays at the last point's: a 10-card machine runs
  10 cards at the 8-card efficiency;
- beyond the anchor ``A = max(last point, cards_per_node)``, efficiency is ``eff(A)`` times the cross-node
  factor per doubling of nodes, counted continuously (``f ** log2(n / A)``): 16 cards on 8-card nodes
  give 16 × (4.5/8 … 5.5/8) × 0.9 = 8.1–9.9. Counting doublings continuously rather than per whole node
  keeps the speed-up rising with every added card for any factor ≥ 0.5 (with whole nodes, 17 cards
  would come out slower than 16).

``expected`` is the midpoint of low and high. A caller's own points replace the default curve entirely.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from schemas.quote import MAX_CARDS, Range, ScalingOverride
from service.errors import InvalidRequest

__all__ = [
    "DEFAULT_CARDS_PER_NODE",
    "DEFAULT_CROSS_NODE_FACTOR",
    "PROFILES",
    "ScalingCurve",
    "curve_from_override",
    "speedup_range",
    "speedup_table",
]

DEFAULT_CARDS_PER_NODE = 8
DEFAULT_CROSS_NODE_FACTOR = 0.9
"""Efficiency kept per doubling of nodes (0.88–0.93 over InfiniBand in DOMAIN.md); ``Settings`` defaults to it."""


@dataclass(frozen=True, slots=True)
class ScalingCurve:
    """Validated points, sorted by card count, starting at ``(1, 1.0, 1.0)``."""

    points: tuple[tuple[int, float, float], ...]

    @classmethod
    def from_points(
        cls, points: Mapping[int, tuple[float, float]], *, field: str = "scaling"
    ) -> ScalingCurve:
        """Check the points (1 ≤ low ≤ high ≤ n, both bounds non-decreasing in n); raise naming the field."""
        merged = {1: (1.0, 1.0), **points}
        previous_low, previous_high, previous_cards = 1.0, 1.0, 1
        checked: list[tuple[int, float, float]] = []
        for cards in sorted(merged):
            low, high = merged[cards]
            where = f"point {cards!s}: [{low:g}, {high:g}]"
            if not 1 <= cards <= MAX_CARDS:
                raise InvalidRequest(field, f"card count {cards} outside 1..{MAX_CARDS}")
            if not (math.isfinite(low) and math.isfinite(high)) or not 1.0 <= low <= high <= cards:
                raise InvalidRequest(field, f"{where} must satisfy 1 ≤ low ≤ high ≤ {cards}")
            if low < previous_low or high < previous_high:
                raise InvalidRequest(
                    field,
                    f"{where} is below point {previous_cards}: [{previous_low:g}, {previous_high:g}];"
                    " speed-up must not fall as cards are added",
                )
            checked.append((cards, low, high))
            previous_low, previous_high, previous_cards = low, high, cards
        return cls(points=tuple(checked))


# Defaults an operator may want to tune; sources in DOMAIN.md.
PROFILES: Mapping[str, ScalingCurve] = {
    # Jiangsu article's rule of thumb.
    "default": ScalingCurve.from_points({4: (2.8, 3.2), 8: (4.5, 5.5)}),
    # NVLink machines: 0.87–0.97 efficiency at 4 cards, 0.84–0.98 at 8 (DeepLearningExamples).
    "nvlink": ScalingCurve.from_points({4: (3.5, 3.9), 8: (6.7, 7.8)}),
    # Communication-bound jobs (PCIe without P2P, large models): often below 0.5 at 8 cards.
    "comm_heavy": ScalingCurve.from_points({4: (1.8, 2.6), 8: (2.4, 4.0)}),
}


def curve_from_override(override: ScalingOverride | None) -> ScalingCurve:
    """The curve a request asks for: a named profile, its own points, or the default."""
    if override is None:
        return PROFILES["default"]
    if isinstance(override, str):
        return PROFILES[override]
    return ScalingCurve.from_points({int(cards): (low, high) for cards, (low, high) in override.items()})


def _interpolated_efficiency(cards: float, points: Sequence[tuple[int, float, float]]) -> tuple[float, float]:
    """Efficiency (low, high) at ``cards`` within the curve's span, linear in log2(cards)."""
    for (left_cards, left_low, left_high), (right_cards, right_low, right_high) in pairwise(points):
        if cards <= right_cards:
            share = math.log2(cards / left_cards) / math.log2(right_cards / left_cards)
            low = left_low / left_cards + share * (right_low / right_cards - left_low / left_cards)
            high = left_high / left_cards + share * (right_high / right_cards - left_high / left_cards)
            return low, high
    last_cards, last_low, last_high = points[-1]
    return last_low / last_cards, last_high / last_cards


def _efficiency(
    cards: int, curve: ScalingCurve, cards_per_node: int, cross_node_factor: float
) -> tuple[float, float]:
    anchor_cards = max(curve.points[-1][0], cards_per_node)
    if cards <= anchor_cards:
        return _interpolated_efficiency(cards, curve.points)
    anchor_low, anchor_high = _interpolated_efficiency(anchor_cards, curve.points)
    cross_node = cross_node_factor ** math.log2(cards / anchor_cards)
    return anchor_low * cross_node, anchor_high * cross_node


def speedup_range(
    cards: int,
    curve: ScalingCurve | None = None,
    *,
    cards_per_node: int = DEFAULT_CARDS_PER_NODE,
    cross_node_factor: float = DEFAULT_CROSS_NODE_FACTOR,
) -> Range:
    """Speed-up of ``cards`` cards over one: ``speedup_range(4)`` is 2.8 / 3.0 / 3.2."""
    low_efficiency, high_efficiency = _efficiency(
        cards, curve or PROFILES["default"], cards_per_node, cross_node_factor
    )
    low, high = cards * low_efficiency, cards * high_efficiency
    return Range(low=low, expected=(low + high) / 2, high=high)


def speedup_table(
    card_counts: Sequence[int], cards_per_node: Sequence[int], curve: ScalingCurve, cross_node_factor: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Low, expected and high speed-ups as (card count × machine size) arrays, gathered per offer in bulk."""
    table = np.empty((3, len(card_counts), len(cards_per_node)))
    for row, cards in enumerate(card_counts):
        for column, node_cards in enumerate(cards_per_node):
            speedup = speedup_range(
                cards, curve, cards_per_node=node_cards, cross_node_factor=cross_node_factor
            )
            table[:, row, column] = (speedup.low, speedup.expected, speedup.high)
    return table[0], table[1], table[2]
