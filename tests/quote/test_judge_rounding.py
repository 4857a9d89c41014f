"""A limit judges a figure as the response shows it, rounded to hundredths (``judge._within``): only the
figures near the limit are rounded, and the answer must be the rounded rule's for every figure."""

from __future__ import annotations

import random

import numpy as np
import pytest

from service.quote.base.money import cents_array
from service.quote.evaluate import judge
from service.quote.evaluate.figures import Figure


def _figures(rng: random.Random, limit: float) -> np.ndarray:
    """Figures at the limit's rounding edges, near and far, NaN and infinite ones among them."""
    edges = [limit + offset for offset in (-0.005, -0.0049999, 0.004, 0.0049999, 0.005, 0.0050001, 0.01)]
    spread = [limit + rng.uniform(-3, 3) for _ in range(200)]
    far = [rng.choice((-1.0, 1.0)) * 10 ** rng.uniform(0, 20) for _ in range(100)]
    return np.array([*edges, *spread, *far, np.nan, np.inf, -np.inf, 0.0, limit - 1, limit + 1])


@pytest.mark.parametrize("limit", [0.0, 0.5, 24.0, 384.0, 100_000.01, 3.3e12, 7.5e17])
def test_a_limit_judges_every_figure_as_it_is_shown_rounded(limit: float) -> None:
    rng = random.Random(repr(limit))
    values = _figures(rng, limit)
    figures = np.zeros((len(Figure), values.size))
    figures[Figure.HOURS_EXPECTED] = values
    before = np.array([rng.choice((0.0, 0.25, 12.0)) for _ in range(values.size)])
    with np.errstate(invalid="ignore"):
        for lead in (None, before):
            shown = values if lead is None else values + lead
            expected = cents_array(shown) / 100 <= limit
            assert judge._within(figures, Figure.HOURS_EXPECTED, limit, lead).tolist() == expected.tolist()


@pytest.mark.parametrize("limit", [0.0, 24.0, 384.0, 3.3e12])
def test_a_row_billed_at_some_cells_judges_as_the_whole_row_past_every_limit_elsewhere(limit: float) -> None:
    """``judge.BilledAt``: the figures of some cells (the rest left unbilled, past every limit) judge
    every cell as the whole row does with +inf at the others, with and without a lead before each."""
    rng = random.Random(repr(limit) + "billed")
    values = _figures(rng, limit)
    size = values.size * 3
    at = np.sort(np.array(rng.sample(range(size), values.size)))
    whole = np.full(size, np.inf)
    whole[at] = values
    before = np.array([rng.choice((0.0, 0.25, 12.0)) for _ in range(size)])
    with np.errstate(invalid="ignore"):
        for lead in (None, before):
            billed = {Figure.HOURS_EXPECTED: judge.BilledAt(at, values, size)}
            reference = judge._within({Figure.HOURS_EXPECTED: whole}, Figure.HOURS_EXPECTED, limit, lead)
            found = judge._within(billed, Figure.HOURS_EXPECTED, limit, lead)
            assert found.tolist() == reference.tolist()
            assert found[at].any() and not found[np.setdiff1d(np.arange(size), at)].any()
