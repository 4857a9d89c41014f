"""Every fast path answers exactly what the reference evaluation answers.

``QuoteOptions.fast_paths`` switches each shortcut (``FastPaths``): sparse billing, plan pruning, the
deadline lookup, top-k ranking and bound pruning (run here on every table, however small). Switched off one at a time, and all together (the reference), the
engine must give the same bytes for the same seeded requests over the same seeded catalogs, the ones that
exercise each path: clusters selling up to 1,024 nodes (deadline lookups, sparse counts), vendors with
day, week and month packages beside card-hours (combined plans with many combinations to prune), stale
prices, filters that leave few offers, and requests the engine refuses.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.quote import FastPaths, QuoteOptions, Snapshot
from service.quote.base.memo import footprint
from service.quote.evaluate.layout import _COLUMNS, kept_layouts
from service.quote.jobs.independent import RunPlacement
from service.quote.jobs.serving import ReplicaPlacement
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_SEEDS = (3, 11)
# No price stale: every offer a candidate, so the combined plans compete with every product they combine.
_EVERY_PRICE_FRESH_S = 10**9
_REQUESTS = 60
# Every path on, bound pruning on tables of every size (the service's threshold skips small ones).
_FAST = FastPaths(prune_from_rows=0)
_SWITCHES = [field.name for field in dataclasses.fields(FastPaths) if field.type == "bool"]


@cache
def _case(seed: int) -> tuple[Snapshot, list[QuoteRequest], list[bytes]]:
    snapshot = catalog(seed)
    quoted = list(requests(seed, _REQUESTS, snapshot))
    return (
        snapshot,
        quoted,
        answers(snapshot, quoted, QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=_FAST)),
    )


def _off(**paths: bool) -> QuoteOptions:
    return QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=dataclasses.replace(_FAST, **paths))


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize("path", _SWITCHES)
def test_each_fast_path_answers_what_its_reference_answers(seed: int, path: str) -> None:
    snapshot, quoted, fast = _case(seed)
    assert answers(snapshot, quoted, _off(**{path: False})) == fast


@pytest.mark.parametrize("seed", _SEEDS)
def test_the_reference_evaluation_answers_what_the_fast_one_answers(seed: int) -> None:
    snapshot, quoted, fast = _case(seed)
    reference = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
    assert answers(snapshot, quoted, reference) == fast


def test_the_seeded_cases_reach_every_path() -> None:
    """The comparison above means something only if the requests take the paths: quotes on clusters
    past a machine, combined plans, deadlines met by the fewest cards, refusals, empty answers."""
    snapshot, _, written = _case(_SEEDS[0])
    joined = b"\n".join(written)
    assert b'"pricing":"mixed"' in joined
    assert b'"pricing":"node_hour"' in joined
    assert b'"quotes":[]' in joined
    assert any(line.startswith(b"422 ") for line in written)
    # Spot quotes, high ends that include interruptions, and plans named for carrying no risk.
    assert b'"spot":true' in joined
    assert b'"high_includes":' in joined
    assert b'"safe":' in joined
    assert sum(line.count(b'"rank":') for line in written) > 10 * len(written) // 2
    assert len(snapshot.tables.plans) >= 6


@pytest.mark.parametrize("seed", [3, 7])
def test_placed_jobs_billed_sparsely_answer_what_the_reference_answers(seed: int) -> None:
    """Serving replicas and independent runs are placed over machines, and their layouts bill only the
    cells a response reads, like a batch job's: past the dense counts, a limit judged on the high end
    reads the combined plans' high costs at those cells (positions among the billed cells, not in the
    grid), as the reference, which bills every cell, prices them."""
    snapshot = catalog(seed, offers=1_140, clusters=12)
    quoted = [request for request in requests(seed, 400, snapshot) if request.workload.kind != "batch"]
    sparse_with_plans = 0
    fast: list[bytes] = []
    for request in quoted:
        fast += answers(snapshot, [request], QuoteOptions(now=NOW, price_max_age_s=_EVERY_PRICE_FRESH_S))
        sparse_with_plans += any(
            layout.dense < len(layout.counts) and layout.plans is not None
            for candidates, layout in kept_layouts(snapshot.tables)
            if isinstance(candidates, RunPlacement | ReplicaPlacement)
        )
    reference = QuoteOptions(now=NOW, price_max_age_s=_EVERY_PRICE_FRESH_S, fast_paths=FastPaths.none())
    assert answers(snapshot, quoted, reference) == fast
    # The comparison reaches the sparse cells: placed jobs' layouts billed cell by cell past their
    # dense counts, with combined plans among them.
    assert sparse_with_plans > len(quoted) // 4


def test_one_speed_up_everywhere_is_read_at_every_cell_as_a_gather_reads_it() -> None:
    """A curve with one speed-up at every count and column (a serving job's 1) is laid out per cell as
    a view of that float, not gathered: the same values a gather gives at every cell, no bytes kept."""
    snapshot, _, _ = _case(_SEEDS[0])
    tables = snapshot.tables
    checked = 0
    for _, layout in kept_layouts(tables):
        for _, scaling in _COLUMNS.of(layout.memos).items():
            every = np.arange(layout.cells.size)
            for table in (scaling.expected, np.ones_like(scaling.expected)):
                shaped = dataclasses.replace(scaling, expected=table)
                gathered = layout.expected_speedups(shaped, every)  # cell by cell
                assert np.array_equal(layout.expected_speedups(shaped), gathered, equal_nan=True)
            ones = dataclasses.replace(scaling, expected=np.ones_like(scaling.expected))
            assert footprint(layout._gather(ones).dense) == footprint(layout._gather(ones).sparse) == 0
            checked += 1
    assert checked >= 2, checked


def test_a_layouts_billing_rows_are_its_cells_rows_read_once() -> None:
    """``Layout.billing_rows``: each cell's units at its row's unit rate, and past the dense counts each
    cell's row's granule and minimum billed, made once per layout (what every cell's figures read)."""
    snapshot, _, _ = _case(_SEEDS[0])
    tables = snapshot.tables
    for _, layout in kept_layouts(tables):
        rows = layout.billing_rows(tables)
        assert layout.billing_rows(tables) is rows
        rate = layout.units * tables.unit_rate_cny_per_hour.take(layout.cell_offer)
        assert np.array_equal(rows.hourly_rate, rate, equal_nan=True)
        past = layout.cell_offer[layout.dense * tables.size :]
        assert np.array_equal(rows.granularity_hours, tables.granularity_hours.take(past), equal_nan=True)
        assert np.array_equal(rows.min_billed_hours, tables.min_billed_hours.take(past), equal_nan=True)
