"""Speed-up ranges: the default curve, interpolation in log2(n), cross-node scaling, custom points, and the
curve and cross-node factor chosen by each offer's interconnect and the job's communication."""

from __future__ import annotations

import numpy as np
import pytest

from schemas.offer import Interconnect
from schemas.quote import Communication
from service.errors import InvalidRequest
from service.quote.model import (
    IN_MACHINE_CURVES,
    PROFILES,
    ScalingCurve,
    curve_from_override,
    derived_cross_node_factor,
    scaling_columns,
    speedup_range,
    speedup_table,
)
from service.quote.model.scaling import _column as _scaling_column
from service.quote.model.scaling import speedup_columns


@pytest.mark.parametrize(
    ("cards", "low", "expected", "high"),
    [
        (1, 1.0, 1.0, 1.0),
        (2, 1.7, 1.75, 1.8),  # efficiency 0.85–0.9, halfway between 1 and 4 cards in log2
        (4, 2.8, 3.0, 3.2),
        (8, 4.5, 5.0, 5.5),
        (16, 8.1, 9.0, 9.9),  # 16 × (4.5/8 … 5.5/8) × 0.9 for one doubling of nodes
        (32, 14.58, 16.2, 17.82),  # two doublings: × 0.81
    ],
)
def test_default_curve(cards: int, low: float, expected: float, high: float) -> None:
    speedup = speedup_range(cards)
    assert (speedup.low, speedup.expected, speedup.high) == pytest.approx((low, expected, high))


def test_cross_node_factor_is_configurable() -> None:
    speedup = speedup_range(16, cross_node_factor=1.0)
    assert (speedup.low, speedup.high) == pytest.approx((9.0, 11.0))


def test_a_machine_larger_than_the_curve_keeps_the_last_efficiency() -> None:
    # 10 cards on one 10-card machine: no cross-node penalty, the 8-card efficiency.
    speedup = speedup_range(10, cards_per_node=10)
    assert (speedup.low, speedup.high) == pytest.approx((10 * 4.5 / 8, 10 * 5.5 / 8))


def test_smaller_nodes_pay_cross_node_past_the_curve() -> None:
    # The anchor is the larger of the curve's last point (8) and the node size (4): 16 cards are one
    # doubling past it, whatever the node size below 8.
    assert speedup_range(16, cards_per_node=4).expected == pytest.approx(9.0)


def test_named_profiles_differ_in_the_expected_direction() -> None:
    nvlink = speedup_range(8, PROFILES["nvlink"]).expected
    default = speedup_range(8, PROFILES["default"]).expected
    comm_heavy = speedup_range(8, PROFILES["comm_heavy"]).expected
    assert comm_heavy < default < nvlink


def test_custom_points_replace_the_curve() -> None:
    curve = curve_from_override({"4": (3.5, 3.7)})
    assert speedup_range(4, curve).expected == pytest.approx(3.6)
    assert speedup_range(8, curve).low == pytest.approx(8 * 3.5 / 4)  # flat efficiency up to the machine


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ({"4": (3.2, 2.8)}, "point 4"),  # low above high
        ({"4": (2.8, 4.5)}, "≤ 4"),  # faster than linear
        ({"4": (0.5, 1.0)}, "1 ≤ low"),
        ({"4": (3.0, 3.2), "8": (2.9, 5.0)}, "must not fall"),
    ],
)
def test_inconsistent_points_name_the_field(points: dict[str, tuple[float, float]], message: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        curve_from_override(points)
    assert raised.value.field == "scaling"
    assert message in raised.value.reason


def test_speedup_table_by_card_count_and_machine_size() -> None:
    low, expected, high = speedup_table([1, 4, 16], [8, 10], PROFILES["default"], 0.9)
    assert low.shape == expected.shape == high.shape == (3, 2)
    assert (low[0, 0], expected[0, 1], high[0, 1]) == (1.0, 1.0, 1.0)
    assert (low[1, 1], expected[1, 1], high[1, 1]) == pytest.approx((2.8, 3.0, 3.2))
    assert high[2, 0] == pytest.approx(9.9)  # 16 cards on 8-card nodes: one doubling past the machine


def test_curve_starts_at_one_card() -> None:
    assert ScalingCurve.from_points({8: (4.0, 6.0)}).points[0] == (1, 1.0, 1.0)


@pytest.mark.parametrize(
    ("interconnect", "communication", "factor"),
    [
        ("infiniband", "moderate", 0.9),  # the operator's factor itself
        ("roce", "moderate", 0.9),
        ("pcie", "moderate", 0.9),  # a node offer naming no fabric: as before
        ("infiniband", "light", 27 / 28),  # 1 / (1 + (1/9) / 3)
        ("infiniband", "heavy", 0.75),  # 1 / (1 + 3/9)
        ("ethernet", "moderate", 9 / 17),  # 1 / (1 + 8/9)
        ("ethernet", "heavy", 3 / 11),  # 1 / (1 + 24/9)
    ],
)
def test_derived_cross_node_factor(
    interconnect: Interconnect, communication: Communication, factor: float
) -> None:
    assert derived_cross_node_factor(interconnect, communication, 0.9) == pytest.approx(factor)


def test_a_heavy_job_on_four_ethernet_nodes_is_slower_than_one_machine() -> None:
    factor = derived_cross_node_factor("ethernet", "heavy", 0.9)
    curve = IN_MACHINE_CURVES["fabric"]["heavy"]
    one_machine = speedup_range(8, curve, cross_node_factor=factor).expected
    four_nodes = speedup_range(32, curve, cross_node_factor=factor).expected
    assert four_nodes == pytest.approx(4 * 3.95 * (3 / 11) ** 2)
    assert four_nodes < one_machine == pytest.approx(3.95)


def test_scaling_columns_by_machine_size_and_interconnect() -> None:
    columns = scaling_columns(
        [1, 8, 16],
        np.array([8.0, 8.0, 8.0]),
        ["ethernet", "infiniband", "ethernet"],
        override=None,
        communication="heavy",
        cross_node_factor=None,
        operator_factor=0.9,
    )
    assert columns.code.tolist() == [0, 1, 0]
    assert [column.interconnect for column in columns.columns] == ["ethernet", "infiniband"]
    assert columns.expected[2].tolist() == pytest.approx([2 * 3.95 * 3 / 11, 2 * 3.95 * 0.75])
    caller = scaling_columns(
        [16], np.array([8.0]), ["ethernet"], override={"8": (6.0, 6.0)}, communication="heavy",
        cross_node_factor=1.0, operator_factor=0.9,
    )  # fmt: skip
    assert caller.expected[0, 0] == pytest.approx(12.0)  # the caller's curve and factor: 2 × 6 × 1
    serving = scaling_columns(
        [1, 8], np.array([8.0]), ["nvlink"], override=None, communication="light",
        cross_node_factor=None, operator_factor=0.9, serving=True,
    )  # fmt: skip
    assert serving.expected.tolist() == [[1.0], [1.0]]  # replicas, never speed


@pytest.mark.parametrize("machine_cards", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("interconnect", ["nvlink", "pcie", "infiniband", "ethernet"])
def test_speedups_through_a_count_are_each_counts_own_bit_for_bit(
    machine_cards: int, interconnect: Interconnect
) -> None:
    """``ScalingColumn.speedups_through`` (one pass, what a deadline reads) gives the floats ``speedup``
    gives count by count, on every curve, factor and machine size, past the curve's points and nodes."""
    curves = [*PROFILES.values(), ScalingCurve.from_points({2: (1.5, 1.9), 16: (9.0, 13.0)}), None]
    for curve in curves:
        for communication in ("light", "moderate", "heavy"):
            for factor in (None, 0.93, 1.0):
                column = _scaling_column(
                    machine_cards,
                    interconnect,
                    curve=curve,
                    communication=communication,
                    cross_node_factor=factor,
                    operator_factor=0.9,
                )
                lows, highs = column.speedups_through(2_100, "low"), column.speedups_through(2_100, "high")
                each = [column.speedup(cards) for cards in range(1, 2_101)]
                assert np.array_equal(np.array(lows), np.array([speedup.low for speedup in each]))
                assert np.array_equal(np.array(highs), np.array([speedup.high for speedup in each]))
                expected = column.speedups_through(2_100, "expected")
                assert np.array_equal(np.array(expected), np.array([speedup.expected for speedup in each]))
                # Fewer counts than the curve's points or one machine hold: none past the anchor.
                assert column.speedups_through(3, "expected") == tuple(expected[:3])


@pytest.mark.parametrize("communication", ["light", "moderate", "heavy"])
def test_speedup_blocks_are_each_cells_own_speedup_bit_for_bit(communication: Communication) -> None:
    """The speed-up block a request gathers from (columns alike worked out once per curve, machine size
    and factor) holds ``speedup(n)`` of each count on each column, in the counts' own order, bit for bit:
    counts within the curve's points, past one machine and past the curve, and a count between points."""
    machine_cards = [1, 2, 4, 8, 8, 16]
    interconnects: list[Interconnect] = ["pcie", "nvlink", "infiniband", "ethernet", "roce", "nvlink"]
    keys = tuple(sorted(set(zip(machine_cards, interconnects, strict=True))))
    code = np.arange(len(keys), dtype=np.int64)
    counts = [1, 3, 2, 8, 6, 16, 17, 1_024, 8_192, 5]
    for curve in (None, PROFILES["comm_heavy"], ScalingCurve.from_points({2: (1.5, 1.9), 16: (9.0, 13.0)})):
        for factor in (None, 0.93):
            block = speedup_columns(
                counts, keys, code, curve=curve, communication=communication,
                cross_node_factor=factor, operator_factor=0.9,
            )  # fmt: skip
            for row, cards in enumerate(counts):
                for at, column in enumerate(block.columns):
                    speedup = column.speedup(cards)
                    assert block.low[row, at] == speedup.low
                    assert block.expected[row, at] == speedup.expected
                    assert block.high[row, at] == speedup.high
    empty = speedup_columns(
        [], keys, code, curve=None, communication=communication, cross_node_factor=None, operator_factor=0.9
    )
    assert empty.expected.shape == (0, len(keys))
