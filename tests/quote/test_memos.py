"""The engine's caches: bounded (the entry kept longest out first), reused when a request shape repeats, and
never able to answer a request with what another one left behind."""

from __future__ import annotations

import dataclasses

import msgspec
import numpy as np

from schemas.quote import QuoteRequest, Workload
from service.quote import FastPaths, QuoteOptions, build_quote, prepare_snapshot
from service.quote.base import BoundedMemo, Memos, MemoSlot
from service.quote.base.memo import footprint, holds_no_arrays
from service.quote.evaluate.layout import kept_layouts
from service.quote.jobs.deadline import DEADLINE_BOUNDS, _speedups_by_count
from service.quote.model.interruptions import _breakpoints
from service.quote.model.scaling import ScalingColumn, ScalingColumns, ScalingCurve
from service.quote.model.scaling import _column as _scaling_column
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)


def test_a_full_memo_drops_the_entry_kept_longest() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(made)

    for key in ("a", "b", "a", "c", "b", "a"):
        memo.get(key, lambda key=key: make(key))  # type: ignore[misc]
    # "a" is found once; "c" pushes out "a" (kept longest), so "b" is still found and "a" made again.
    assert made == ["a", "b", "c", "a"]
    assert (memo.misses, len(memo)) == (4, 2)
    assert memo.lookup("a") == 4
    assert memo.lookup("b") is None


@dataclasses.dataclass
class _Held:
    values: np.ndarray
    view: np.ndarray
    memos: Memos = dataclasses.field(default_factory=Memos)


def test_a_footprint_counts_each_array_held_once_and_what_its_caches_hold() -> None:
    values = np.zeros(1_000)  # 8,000 bytes
    held = _Held(values=values, view=values[10:])  # a view of the same data: nothing more
    assert footprint(held) == 8_000
    assert footprint((held, [held], {"again": held})) == 8_000
    MemoSlot[int, tuple[np.ndarray, int]]("inner", size=4).of(held.memos).get(1, lambda: (np.ones(500), 3))
    assert footprint(held) == 12_000


@holds_no_arrays
@dataclasses.dataclass(frozen=True)
class _Declared:
    """Declared to hold no arrays (wrongly here, to see it is not looked into)."""

    name: str
    held: object


def test_a_footprint_does_not_look_into_what_holds_no_arrays() -> None:
    values = np.zeros(1_000)
    assert footprint((_Declared("a", np.ones(500)), [values])) == 8_000
    # The types the engine declares so hold none: every field a number, a string or such a type.
    for kind in (ScalingColumn, ScalingCurve):
        for field in dataclasses.fields(kind):
            assert "Array" not in str(field.type) and "ndarray" not in str(field.type), (kind, field)
    column = _scaling_column(
        8, "nvlink", curve=None, communication="moderate", cross_node_factor=None, operator_factor=0.9
    )
    scaling = ScalingColumns(
        columns=(column,) * 40, code=np.zeros(10, dtype=np.int64), low=values, expected=values, high=values
    )
    assert footprint(scaling) == 8_000 + 80


def test_a_memo_bounded_in_bytes_drops_the_oldest_until_the_rest_fit() -> None:
    memo: BoundedMemo[str, np.ndarray] = BoundedMemo(8, max_bytes=20_000)
    for key in ("a", "b"):
        memo.get(key, lambda: np.zeros(1_000))
    memo.get("c", lambda: np.zeros(1_500))  # 28,000 bytes in all: "a" goes, 20,000 stay
    assert [memo.lookup(key) is not None for key in "abc"] == [False, True, True]
    # One value past the bound on its own is kept (the request that made it reads it), the rest dropped.
    memo.get("d", lambda: np.zeros(3_000))
    assert [memo.lookup(key) is not None for key in "abcd"] == [False, False, False, True]
    assert (memo.misses, len(memo)) == (4, 1)


def test_each_slot_keeps_its_own_cache_on_each_host() -> None:
    first: MemoSlot[int, str] = MemoSlot("first", size=4)
    second: MemoSlot[int, str] = MemoSlot("second", size=4)
    host, other = Memos(), Memos()
    first.of(host).get(1, lambda: "one")
    assert second.of(host).get(1, lambda: "uno") == "uno"
    assert first.of(other).get(1, lambda: "eins") == "eins"
    assert host.stats() == {"first": (1, 1), "second": (1, 1)}


def test_a_repeated_request_shape_reuses_its_layout_and_speedups() -> None:
    snapshot = catalog(5)
    build_quote(snapshot, QuoteRequest(workload=Workload(gpu_hours=48)), options=OPTIONS)
    made = snapshot.tables.memos.stats()["layouts"][0]
    # Another job of the same shape: other hours, a model, another language.
    other = QuoteRequest(workload=Workload(gpu_hours=700, model_params_b=7, task="lora"), lang="zh")
    build_quote(snapshot, other, options=OPTIONS)
    assert snapshot.tables.memos.stats()["layouts"][0] == made
    # A shape not seen yet makes its own.
    build_quote(snapshot, QuoteRequest(workload=Workload(gpu_hours=48), card_counts=[2]), options=OPTIONS)
    assert snapshot.tables.memos.stats()["layouts"][0] == made + 1


def test_deadline_layouts_are_kept_apart_and_reused_when_the_fewest_cards_repeat() -> None:
    snapshot = catalog(5)
    for hours in (48.0, 48.5):  # the same fewest cards meet 24 h for nearly the same job
        request = QuoteRequest(workload=Workload(gpu_hours=hours), deadline_hours=24)
        build_quote(snapshot, request, options=OPTIONS)
    stats = snapshot.tables.memos.stats()
    assert stats["job layouts"] == (1, 1)
    assert "layouts" not in stats  # a deadline's layouts never push the shared ones out


def test_the_nearest_option_past_a_deadline_shares_the_layout_without_it() -> None:
    """A deadline no offer meets is lifted to find the nearest option, every row billed: that evaluation
    reads the layout the same job without a deadline built (a layout depends on no other fast path)."""
    snapshot = catalog(5)
    build_quote(snapshot, QuoteRequest(workload=Workload(gpu_hours=4_000)), options=OPTIONS)
    assert snapshot.tables.memos.stats()["layouts"] == (1, 1)
    missed = QuoteRequest(workload=Workload(gpu_hours=4_000), deadline_hours=0.5)
    answer = build_quote(snapshot, missed, options=OPTIONS)
    assert not answer.quotes and answer.excluded.deadline > 0
    assert snapshot.tables.memos.stats()["layouts"] == (1, 1)


def test_a_warm_snapshot_answers_every_request_as_a_fresh_one_does() -> None:
    """Caches filled by hundreds of other requests (layouts, conversions, speed-ups, offer parts, texts)
    give each request the answer a snapshot that never answered anything gives."""
    warm = catalog(7)
    asked = list(requests(7, 160, warm))
    answers(warm, asked, OPTIONS)  # fill every cache
    warm_answers = answers(warm, asked[::-1], OPTIONS)[::-1]
    fresh_answers = [answers(catalog(7), [request], OPTIONS)[0] for request in asked[:40]]
    assert warm_answers[:40] == fresh_answers
    assert max(kept for _, kept in warm.tables.memos.stats().values()) <= 4096  # bounded


def test_an_answer_does_not_depend_on_what_the_response_before_it_wrote() -> None:
    """Per-response sentences (stale ages, conversions, scaling notes) are written for this response only."""
    snapshot = catalog(9)
    first = QuoteRequest(workload=Workload(gpu_hours=96, reference_gpu="rtx4090"), lang="zh")
    second = QuoteRequest(workload=Workload(gpu_hours=96, reference_gpu="h800"))
    alone = msgspec.json.encode(build_quote(catalog(9), second, options=OPTIONS))
    build_quote(snapshot, first, options=OPTIONS)
    assert msgspec.json.encode(build_quote(snapshot, second, options=OPTIONS)) == alone


_KINDS_SHARED = ("placement kinds", "followed placement kinds", "deadline row kinds", "listed data fees")
# A serving job, independent runs, a deadline and a data set in another city: the jobs that read the rows'
# kinds and the listed fees a snapshot prepares.
_KINDS_READERS = (
    QuoteRequest(workload=Workload(kind="serving", hours=100, model_params_b=70, replicas=2)),
    QuoteRequest(workload=Workload(kind="independent", gpu_hours=400, runs=16, cards_per_run=2)),
    QuoteRequest(workload=Workload(gpu_hours=900), deadline_hours=30),
    QuoteRequest(workload=Workload(gpu_hours=300, dataset_gb=800, data_city="nanjing")),
)


def test_a_prepared_snapshot_holds_what_placed_deadline_and_data_city_jobs_read() -> None:
    """``prepare_snapshot`` makes the rows' kinds and the fees those jobs read, once; they then make none,
    and answer what they answer on a snapshot that was not prepared (which makes each on its first
    reader)."""
    prepared, plain = catalog(17, 3_000), catalog(17, 3_000)
    prepare_snapshot(prepared)
    assert {name: prepared.tables.memos.stats()[name] for name in _KINDS_SHARED} == dict.fromkeys(
        _KINDS_SHARED, (1, 1)
    )
    ours, theirs = (
        answers(prepared, list(_KINDS_READERS), OPTIONS),
        answers(plain, list(_KINDS_READERS), OPTIONS),
    )
    assert ours == theirs
    assert {name: prepared.tables.memos.stats()[name] for name in _KINDS_SHARED} == dict.fromkeys(
        _KINDS_SHARED, (1, 1)
    )
    assert {name: plain.tables.memos.stats().get(name) for name in _KINDS_SHARED} == dict.fromkeys(
        _KINDS_SHARED, (1, 1)
    )


# Past the few rows bound pruning starts from, a deadline and budgets most rows meet: each works out every
# cell's figures on the shared layout (``evaluation._ranked_within_limits``), which reads what billing every
# cell reads.
_WHOLE_BILLING = ("gathered speed-ups", "billing rows")
_WHOLE_BILLING_READERS = (
    QuoteRequest(workload=Workload(gpu_hours=400), deadline_hours=50),
    QuoteRequest(workload=Workload(gpu_hours=100), budget_cny=5_000),
    QuoteRequest(workload=Workload(gpu_hours=2_000, reference_gpu="a100-80g"), budget_cny=20_000),
)


def test_a_snapshot_prepared_with_options_holds_what_billing_every_cell_reads() -> None:
    """With the quote options, ``prepare_snapshot`` also makes the shared layout's speed-ups per cell for a
    plain job's rule and its rows' billing terms per cell. A deadline and budgets that bill every cell then
    make neither, and answer what they answer on a snapshot prepared without options (whose first such
    request makes both)."""
    options = dataclasses.replace(OPTIONS, fast_paths=FastPaths(prune_from_rows=0))
    prepared, plain = catalog(17, 3_000), catalog(17, 3_000)
    prepare_snapshot(prepared, options)
    prepare_snapshot(plain)
    shared = kept_layouts(prepared.tables)
    assert len(shared) == 1 and kept_layouts(plain.tables) == []
    layout = shared[0][1]
    assert {name: layout.memos.stats().get(name) for name in _WHOLE_BILLING} == dict.fromkeys(
        _WHOLE_BILLING, (1, 1)
    )
    readers = list(_WHOLE_BILLING_READERS)
    assert answers(prepared, readers, options) == answers(plain, readers, options)
    assert {name: layout.memos.stats()[name] for name in _WHOLE_BILLING} == dict.fromkeys(
        _WHOLE_BILLING, (1, 1)
    )
    # The readers do read them: on the plain snapshot the first one made them on the same layout.
    plain_layout = kept_layouts(plain.tables)[0][1]
    assert {name: plain_layout.memos.stats().get(name) for name in _WHOLE_BILLING} == dict.fromkeys(
        _WHOLE_BILLING, (1, 1)
    )


# What a deadline searches whatever its hours: the cap's count limits (kept on the tables) and each column's
# speed-ups at every count up to the most cards (kept in the process), at both bounds a deadline is met on.
_DEADLINE_READERS = (
    QuoteRequest(workload=Workload(gpu_hours=900), deadline_hours=30),
    QuoteRequest(workload=Workload(gpu_hours=5_000, reference_gpu="a100-80g"), deadline_hours=12.5),
)


def test_a_snapshot_prepared_with_options_holds_what_a_deadline_searches() -> None:
    """With the quote options, ``prepare_snapshot`` makes a plain job's deadline count limits and speed-ups by
    count; deadlines then make neither, and answer what they answer on a snapshot prepared without options
    (whose first deadline makes its count limits and reads the process's speed-ups). The process's table of
    interruption counts is made either way."""
    _speedups_by_count.cache_clear()  # type: ignore[attr-defined]
    _breakpoints.cache_clear()
    prepared, plain = catalog(23, 1_200, clusters=12), catalog(23, 1_200, clusters=12)
    prepare_snapshot(plain)
    assert plain.tables.memos.stats().get("deadline count limits") is None
    assert _speedups_by_count.cache_info().currsize == 0  # type: ignore[attr-defined]
    assert _breakpoints.cache_info().currsize == 1
    prepare_snapshot(prepared, OPTIONS)
    assert prepared.tables.memos.stats()["deadline count limits"] == (1, 1)
    made = _speedups_by_count.cache_info()  # type: ignore[attr-defined]
    assert made.currsize == len(DEADLINE_BOUNDS) == 2
    readers = list(_DEADLINE_READERS)
    assert answers(prepared, readers, OPTIONS) == answers(plain, readers, OPTIONS)
    # The plain snapshot's deadlines read the very speed-ups prepared on the other (the same columns and
    # most cards), and neither snapshot made its count limits twice.
    assert _speedups_by_count.cache_info().misses == made.misses  # type: ignore[attr-defined]
    assert prepared.tables.memos.stats()["deadline count limits"] == (1, 1)
    assert plain.tables.memos.stats()["deadline count limits"] == (1, 1)
