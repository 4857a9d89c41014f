"""The quote engine's entry point: ``build_quote(snapshot, request, options=...) -> QuoteResponse``.

Pure: no I/O, no clock, no environment. The caller passes the time (``QuoteOptions.now``) and whether the
price store answered. Steps: resolve the request's names (``InvalidRequest`` on a bad one), evaluate every
(offer × card count) candidate in bulk, rank the qualifying ones, then build only the returned quotes.

Rounding rules (documented once here, applied in ``money``, ``billing``, ``evaluate`` and ``quotes``):

- money is rounded half-up to the fen only at the edge, in the response; hours half-up to 0.01 h;
- each bound of a range is billed on its own wall-clock hours rounded UP to the offer's granularity:
  48 gpu-hours on 4 cards at 2.8–3.2× is 15 / 16 / 17.142857 h, shown 15 / 16 / 17.14 h, and at
  hourly granularity billed 15 / 16 / 18 h, so ¥480.00 / ¥512.00 / ¥576.00 at 4 × ¥8/h;
- deadline and budget compare the figures as shown, so a quote never displays a value past a limit.

Every figure of every candidate is computed once, in bulk, by ``evaluate``; the returned quotes (and the
single-card comparison the summary uses) are gathered from its arrays.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from adapters.gpus import DEFAULT_GPU_CATALOG, GpuCatalog
from schemas.quote import (
    Alternative,
    Lang,
    MemoryNeed,
    Quote,
    QuoteRequest,
    QuoteResponse,
    Sizing,
    SnapshotInfo,
    Task,
    Workload,
)
from schemas.vendor import VendorConfig
from service.quote.alternatives import better_alternatives, quantized_requests
from service.quote.assemble.context import QuoteContext
from service.quote.assemble.extras import add_single_card, safe_position
from service.quote.assemble.quotes import build_quotes
from service.quote.assemble.warnings import mfu_text
from service.quote.base.arrays import BoolArray, FloatArray, frozen
from service.quote.base.memo import MemoSlot, kept_by_identity, memoized
from service.quote.base.paths import FastPaths
from service.quote.evaluate.evaluation import Evaluation, evaluate, prepare_whole_billing
from service.quote.evaluate.locality import DEFAULT_CROSS_CITY_MBPS, prepare_listed_fees
from service.quote.evaluate.placing import prepare_kinds
from service.quote.jobs.deadline import prepare_row_kinds
from service.quote.model.interruptions import (
    DEFAULT_GPU_HOURS_BETWEEN_FAILURES,
    DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH,
    prepare_high_counts,
)
from service.quote.model.memory import DEFAULT_BYTES_PER_PARAM, PRECISION_BYTES, min_cards
from service.quote.model.scaling import DEFAULT_CROSS_NODE_FACTOR
from service.quote.model.snapshot import Snapshot
from service.quote.model.tables import OfferTables
from service.quote.nearest import nothing_fits_summary
from service.quote.prose.names import ProseNames, gpu_name
from service.quote.prose.summary import alternative_sentence, lead_sentences, quote_summary
from service.quote.prose.texts import Message, join_text, number_text, said
from service.quote.rank import CandidateKeys, pick
from service.quote.resolve import ResolvedRequest, resolve_request

__all__ = ["QuoteOptions", "build_quote", "prepare_snapshot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuoteOptions:
    """What the engine needs besides the snapshot and the request; everything an operator tunes.

    A plain value: the service fills it from ``Settings``, which validates the environment's input.
    """

    now: datetime
    price_max_age_s: float
    catalog: GpuCatalog = DEFAULT_GPU_CATALOG
    cross_node_factor: float = DEFAULT_CROSS_NODE_FACTOR
    # Most cards considered when the request leaves ``card_counts`` out (``Settings.max_plan_cards``).
    max_plan_cards: int = 512
    # Mbit/s a copy of the data between cities gets (``Settings.cross_city_mbps``; ``_locality``).
    cross_city_mbps: float = DEFAULT_CROSS_CITY_MBPS
    # GPU-hours between hardware failures (``Settings.gpu_hours_between_failures``), and the range of
    # spot interruptions per machine-month for offers whose vendor states none (``model.interruptions``).
    gpu_hours_between_failures: float = DEFAULT_GPU_HOURS_BETWEEN_FAILURES
    spot_interruptions_per_month: tuple[float, float, float] = DEFAULT_SPOT_INTERRUPTIONS_PER_MONTH
    store_reachable: bool = True
    store_empty: bool = False
    vendors: Sequence[VendorConfig] = ()
    bytes_per_param: Mapping[Task, float] = field(default_factory=lambda: dict(DEFAULT_BYTES_PER_PARAM))
    # Every fast path on (``base.paths``); ``FastPaths.none()`` is the reference evaluation tests compare with.
    fast_paths: FastPaths = field(default_factory=FastPaths)


def _response_warnings(
    resolved: ResolvedRequest, evaluation: Evaluation, snapshot: Snapshot, options: QuoteOptions
) -> list[Message]:
    lang, request = resolved.request.lang, resolved.request
    warnings: list[Message] = []
    if resolved.memory_floor and resolved.memory_needed_gb is not None:
        warnings.append(_memory_floor_warning(resolved, lang))
    if not options.store_reachable:
        warnings.append(said("warn_store", lang))
    elif options.store_empty:
        warnings.append(said("warn_store_empty", lang))
    if evaluation.used_stale:
        warnings.append(
            said("warn_stale_fallback", lang, max_age=number_text(options.price_max_age_s / 3600))
        )
    warnings += _memory_warnings(resolved, evaluation, snapshot.tables)
    warnings += _hours_warnings(resolved, evaluation, snapshot.tables, options.catalog)
    if resolved.memory_check_incomplete:
        warnings.append(said("warn_memory_unchecked", lang))
    if request.rank_by == "value" and request.time_value_cny_per_hour is None:
        warnings.append(said("warn_value_without_time", lang))
    return warnings


def _memory_warnings(resolved: ResolvedRequest, evaluation: Evaluation, tables: OfferTables) -> list[Message]:
    """What the model's memory means for the choice: a heavy job one machine holds is safer on one machine
    (the Shenzhen article's pick rule, right after the warnings on the prices themselves, so the summary
    says it early); a model no machine holds runs only on clusters."""
    needed, request, lang = resolved.memory_needed_gb, resolved.request, resolved.request.lang
    if needed is None or not evaluation.matching.any():
        return []
    warnings = []
    # Which rows one machine holds the model on (and which of those it must be split on), per memory need.
    holds, split_holds = _ONE_MACHINE.of(tables.memos).get(
        needed, lambda: _one_machine(evaluation.min_cards, tables.machine_cards)
    )
    every_match = bool(evaluation.matching.all())

    def matching(rows: BoolArray) -> BoolArray:
        return rows if every_match else evaluation.matching & rows

    communication = request.workload.communication
    # Heavy as the caller says, or where the model must be split across cards (``jobs.batch``).
    split = communication is None and request.scaling is None and resolved.kind.shortened_by_cards
    if (communication == "heavy" or split) and matching(split_holds if split else holds).any():
        warnings.append(said("hint_single_machine", lang, need=number_text(needed)))
    if not matching(holds).any():
        warnings.append(said("warn_cluster_only", lang, need=number_text(needed)))
    return warnings


def _one_machine(min_cards: FloatArray, machine_cards: FloatArray) -> tuple[BoolArray, BoolArray]:
    """Per row, whether one of its machines holds the model (``min_cards`` of a memory need), and whether
    it does so split over more than one card."""
    holds = min_cards <= machine_cards
    return frozen(holds), frozen(holds & (min_cards > 1))


# Per table, ``_one_machine`` of the memory needs seen lately (as ``evaluate`` keeps their fewest cards).
_ONE_MACHINE: MemoSlot[float, tuple[BoolArray, BoolArray]] = MemoSlot("one machine holds", size=8)


def _hours_warnings(
    resolved: ResolvedRequest, evaluation: Evaluation, tables: OfferTables, catalog: GpuCatalog
) -> list[Message]:
    """Where the hours come from when it changes how they compare: taken as given on every GPU model (no
    reference GPU to convert from), or estimated from the job's FLOPs."""
    lang, sizing = resolved.request.lang, resolved.job.sizing
    if sizing is not None:
        return [said("warn_sized", lang, mfu=mfu_text(sizing, lang))]
    if resolved.reference_gpu is not None or not resolved.kind.shortened_by_cards:
        return []  # converted, or wall-clock hours on any GPU
    gpu_codes = np.unique(tables.gpu_code[evaluation.offers_qualifying()])
    if gpu_codes.size <= 1:
        return []
    names = (gpu_name(tables.gpu_names[code], catalog) for code in gpu_codes)
    return [said("warn_not_comparable", lang, gpus=join_text("join_list", names, lang))]


def _sizing_info(resolved: ResolvedRequest) -> Sizing | None:
    """How a job given by its tokens was sized, for the response."""
    sizing = resolved.job.sizing
    if sizing is None:
        return None
    return Sizing(
        flops=sizing.flops,
        flops_per_param_token=sizing.flops_per_param_token,
        active_params_b=sizing.active_params_b,
        tokens=sizing.tokens,
        mfu=sizing.mfu,
        mfu_source="caller" if sizing.mfu_from_caller else "default",
    )


def _memory_floor_warning(resolved: ResolvedRequest, lang: Lang) -> Message:
    """The memory checked at the least any task needs, said first (``prose.summary.LEADING_WARNINGS``)."""
    needed, params_b = resolved.memory_needed_gb or 0.0, resolved.model_params_b or 1.0
    return said("warn_memory_floor", lang, need=number_text(needed), bytes=number_text(needed / params_b))


def _prose_names(snapshot: Snapshot, options: QuoteOptions, lang: Lang) -> ProseNames:
    """Vendor display names in ``lang``: the configured ``name_zh`` in Chinese, else the stored name;
    the same for every request on one snapshot with one vendor list, so kept on the snapshot (by the
    list's identity: the service passes the one it loaded, and the entry holds it so the id stays its own)."""

    def make() -> ProseNames:
        names = {vendor: status.name for vendor, status in snapshot.statuses.items() if status.name}
        for vendor in options.vendors:
            name = vendor.name_zh if lang == "zh" and vendor.name_zh else vendor.name
            names[vendor.id] = name or names.get(vendor.id, vendor.id)
        return ProseNames(vendors=names, catalog=options.catalog, lang=lang)

    return kept_by_identity(_PROSE_NAMES.of(snapshot.memos), (options.vendors, options.catalog), make, lang)


_PROSE_NAMES: MemoSlot[Hashable, tuple[tuple[object, ...], ProseNames]] = MemoSlot("prose names", size=8)


def _memory_need(resolved: ResolvedRequest, snapshot: Snapshot) -> MemoryNeed | None:
    """The model's memory and the fewest cards of each GPU model the snapshot offers that hold it."""
    needed = resolved.memory_needed_gb
    if needed is None:
        return None
    fewest = _fewest_cards(tuple(snapshot.tables.memory_by_gpu.items()), needed)  # sorted by GPU id
    return MemoryNeed(needed_gb=round(needed, 2), min_cards=dict(fewest))


@memoized(256)
def _fewest_cards(
    memory_by_gpu: tuple[tuple[str, float], ...], needed_gb: float
) -> tuple[tuple[str, int], ...]:
    """``(GPU, fewest cards)`` per GPU model: the same for every request of one model size and catalog."""
    if not memory_by_gpu:
        return ()
    gpus, memory_gb = zip(*memory_by_gpu, strict=True)
    fewest = min_cards(needed_gb, np.array(memory_gb))
    return tuple(zip(gpus, (int(cards) for cards in fewest), strict=True))


def build_quote(snapshot: Snapshot, request: QuoteRequest, *, options: QuoteOptions) -> QuoteResponse:
    """Rank every feasible way to run the job by cost, time or value; pure."""
    return _answer(snapshot, request, options)


def prepare_snapshot(snapshot: Snapshot, options: QuoteOptions | None = None) -> None:
    """Make what every request of some kind reads from ``snapshot``'s tables alone and keeps there (the
    rows' kinds a serving or independent job is placed by, and a deadline's), so the first such request
    on a new snapshot does not: about 60 ms between them at 96,000 offers, 1.6 MB kept (after the default
    request, the first serving request took 67-95 ms without, 17-25 ms with; the first independent runs
    96-137 and 45-47 ms), the fees the offers list (the first request naming a data city: 19 ms), and
    the process's table of interruption counts (``prepare_high_counts``).
    With ``options``, also what billing every cell of a plain job's layout reads and the speed-ups by
    count its deadlines search (``prepare_whole_billing``: a deadline or budget most rows meet). The
    service calls it as it builds each snapshot, before serving it; answers are the same without."""
    prepare_kinds(snapshot.tables)
    prepare_row_kinds(snapshot.tables)
    prepare_listed_fees(snapshot.tables)
    prepare_high_counts()
    if options is not None:
        prepare_whole_billing(
            snapshot.tables,
            _resolved(snapshot, _PLAIN_JOB, options),
            catalog=options.catalog,
            cross_node_factor=options.cross_node_factor,
            max_plan_cards=options.max_plan_cards,
            fast=options.fast_paths,
        )


# A batch job with no model, deadline or counts: the rule and layout most requests share.
_PLAIN_JOB = QuoteRequest(workload=Workload(gpu_hours=1.0))


def _resolved(snapshot: Snapshot, request: QuoteRequest, options: QuoteOptions) -> ResolvedRequest:
    known = snapshot.known(options.vendors)
    return resolve_request(
        request,
        snapshot.tables,
        snapshot.statuses.keys(),
        options.catalog,
        options.bytes_per_param,
        known=known,
    )


def _evaluated(
    tables: OfferTables,
    resolved: ResolvedRequest,
    options: QuoteOptions,
    fast: FastPaths,
    *,
    single_card: bool = True,
) -> Evaluation:
    return evaluate(
        tables,
        resolved,
        catalog=options.catalog,
        now_s=options.now.timestamp(),
        price_max_age_s=options.price_max_age_s,
        cross_node_factor=options.cross_node_factor,
        max_plan_cards=options.max_plan_cards,
        cross_city_mbps=options.cross_city_mbps,
        gpu_hours_between_failures=options.gpu_hours_between_failures,
        spot_interruptions_per_month=options.spot_interruptions_per_month,
        fast=fast,
        single_card=single_card,
    )


def _context(
    snapshot: Snapshot, resolved: ResolvedRequest, evaluation: Evaluation, options: QuoteOptions
) -> QuoteContext:
    return QuoteContext(
        tables=snapshot.tables,
        evaluation=evaluation,
        resolved=resolved,
        catalog=options.catalog,
        now_s=options.now.timestamp(),
        price_max_age_s=options.price_max_age_s,
        operator_factor=options.cross_node_factor,
        cross_city_mbps=options.cross_city_mbps,
        lang=resolved.request.lang,
        held=snapshot.held,
    )


def _keys(evaluation: Evaluation, tables: OfferTables, request: QuoteRequest) -> CandidateKeys:
    """The ranking keys of the evaluation's qualifying candidates."""
    return CandidateKeys.of_cells(
        evaluation.qualifying,
        evaluation.cells,
        evaluation.cost_expected,
        evaluation.hours_expected,
        offers=tables.size,
        id_order=tables.id_order,
        cards=evaluation.cards,
        time_value_cny_per_hour=request.time_value_cny_per_hour,
    )


def _recommendation(
    snapshot: Snapshot, request: QuoteRequest, options: QuoteOptions
) -> tuple[Quote | None, float | None]:
    """The recommended quote of ``request`` (None when nothing qualifies) and the memory it needs: what its
    full answer says of them, without the rest of it (the other quotes, the summary)."""
    resolved = _resolved(snapshot, request, options)
    # The recommendation alone: no single card is compared, so none is billed for it.
    evaluation = _evaluated(snapshot.tables, resolved, options, options.fast_paths, single_card=False)
    keys = _keys(evaluation, snapshot.tables, request)
    memory = _memory_need(resolved, snapshot)
    needed_gb = None if memory is None else memory.needed_gb  # as the answer shows it
    if keys.size == 0:
        return None, needed_gb
    recommended = pick(keys, request.rank_by, 1, top_k=options.fast_paths.top_k).recommended
    column, offer = divmod(int(keys.positions[recommended]), keys.offers)
    (built,) = build_quotes(_context(snapshot, resolved, evaluation, options), [(offer, column, 1)])
    return built.quote, needed_gb


def _alternatives(
    snapshot: Snapshot,
    resolved: ResolvedRequest,
    evaluation: Evaluation,
    recommended: tuple[int, Quote] | None,
    options: QuoteOptions,
) -> list[Alternative]:
    """The quantized alternatives that change the decision (``alternatives``): each precision's
    recommendation, as its own answer would give it."""
    asked = quantized_requests(resolved, evaluation, None if recommended is None else recommended[0])
    answers = [(precision, *_recommendation(snapshot, request, options)) for precision, request in asked]
    return better_alternatives(answers, None if recommended is None else recommended[1])


def _alternative_sentences(
    alternatives: list[Alternative], recommended: Quote | None, names: ProseNames
) -> list[str]:
    return [
        alternative_sentence(
            alternative.precision,
            PRECISION_BYTES[alternative.precision],
            alternative.memory_needed_gb,
            alternative.quote,
            None
            if recommended is None
            else recommended.cost_cny.expected - alternative.quote.cost_cny.expected,
            names,
        )
        for alternative in alternatives[:1]  # the first that changes the decision is the one said
    ]


def _answer(snapshot: Snapshot, request: QuoteRequest, options: QuoteOptions) -> QuoteResponse:
    tables = snapshot.tables
    resolved = _resolved(snapshot, request, options)

    def run(resolved: ResolvedRequest, fast: FastPaths = options.fast_paths) -> Evaluation:
        return _evaluated(tables, resolved, options, fast)

    def run_whole(resolved: ResolvedRequest) -> Evaluation:
        """Every row billed: what is said of a request nothing fits reads candidates a pruned evaluation
        leaves unbilled (every GPU's fewest cards, the supply, what the filters left out)."""
        return run(resolved, replace(options.fast_paths, bound_pruning=False))

    evaluation = run(resolved)
    names = _prose_names(snapshot, options, request.lang)
    memory = _memory_need(resolved, snapshot)
    sizing_info = _sizing_info(resolved)
    warnings = _response_warnings(resolved, evaluation, snapshot, options)
    snapshot_info = SnapshotInfo(version=snapshot.version, oldest_fetched_at=snapshot.oldest_fetched_at)
    keys = _keys(evaluation, tables, request)
    if keys.size == 0:
        found = _alternatives(snapshot, resolved, evaluation, None, options)
        return QuoteResponse(
            quotes=[],
            excluded=evaluation.excluded,
            snapshot=snapshot_info,
            summary=join_text(
                "join_sentences",
                [
                    *lead_sentences(warnings, request.lang),
                    nothing_fits_summary(
                        (run, run_whole),
                        resolved,
                        evaluation,
                        snapshot,
                        names,
                        top_k=options.fast_paths.top_k,
                    ),
                    *_alternative_sentences(found, None, names),
                ],
                request.lang,
            ),
            alternatives=found,
            rank_by=request.rank_by,
            cheapest=None,
            fastest=None,
            recommended=None,
            warnings=[message.text for message in warnings],
            memory=memory,
            sizing=sizing_info,
        )

    top_k = options.fast_paths.top_k
    picks = pick(keys, request.rank_by, request.limit, top_k=top_k)
    ranks = dict(picks.ranks)
    safe_at = safe_position(keys, picks, evaluation, tables, request, top_k)
    if safe_at is not None:
        ranks.setdefault(safe_at, 0)
    ranked = list(ranks)  # the top ``limit`` in rank order, then the highlighted ones below them
    # (offer, count column, rank) of each, the grid positions split in one call rather than one per quote.
    columns, offers = np.divmod(keys.positions[ranked], keys.offers)
    chosen = list(zip(offers.tolist(), columns.tolist(), map(ranks.__getitem__, ranked), strict=True))
    single_at = add_single_card(chosen, evaluation, tables, request)
    built_quotes = build_quotes(_context(snapshot, resolved, evaluation, options), chosen)
    structs = [built_quote.quote for built_quote in built_quotes]
    built = dict(zip(ranked, built_quotes, strict=False))
    quotes = structs[: len(ranked)]
    single = None if single_at is None else structs[single_at]
    matching_min_cards = evaluation.min_cards[evaluation.matching]
    top = built[picks.recommended].quote
    recommended_offer = chosen[ranked.index(picks.recommended)][0]
    found = _alternatives(snapshot, resolved, evaluation, (recommended_offer, top), options)
    safe = None if safe_at is None else built[safe_at].quote
    summary = quote_summary(
        recommended=built[picks.recommended].quote,
        recommended_warnings=built[picks.recommended].warnings,
        fastest=built[picks.fastest].quote,
        single=single,
        safe=safe,
        quotes=quotes,
        response_warnings=warnings,
        names=names,
        min_cards=int(matching_min_cards.min()) if matching_min_cards.size else None,
        request=request,
        extra=_alternative_sentences(found, top, names),
    )
    return QuoteResponse(
        quotes=quotes,
        excluded=evaluation.excluded,
        snapshot=snapshot_info,
        summary=summary,
        rank_by=request.rank_by,
        cheapest=built[picks.cheapest].quote.id,
        fastest=built[picks.fastest].quote.id,
        recommended=built[picks.recommended].quote.id,
        warnings=[message.text for message in warnings],
        memory=memory,
        sizing=sizing_info,
        alternatives=found,
        safe=None if safe is None else safe.id,
    )
