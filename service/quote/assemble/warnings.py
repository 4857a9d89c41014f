"""A returned quote's own warnings: idle cards, converted hours, clusters, minimums, limits, stale prices.

In this order, each only when it applies:

- cards billed but idle (a node's or a machine's whole size rented for fewer cards);
- hours converted from the reference GPU: the conversion's range and what each end rests on (the
  catalog's sources, or the caller's measured ratio), and the hours on one card;
- a model that needs more cards than one machine holds (a cluster);
- the offer's minimum billed hours reached;
- a high end past the deadline or the budget (the expected figures are within them), saying when the
  high end includes interruptions;
- the interruptions' own (``assemble.interruptions``: spot capacity, material hours lost, a checkpoint
  interval to suggest);
- a stale price: how old it is against the maximum age.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.gpus import GpuCatalog, conversion_pair
from schemas.quote import Lang
from service.quote.assemble.context import QuoteContext
from service.quote.assemble.figures import QuoteFigures
from service.quote.assemble.idle import idle_warning
from service.quote.base.memo import MemoSlot, memoized
from service.quote.base.money import format_cny
from service.quote.model.sizing import TokenSizing
from service.quote.prose.names import gpu_name
from service.quote.prose.texts import Message, hours_text, join_text, number_text, partial_text, said, text

__all__ = ["quote_warnings"]

# Words in a catalog speed source that say what kind of evidence it is, earliest mention wins.
_SOURCE_WORDS = (
    ("throughput", "source_measured"),
    ("measure", "source_measured"),
    ("peak", "source_peak"),
    ("bandwidth", "source_bandwidth"),
)


def _source_kind(sources: Sequence[str], end: str) -> str:
    """The message id naming the evidence behind the ``end`` ("low" or "high") of a model's speed."""
    return _source_kind_of(tuple(sources), end)


@memoized(256)
def _source_kind_of(sources: tuple[str, ...], end: str) -> str:
    source = next((item.lower() for item in sources if item.startswith(f"{end} ")), "")
    if "derived" in source:
        return "source_derived"
    found = [(source.find(word), kind) for word, kind in _SOURCE_WORDS if word in source]
    return min(found)[1] if found else "source_peak"  # no sources: the catalog's peak ratio


def _speed_clause(catalog: GpuCatalog, gpu: str, lang: Lang) -> str | None:
    """``gpu``'s speed over the RTX 4090 and what each end rests on; None for the RTX 4090 itself."""
    model = catalog.get(gpu)
    speed = model.speed
    if speed is None or (speed.low == speed.high == 1.0):
        return None
    low_kind = text(_source_kind(model.speed_sources, "low"), lang)
    if speed.low == speed.high:
        return text(
            "speed_point", lang, gpu=gpu_name(gpu, catalog), speed=_factor_text(speed.low), kind=low_kind
        )
    return text(
        "speed_range",
        lang,
        gpu=gpu_name(gpu, catalog),
        low=_factor_text(speed.low),
        high=_factor_text(speed.high),
        low_kind=low_kind,
        high_kind=text(_source_kind(model.speed_sources, "high"), lang),
    )


def _factor_text(factor: float) -> str:
    """A speed ratio to 0.01 with at least one decimal: ``3.0``, ``3.3``, ``0.43``."""
    shown = f"{factor:.2f}"
    return shown[:-1] if shown.endswith("0") else shown


@memoized(512)
def _conversion_text(
    catalog: GpuCatalog, gpu: str, reference: str, measured: float | None, low: float, high: float, lang: Lang
) -> str:
    """How ``gpu``'s hours were converted from ``reference``'s: the caller's measured ratio, the catalog's
    direct measurement of the pair, or each model's speed over the RTX 4090 and what its ends rest on;
    the same for every job, so written once."""
    if measured is not None:
        return text("conversion_measured", lang, ratio=_factor_text(measured))
    factors = _factor_text(low) if low == high else f"{_factor_text(low)}–{_factor_text(high)}"
    pair = conversion_pair(catalog, reference, gpu)
    if pair is not None:
        return text(
            "conversion_direct",
            lang,
            factors=factors,
            faster=gpu_name(pair.faster, catalog),
            slower=gpu_name(pair.slower, catalog),
            low=_factor_text(pair.speed.low),
            high=_factor_text(pair.speed.high),
        )
    clauses = [
        clause for clause in (_speed_clause(catalog, name, lang) for name in (gpu, reference)) if clause
    ]
    return text("conversion_catalog", lang, factors=factors, speeds=join_text("join_list", clauses, lang))


@memoized(512)
def _converted_templates(
    catalog: GpuCatalog, gpu: str, reference: str, measured: float | None, low: float, high: float, lang: Lang
) -> tuple[str, str]:
    """The converted-hours warning with its names and conversion written in, and its hours range: the
    same for every job of one GPU and conversion, so only the hours are filled in per response."""
    warning = partial_text(
        "warn_converted",
        lang,
        ("reference_hours", "hours", "hours_range"),
        reference=gpu_name(reference, catalog),
        gpu=gpu_name(gpu, catalog),
        conversion=_conversion_text(catalog, gpu, reference, measured, low, high, lang),
    )
    return warning, partial_text("range_suffix", lang, ("low", "high"), unit=text("unit_hours", lang))


def _conversion_warning(context: QuoteContext, index: int, reference: str) -> Message:
    gpu, evaluation = context.tables.offers[index].gpu, context.evaluation
    low, high = float(evaluation.conversion[0, index]), float(evaluation.conversion[2, index])
    measured = context.resolved.speed_ratios.get(gpu)
    warning, hours_range = _converted_templates(
        context.catalog, gpu, reference, measured, low, high, context.lang
    )
    hours_low, hours, hours_high = (hours_text(bound) for bound in evaluation.one_card_hours.of_offer(index))
    written = warning.format(
        reference_hours=hours_text(context.resolved.job.hours),
        hours=hours,
        hours_range="" if hours_low == hours_high else hours_range.format(low=hours_low, high=hours_high),
    )
    return Message("warn_converted", written)


def mfu_text(sizing: TokenSizing, lang: Lang) -> str:
    """The utilization a sized job runs at, in words: the default range, or the caller's figure."""
    mfu = sizing.mfu
    if sizing.mfu_from_caller:
        return text("mfu_caller", lang, mfu=number_text(mfu.expected))
    return text(
        "mfu_default",
        lang,
        low=number_text(mfu.low),
        high=number_text(mfu.high),
        expected=number_text(mfu.expected),
    )


def flops_text(flops: float) -> str:
    """``1.45e19``: three figures and a power of ten."""
    mantissa, exponent = f"{flops:.3g}".split("e") if "e" in f"{flops:.3g}" else (f"{flops:.3g}", "0")
    return f"{mantissa}e{int(exponent)}"


def _estimate_warning(context: QuoteContext, index: int) -> Message:
    """How the hours on one card of the offer's GPU were estimated from the job's size (by GPU)."""
    gpu = context.tables.offers[index].gpu
    memo = _ESTIMATE_WARNINGS.of(context.memos)
    found = memo.lookup(gpu)
    if found is not None:
        return found
    sizing, lang = context.resolved.job.sizing, context.lang
    assert sizing is not None
    low, hours, high = (hours_text(bound) for bound in context.evaluation.one_card_hours.of_offer(index))
    written = said(
        "warn_estimated",
        lang,
        flops=flops_text(sizing.flops),
        per_token=number_text(sizing.flops_per_param_token),
        params=number_text(sizing.active_params_b),
        tokens=number_text(sizing.tokens),
        mfu=mfu_text(sizing, lang),
        gpu=gpu_name(gpu, context.catalog),
        tflops=number_text(context.catalog.get(gpu).tflops_bf16),
        hours=hours,
        hours_range=""
        if low == high
        else text("range_suffix", lang, low=low, high=high, unit=text("unit_hours", lang)),
    )
    return memo.keep(gpu, written)


# The estimated-hours warning of this response, by the offer's GPU.
_ESTIMATE_WARNINGS: MemoSlot[str, Message] = MemoSlot("estimate warnings", size=64)


# The converted-hours warning of this response, by the offer's GPU.
_CONVERSION_WARNINGS: MemoSlot[str, Message] = MemoSlot("conversion warnings", size=64)


def quote_warnings(
    context: QuoteContext,
    index: int,
    cards: int,
    figures: QuoteFigures,
    interruptions: Sequence[Message] = (),
) -> list[Message]:
    """The warnings of offer ``index`` at ``cards`` cards with ``figures``, in the order above
    (``interruptions``: the interruptions' own warnings)."""
    tables, lang = context.tables, context.lang
    offer, terms = tables.offers[index], tables.terms[index]
    request, evaluation, expected = context.resolved.request, context.evaluation, figures.bill
    warnings: list[Message] = []
    idle = idle_warning(context, index, cards, figures)
    if idle is not None:
        warnings.append(idle)
    reference = context.resolved.reference_gpu
    if context.resolved.job.sizing is not None:
        warnings.append(_estimate_warning(context, index))
    elif reference is not None and offer.gpu != reference:
        # Every figure in it is the GPU's: its conversion and its hours on one card.
        memo = _CONVERSION_WARNINGS.of(context.memos)
        conversion = memo.lookup(offer.gpu)
        if conversion is None:
            conversion = memo.keep(offer.gpu, _conversion_warning(context, index, reference))
        warnings.append(conversion)
    if context.resolved.memory_needed_gb is not None and evaluation.min_cards[index] > terms.machine_cards:
        warnings.append(
            said(
                "warn_cluster",
                lang,
                min_cards=int(evaluation.min_cards[index]),
                memory=offer.gpu_memory_gb,
                need=number_text(context.resolved.memory_needed_gb),
                node_cards=terms.machine_cards,
                interconnect=context.word(f"interconnect_{offer.interconnect}"),
            )
        )
    if terms.min_billed_hours > 0 and expected.billed_hours == terms.min_billed_hours:
        warnings.append(said("warn_minimum", lang, hours=hours_text(terms.min_billed_hours)))
    lead = float(tables.lead_time_h[index])
    if lead > 0:
        finish = hours_text(lead + figures.raw_hours_expected)
        warnings.append(said("warn_lead_time", lang, lead=hours_text(lead), finish=finish))
    if request.deadline_hours is not None and figures.hours.high + lead > request.deadline_hours:
        count = figures.high_interruptions
        warnings.append(
            said(
                "warn_deadline",
                lang,
                hours=hours_text(lead + figures.raw_hours_high),
                deadline=number_text(request.deadline_hours),
                interrupted=text("deadline_interrupted", lang, count=count) if count else "",
            )
        )
    if request.budget_cny is not None and figures.cost_cny.high > request.budget_cny:
        cost, budget = format_cny(figures.raw_cost_high), format_cny(request.budget_cny)
        warnings.append(said("warn_budget", lang, cost=cost, budget=budget))
    warnings.extend(interruptions)
    if evaluation.stale[index]:
        warnings.append(context.stale_warning(offer.fetched_at))
    return warnings
