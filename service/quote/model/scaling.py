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
  would come out slower than 16); below 0.5 more nodes are slower than fewer, which is the point of such
  a factor (a communication-heavy job over Ethernet).

``expected`` is the midpoint of low and high.

**Which curve and which factor** (``scaling_columns``): each offer's interconnect and the request's
``workload.communication`` (light | moderate | heavy) choose them, unless the request replaces them.
Precedence: the caller's measured points (``scaling: {"4": [...]}``) replace the in-machine curve and
reach as far as they are measured, so a caller who measured 32 cards gets exactly that; a named profile
(``scaling: "nvlink"``) replaces only the in-machine curve; ``workload.cross_node_factor`` replaces the
derived cross-node factor. The quote's warnings name every derived figure's source (``scaling_notes``).

In-machine curve (speed-up at 4 / 8 cards) by the machine's link:

==========  ====================  ====================  ====================
link        light                 moderate              heavy
==========  ====================  ====================  ====================
nvlink      3.5–3.9 / 6.7–7.8     2.8–3.2 / 4.5–5.5     2.8–3.2 / 4.5–5.5
pcie        2.8–3.2 / 4.5–5.5     2.8–3.2 / 4.5–5.5     1.8–2.6 / 2.4–4.0
fabric      2.8–3.2 / 4.5–5.5     2.8–3.2 / 4.5–5.5     1.8–3.2 / 2.4–5.5
==========  ====================  ====================  ====================

- 2.8–3.2 / 4.5–5.5: the Jiangsu article's rule of thumb, the default for moderate jobs everywhere.
- NVLink, light: NVIDIA DeepLearningExamples (Translation/Transformer README), efficiency 0.87–0.97 at
  4 cards and 0.84–0.98 at 8 on 8×V100 / 8×A100 NVLink. NVLink, heavy: the Shenzhen article (通信密集的
  任务，单机 NVLink 通常更快) keeps it at the article's rule rather than below.
- PCIe, heavy: consumer cards on PCIe without peer-to-peer, large model: efficiency can fall below 0.5
  at 8 cards (public measurements, docs/engine.md), the ``comm_heavy`` profile.
- fabric (an offer whose feed names its cluster fabric, InfiniBand / RoCE / Ethernet, not the link inside
  its machines): the article's rule, and for heavy jobs the span from PCIe-heavy to NVLink-heavy, since
  the link inside is not known.

Cross-node factor (efficiency kept per doubling of nodes) ``f = 1 / (1 + o × c × b)``, where
``o = 1 / F − 1`` is the overhead per doubling at the operator's factor ``F`` (``GPUQUOTE_CROSS_NODE_FACTOR``,
0.9: the low end of 0.88–0.93 over InfiniBand, docs/engine.md), ``c`` the communication ratio and ``b`` the
fabric's bandwidth ratio. At F = 0.9:

============================  =========  ========  ========  ========
fabric                        b          light     moderate  heavy
============================  =========  ========  ========  ========
infiniband, roce              1          0.964     0.9       0.75
ethernet                      8          0.771     0.529     0.273
pcie / nvlink (not stated)    1          0.964     0.9       0.75
============================  =========  ========  ========  ========

- ``c``: light 1/3, moderate 1, heavy 3. Horovod's README (25 Gb RoCE, 128 servers) measured 0.90
  efficiency for ResNet-101 and 0.68 for VGG-16, whose dense gradients are much larger: the heavy job lost
  about 3× as much; and DeepLearningExamples' BERT pretraining over InfiniBand kept 0.93 at 4 nodes and
  0.88 at 16, 0.96–0.97 per doubling, a third of the moderate overhead (light).
- ``b``: RDMA over InfiniBand or RoCE keeps 0.88–0.93 alike; TCP over 25 GbE moves about
  3 GB/s against 25 GB/s over 200 Gb InfiniBand, 8× less (docs/engine.md), so communication takes 8× as long.
  A heavy job across Ethernet nodes then runs slower than on one machine (32 cards on 4 nodes: 4 × 0.273²
  = 0.30 of the 8-card speed), as the Shenzhen article warns (通信密集的任务，单机反而更稳).
- A node-hour offer whose feed names no cluster fabric (pcie / nvlink) is taken at b = 1, as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

import numpy as np
import numpy.typing as npt

from schemas.offer import Interconnect
from schemas.quote import MAX_CARDS, Communication, Range, ScalingOverride
from service.defaults import DEFAULT_CROSS_NODE_FACTOR
from service.errors import InvalidRequest
from service.quote.base.memo import holds_no_arrays, memoized

__all__ = [
    "COMMUNICATION_RATIO",
    "DEFAULT_CARDS_PER_NODE",
    "DEFAULT_CROSS_NODE_FACTOR",
    "FABRIC_BANDWIDTH_RATIO",
    "IN_MACHINE_CURVES",
    "PROFILES",
    "ScalingColumn",
    "ScalingColumns",
    "ScalingCurve",
    "column_keys",
    "curve_from_override",
    "derived_cross_node_factor",
    "scaling_columns",
    "speedup_columns",
    "speedup_range",
    "speedup_table",
]

DEFAULT_CARDS_PER_NODE = 8


@holds_no_arrays
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


# Defaults an operator may want to tune; sources in docs/engine.md.
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


def _anchor_cards(curve: ScalingCurve, cards_per_node: int) -> int:
    """The cards past which every doubling pays the cross-node factor: the curve's last point, or one
    machine when it holds more."""
    return max(curve.points[-1][0], cards_per_node)


def _cross_node(
    cards: int, anchor_cards: int, anchor: tuple[float, float], cross_node_factor: float
) -> tuple[float, float]:
    """Efficiency (low, high) past ``anchor_cards``: the anchor's, times the factor per doubling."""
    cross_node = cross_node_factor ** math.log2(cards / anchor_cards)
    return anchor[0] * cross_node, anchor[1] * cross_node


def _efficiency(
    cards: int, curve: ScalingCurve, cards_per_node: int, cross_node_factor: float
) -> tuple[float, float]:
    anchor_cards = _anchor_cards(curve, cards_per_node)
    if cards <= anchor_cards:
        return _interpolated_efficiency(cards, curve.points)
    anchor = _interpolated_efficiency(anchor_cards, curve.points)
    return _cross_node(cards, anchor_cards, anchor, cross_node_factor)


def _bounds(cards: int, efficiency: tuple[float, float]) -> tuple[float, float, float]:
    """Speed-ups (low, expected, high) of ``cards`` cards at ``efficiency`` (low, high)."""
    low, high = cards * efficiency[0], cards * efficiency[1]
    return low, (low + high) / 2, high


def speedup_range(
    cards: int,
    curve: ScalingCurve | None = None,
    *,
    cards_per_node: int = DEFAULT_CARDS_PER_NODE,
    cross_node_factor: float = DEFAULT_CROSS_NODE_FACTOR,
) -> Range:
    """Speed-up of ``cards`` cards over one: ``speedup_range(4)`` is 2.8 / 3.0 / 3.2."""
    efficiency = _efficiency(cards, curve or PROFILES["default"], cards_per_node, cross_node_factor)
    low, expected, high = _bounds(cards, efficiency)
    return Range(low=low, expected=expected, high=high)


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


# The tables in the module docstring, with their sources there.
COMMUNICATION_RATIO: Mapping[Communication, float] = {"light": 1 / 3, "moderate": 1.0, "heavy": 3.0}
FABRIC_BANDWIDTH_RATIO: Mapping[Interconnect, float] = {"infiniband": 1.0, "roce": 1.0, "ethernet": 8.0}
IN_MACHINE_CURVES: Mapping[str, Mapping[Communication, ScalingCurve]] = {
    "nvlink": {"light": PROFILES["nvlink"], "moderate": PROFILES["default"], "heavy": PROFILES["default"]},
    "pcie": {"light": PROFILES["default"], "moderate": PROFILES["default"], "heavy": PROFILES["comm_heavy"]},
    "fabric": {
        "light": PROFILES["default"],
        "moderate": PROFILES["default"],
        "heavy": ScalingCurve.from_points({4: (1.8, 3.2), 8: (2.4, 5.5)}),
    },
}
# Message ids (``_texts``) naming each derived in-machine curve's source; the article's rule has none
# (the summary's caveat already calls it an estimate).
_CURVE_SOURCES: Mapping[tuple[str, Communication], str] = {
    ("nvlink", "light"): "scaling_source_nvlink_light",
    ("pcie", "heavy"): "scaling_source_pcie_heavy",
    ("fabric", "heavy"): "scaling_source_fabric_heavy",
}


def _link(interconnect: Interconnect) -> str:
    return interconnect if interconnect in {"nvlink", "pcie"} else "fabric"


def derived_cross_node_factor(
    interconnect: Interconnect, communication: Communication, operator_factor: float
) -> float:
    """``1 / (1 + o × c × b)``: the operator's overhead per doubling scaled by communication and fabric."""
    overhead = (1 / operator_factor - 1) * COMMUNICATION_RATIO[communication]
    return 1 / (1 + overhead * FABRIC_BANDWIDTH_RATIO.get(interconnect, 1.0))


@holds_no_arrays
@dataclass(frozen=True, slots=True)
class ScalingColumn:
    """One (machine size, interconnect) the offers share, with the curve and factor it runs on.

    ``curve_source`` is a message id, or ``""`` for the article's rule; ``factor_from_caller`` says the
    cross-node factor is the request's own.
    """

    machine_cards: int
    interconnect: Interconnect
    curve: ScalingCurve
    cross_node_factor: float
    curve_source: str
    factor_from_caller: bool
    communication: Communication = "moderate"  # what the curve and factor were derived for

    def speedup(self, cards: int) -> Range:
        return speedup_range(
            cards, self.curve, cards_per_node=self.machine_cards, cross_node_factor=self.cross_node_factor
        )

    def spans_nodes(self, cards: int) -> bool:
        """Whether ``cards`` pays the cross-node factor: past the curve's last point and one machine."""
        return cards > _anchor_cards(self.curve, self.machine_cards)

    def speedups_through(
        self, most_cards: int, bound: Literal["low", "expected", "high"]
    ) -> tuple[float, ...]:
        """``speedup(n).<bound>`` for n = 1 … ``most_cards`` (``_speedups_through``, kept per curve,
        machine size and factor: the columns of one request share them, and so do the requests)."""
        return _speedups_through(
            self.curve,
            self.machine_cards,
            self.cross_node_factor,
            most_cards,
            ("low", "expected", "high").index(bound),
        )


# Per curve, machine size, factor, most cards and bound: a deadline's columns (40 at 96,000 offers) hold
# about half as many of them, and other requests' columns the same ones. A tuple of 512 floats is 16 KB;
# a cluster selling 8,192 cards makes one of 256 KB.
@memoized(64)
def _speedups_through(
    curve: ScalingCurve, machine_cards: int, cross_node_factor: float, most_cards: int, at: int
) -> tuple[float, ...]:
    """``speedup_range(n, curve, ...)`` low, expected or high (``at``: 0, 1, 2) for n = 1 … ``most_cards``:
    the same floats by the same operations (``_efficiency``, ``_cross_node``, ``_bounds``), the anchor's
    efficiency worked out once and each count past it in one line: a deadline reads every count a
    cluster sells (8,192 cards and more), where a ``speedup`` call per count took 3 us each."""
    points, anchor_cards = curve.points, _anchor_cards(curve, machine_cards)
    within = [
        _bounds(cards, _interpolated_efficiency(cards, points))[at]
        for cards in range(1, min(anchor_cards, most_cards) + 1)
    ]
    low_anchor, high_anchor = _interpolated_efficiency(anchor_cards, points)
    log2 = math.log2
    past: list[float] = []
    for cards in range(anchor_cards + 1, most_cards + 1):
        cross_node = cross_node_factor ** log2(cards / anchor_cards)
        low, high = cards * (low_anchor * cross_node), cards * (high_anchor * cross_node)
        past.append(low if at == 0 else high if at == 2 else (low + high) / 2)
    return (*within, *past)


@dataclass(frozen=True, slots=True)
class ScalingColumns:
    """Speed-ups as (card count × column) arrays; ``code`` is each offer's column."""

    columns: tuple[ScalingColumn, ...]
    code: npt.NDArray[np.int64]
    low: npt.NDArray[np.float64]
    expected: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]

    def at(
        self, count_columns: npt.NDArray[np.int64], offers: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """Flat positions in ``low``, ``expected`` and ``high`` of each offer's speed-up at its count."""
        positions: npt.NDArray[np.int64] = count_columns * self.expected.shape[1] + self.code.take(offers)
        return positions


def _column(
    machine_cards: int,
    interconnect: Interconnect,
    *,
    curve: ScalingCurve | None,
    communication: Communication,
    cross_node_factor: float | None,
    operator_factor: float,
) -> ScalingColumn:
    """The column's curve (the caller's ``curve``, else derived by link) and cross-node factor."""
    link = _link(interconnect)
    if curve is None:
        curve = IN_MACHINE_CURVES[link][communication]
        source = _CURVE_SOURCES.get((link, communication), "")
    else:
        source = "scaling_source_caller"
    factor = (
        cross_node_factor
        if cross_node_factor is not None
        else derived_cross_node_factor(interconnect, communication, operator_factor)
    )
    return ScalingColumn(
        machine_cards=machine_cards,
        interconnect=interconnect,
        curve=curve,
        cross_node_factor=factor,
        curve_source=source,
        factor_from_caller=cross_node_factor is not None,
        communication=communication,
    )


ColumnKey = tuple[int, Interconnect]


def column_keys(
    machine_cards: npt.NDArray[np.float64], interconnects: Sequence[Interconnect]
) -> tuple[tuple[ColumnKey, ...], npt.NDArray[np.int64]]:
    """The distinct (machine size, interconnect) pairs, sorted, and each row's index among them.

    They depend on the offers alone, so the offer tables hold them (``OfferTables.scaling_keys``).
    """
    keys = list(zip(machine_cards.astype(np.int64).tolist(), interconnects, strict=True))
    distinct = tuple(sorted(set(keys)))
    index = {key: code for code, key in enumerate(distinct)}
    return distinct, np.array([index[key] for key in keys], dtype=np.int64)


# The columns and their speed-up tables are pure functions of a few small values that repeat from request
# to request (the snapshot's column keys, the communication, the counts each offer sells), so they are
# worked out once and looked up after: a request gathers from them instead of walking counts × columns.
@memoized(256)
def _columns(
    keys: tuple[ColumnKey, ...],
    curve: ScalingCurve | None,
    communication: Communication,
    cross_node_factor: float | None,
    operator_factor: float,
) -> tuple[ScalingColumn, ...]:
    return tuple(
        _column(
            cards,
            interconnect,
            curve=curve,
            communication=communication,
            cross_node_factor=cross_node_factor,
            operator_factor=operator_factor,
        )
        for cards, interconnect in keys
    )


@memoized(1024)
def _speedup_block(
    columns: tuple[ScalingColumn, ...], card_counts: tuple[int, ...]
) -> npt.NDArray[np.float64]:
    """``(3, counts, columns)``: low / expected / high speed-up of each count on each column; read-only.
    Columns alike in curve, machine size and factor are worked out once (``_column_speedups``: the 44
    columns of a named model's first request at 96,000 offers are 18 such)."""
    table = np.empty((3, len(card_counts), len(columns)))
    alike: dict[tuple[ScalingCurve, int, float], npt.NDArray[np.float64]] = {}
    for at, column in enumerate(columns):
        key = (column.curve, column.machine_cards, column.cross_node_factor)
        if key not in alike:
            alike[key] = _column_speedups(*key, card_counts)
        table[:, :, at] = alike[key]
    table.flags.writeable = False
    return table


def _column_speedups(
    curve: ScalingCurve, machine_cards: int, cross_node_factor: float, card_counts: tuple[int, ...]
) -> npt.NDArray[np.float64]:
    """``(3, counts)``: ``speedup_range(n, curve, ...)`` low, expected and high at each count: the same
    floats by the same operations (``_efficiency``, ``_cross_node``, ``_bounds``), the anchor's efficiency
    worked out once: a new communication's block at 96,000 offers (20 columns, 58 counts) takes 0.6 to
    0.7 ms instead of 2.0 with a ``speedup`` call per count and column."""
    points, anchor_cards = curve.points, _anchor_cards(curve, machine_cards)
    anchor = _interpolated_efficiency(anchor_cards, points)
    speedups: npt.NDArray[np.float64] = np.array(
        [
            _bounds(
                cards,
                _interpolated_efficiency(cards, points)
                if cards <= anchor_cards
                else _cross_node(cards, anchor_cards, anchor, cross_node_factor),
            )
            for cards in card_counts
        ]
    ).T.reshape(3, len(card_counts))
    return speedups


def speedup_columns(
    card_counts: Sequence[int],
    keys: tuple[ColumnKey, ...],
    code: npt.NDArray[np.int64],
    *,
    curve: ScalingCurve | None,
    communication: Communication,
    cross_node_factor: float | None,
    operator_factor: float,
    serving: bool = False,
) -> ScalingColumns:
    """``scaling_columns`` over column keys prepared once per snapshot (``column_keys``); ``curve`` is the
    caller's (``curve_from_override``), None for the curves derived by link and communication."""
    columns = _columns(keys, curve, communication, cross_node_factor, operator_factor)
    if serving:
        table = np.ones((3, len(card_counts), len(columns)))
    else:
        table = _speedup_block(columns, tuple(card_counts))
    return ScalingColumns(columns=columns, code=code, low=table[0], expected=table[1], high=table[2])


def scaling_columns(
    card_counts: Sequence[int],
    machine_cards: npt.NDArray[np.float64],
    interconnects: Sequence[Interconnect],
    *,
    override: ScalingOverride | None,
    communication: Communication,
    cross_node_factor: float | None,
    operator_factor: float,
    serving: bool = False,
) -> ScalingColumns:
    """Each offer's column (its machine size and interconnect) and every column's speed-ups.

    A serving job is never sped up: every speed-up is 1, whatever the cards (they hold the model and its
    replicas; the hours are the wall-clock hours asked for).
    """
    keys, code = column_keys(machine_cards, interconnects)
    return speedup_columns(
        card_counts,
        keys,
        code,
        curve=None if override is None else curve_from_override(override),
        communication=communication,
        cross_node_factor=cross_node_factor,
        operator_factor=operator_factor,
        serving=serving,
    )
