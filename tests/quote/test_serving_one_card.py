"""A serving layout bills the one-card cells a response can read, not every row's.

A response reads a one-card cell where it is a candidate (requested) or where it can be the summary's
single card: runnable, so placed, so one card holding whole replicas on a hosting row
(``jobs.serving._one_card_hosts``). The one-card column of a model no card holds is then sparse, and the
layout bills no whole count. The reference is the same catalog with every row's one-card cell billed.
A quantized alternative, whose answer reads its recommendation alone, bills no one-card cell that is
not requested.
"""

from __future__ import annotations

import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import QuoteOptions, Snapshot, engine
from service.quote.base.arrays import BoolArray
from service.quote.evaluate.evaluation import Evaluation
from service.quote.evaluate.layout import kept_layouts
from service.quote.jobs import serving
from service.quote.jobs.base import every_row
from service.quote.jobs.serving import ServingLayout, placed_replicas, serving_candidates, serving_layout
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

SEEDS = (3, 8, 21)


def _catalog(seed: int) -> Snapshot:
    return catalog(seed, 360, clusters=24, packaged_vendors=6)


def _serving_requests(seed: int, snapshot: Snapshot) -> list[QuoteRequest]:
    return [request for request in requests(seed, 400, snapshot) if request.workload.kind == "serving"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_one_card_rows_are_where_one_card_can_be_placed(seed: int) -> None:
    """Every row where ``placed_replicas`` places one card is among them, and each other row among them
    hosts a whole number of replicas on one card (only its stock or limits can refuse it there)."""
    tables = _catalog(seed).tables
    rng = np.random.default_rng(seed)
    for _ in range(20):
        fewest = rng.choice([0.5, 1.0, 1.0, 2.0, 3.0, 5.0, 9.0, 17.0, np.inf, np.nan], size=tables.size)
        layout = serving_layout(tables, fewest)
        with np.errstate(invalid="ignore"):
            inputs = serving_candidates(
                tables, fewest, int(rng.integers(1, 5)), None, np.ones(tables.size, bool)
            )
            _, placed, _ = placed_replicas(tables, layout, np.ones((1, 1)), every_row)
        rows = inputs.one_card_rows
        assert rows is not None
        assert not (placed[0] & ~rows).any()
        assert np.array_equal(rows, layout.hosts & (layout.replica_cards == 1.0))
        assert rows.any() and not rows.all()


def test_a_fraction_of_a_card_per_replica_is_placed_on_one() -> None:
    """Replicas of half a card fill one card twice: its one-card cell can be placed, one of a third more
    than a card cannot (the rule is ``placed_replicas``' whole-replica test, not a card count)."""
    hosts = np.ones(3, dtype=np.bool_)
    layout = ServingLayout(
        replica_cards=np.array([0.5, 1.5, np.nan]), hosts=hosts, within_machine=hosts, whole_cards=False
    )
    found: BoolArray = serving._one_card_hosts(layout)
    assert found.tolist() == [True, False, False]


def _answered(seed: int, monkeypatch: pytest.MonkeyPatch, every_row_billed: bool) -> tuple[list[bytes], int]:
    if every_row_billed:
        monkeypatch.setattr(serving, "_one_card_hosts", lambda layout: np.ones(layout.hosts.size, np.bool_))
    snapshot = _catalog(seed)
    asked = _serving_requests(seed, snapshot)
    written = answers(snapshot, asked, QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S))
    monkeypatch.undo()
    billed = sum(
        layout.cells.size for _, layout in kept_layouts(snapshot.tables) if layout.machines is not None
    )
    return written, billed


@pytest.mark.parametrize("seed", SEEDS)
def test_answers_are_those_with_every_one_card_cell_billed(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, billed = _answered(seed, monkeypatch, every_row_billed=False)
    reference, billed_whole = _answered(seed, monkeypatch, every_row_billed=True)
    assert len(found) >= 40
    assert found == reference
    assert billed < billed_whole  # some model's one-card column was billed in part


def _candidates(evaluation: Evaluation) -> dict[int, tuple[float, float]]:
    at = np.flatnonzero(evaluation.qualifying)
    cells = evaluation.cells.take(at).tolist()
    figures = zip(
        evaluation.cost_expected.take(at).tolist(), evaluation.hours_expected.take(at).tolist(), strict=True
    )
    return dict(zip(cells, figures, strict=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_an_answer_without_the_single_card_bills_only_the_requested_one_card_cells(seed: int) -> None:
    """A quantized alternative reads its recommendation alone: its serving layout bills no one-card cell
    that is not requested, and its candidates and their figures are those of the answer in full."""
    snapshot = catalog(seed, 1000, clusters=24, packaged_vendors=6)  # large enough to bill cell by cell
    options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)
    fewer = 0
    for request in _serving_requests(seed, snapshot):
        try:
            resolved = engine._resolved(snapshot, request, options)
        except InvalidRequest:
            continue
        full = engine._evaluated(snapshot.tables, resolved, options, options.fast_paths)
        alone = engine._evaluated(snapshot.tables, resolved, options, options.fast_paths, single_card=False)
        assert _candidates(alone) == _candidates(full)
        assert alone.excluded == full.excluded
        column, _ = alone.one_card_at()
        one_card_cells = alone.cells[column]
        assert set(one_card_cells.tolist()) <= set(full.cells[full.one_card_at()[0]].tolist())
        fewer += alone.cells.size < full.cells.size
    assert fewer >= 10
