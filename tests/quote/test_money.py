"""Rounding at the edge: half-up to the fen, never showing float noise."""

from __future__ import annotations

import numpy as np
import pytest

from service.quote.base import cents_array, format_cny, round_cny, round_hours


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (383.99999999999994, 384.0),  # 0.1-step sums land just below
        (384.00000000000006, 384.0),
        (1.005, 1.01),  # 1.005 * 100 is 100.49999999999999 in binary
        (0.125, 0.13),  # half-up, not banker's rounding
        (2.675, 2.68),
        (0.004999, 0.0),
        (-0.125, -0.13),
    ],
)
def test_round_cny_is_half_up_to_the_fen(amount: float, expected: float) -> None:
    assert round_cny(amount) == expected


def test_hours_round_to_hundredths() -> None:
    assert round_hours(48 / 2.8) == 17.14
    assert round_hours(48 / 3.2) == 15.0


def test_quote_figures_round_half_up_in_bulk() -> None:
    # A quote's ranges and the limits checked against them are rounded together, as arrays.
    amounts = np.array([383.99999999999994, 384.00000000000006, 1.005, 0.125, 2.675, 0.004999, 48 / 2.8])
    assert (cents_array(amounts) / 100).tolist() == [384.0, 384.0, 1.01, 0.13, 2.68, 0.0, 17.14]


def test_format_cny_groups_thousands() -> None:
    assert format_cny(1234.5) == "¥1,234.50"
    assert format_cny(383.99999999999994) == "¥384.00"
