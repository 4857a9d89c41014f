"""What a returned quote adds about how it was derived: scaling sources, data locality, data fees.

Run on the few quotes a response returns, after ``_quotes`` built them: each note is appended to the
quote's warnings, in this order, and the data fees become line items.

- the in-machine curve's source, when it is not the article's rule (``_scaling``: by link and
  ``workload.communication``); the caller's own curve needs none;
- across nodes: the cross-node factor and where it comes from (derived from the fabric and the
  communication, or the caller's ``workload.cross_node_factor``), and, when the cards across nodes run
  slower than one machine of the same offer, a warning saying so;
- an offer outside ``workload.data_city``: IO waits, and the copy time its hours include (``_locality``);
- storage and traffic the vendor lists, with ``workload.dataset_gb``: a ``storage`` and a ``network``
  line; the compute line gives up what they take, so the lines still add up to the quote's cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from schemas.quote import Lang, LineItem, Quote
from service.names import place_display_name
from service.quote._evaluate import Evaluation, Figure
from service.quote._locality import locality_note
from service.quote._money import cents, format_cny, round_cny
from service.quote._resolve import ResolvedRequest
from service.quote._scaling import FABRIC_BANDWIDTH_RATIO, ScalingColumn
from service.quote._tables import OfferTables
from service.quote._texts import number_text, text

__all__ = ["NoteContext", "with_notes"]


@dataclass(frozen=True, slots=True)
class NoteContext:
    tables: OfferTables
    evaluation: Evaluation
    resolved: ResolvedRequest
    operator_factor: float
    cross_city_mbps: float
    lang: Lang


def _factor_why(context: NoteContext, column: ScalingColumn) -> str:
    lang, communication = context.lang, context.resolved.request.workload.communication
    if column.factor_from_caller:
        return text("factor_caller", lang)
    return text(
        "factor_derived",
        lang,
        operator=number_text(context.operator_factor),
        communication=text(f"communication_{communication}", lang),
        bandwidth=number_text(FABRIC_BANDWIDTH_RATIO.get(column.interconnect, 1.0)),
    )


def _scaling_notes(context: NoteContext, quote: Quote, column: ScalingColumn) -> list[str]:
    lang = context.lang
    communication = text(f"communication_{context.resolved.request.workload.communication}", lang)
    notes: list[str] = []
    if column.curve_source and column.curve_source != "scaling_source_caller":
        notes.append(
            text(
                "warn_scaling_curve",
                lang,
                low=number_text(quote.speedup.low),
                high=number_text(quote.speedup.high),
                cards=quote.cards,
                communication=communication,
                interconnect=text(f"interconnect_{column.interconnect}", lang),
                source=text(column.curve_source, lang),
            )
        )
    if not column.spans_nodes(quote.cards):
        return notes
    notes.append(
        text(
            "warn_cross_node",
            lang,
            factor=f"{column.cross_node_factor:.2f}",
            interconnect=text(f"interconnect_{column.interconnect}", lang),
            why=_factor_why(context, column),
        )
    )
    one_machine = column.speedup(column.machine_cards)
    if quote.speedup.expected < round(one_machine.expected, 2):
        notes.append(
            text(
                "warn_slower_than_one_machine",
                lang,
                cards=quote.cards,
                nodes=quote.nodes,
                interconnect=text(f"interconnect_{column.interconnect}", lang),
                speedup=number_text(quote.speedup.expected),
                machine_cards=column.machine_cards,
                one_machine=number_text(one_machine.expected),
                communication=communication,
            )
        )
    return notes


def _fee_items(context: NoteContext, quote: Quote, index: int, column: int) -> list[LineItem]:
    """Storage and traffic lines, the compute line reduced by them (``quote.breakdown`` otherwise kept)."""
    figures, lang = context.evaluation.figures, context.lang
    dataset = number_text(context.resolved.request.workload.dataset_gb or 0.0)
    offer = context.tables.offers[index]
    fees: list[LineItem] = []
    storage = float(figures[Figure.STORAGE_CNY, column, index])
    if cents(storage) > 0:
        price = format_cny(offer.storage_cny_per_gb_day or 0.0)
        description = text("item_data_storage", lang, dataset=dataset, price=price)
        fees.append(LineItem(kind="storage", description=description, amount_cny=round_cny(storage)))
    traffic = float(figures[Figure.TRAFFIC_CNY, column, index])
    if cents(traffic) > 0:
        price = format_cny(offer.traffic_cny_per_gb or 0.0)
        description = text("item_data_traffic", lang, dataset=dataset, price=price)
        fees.append(LineItem(kind="network", description=description, amount_cny=round_cny(traffic)))
    if not fees:
        return quote.breakdown
    taken = sum(cents(item.amount_cny) for item in fees)
    items = list(quote.breakdown)
    at = next(i for i, item in enumerate(items) if item.kind == "compute")
    compute = items[at]
    items[at] = LineItem(
        kind="compute",
        description=compute.description,
        amount_cny=(cents(compute.amount_cny) - taken) / 100,
    )
    return [*items, *fees]


def with_notes(
    context: NoteContext, chosen: Sequence[tuple[int, int, int]], quotes: Sequence[Quote]
) -> list[Quote]:
    """``quotes`` (built for ``chosen``) with their derivation notes and data-fee lines added."""
    evaluation, resolved = context.evaluation, context.resolved
    workload = resolved.request.workload
    noted: list[Quote] = []
    for (index, column, _), quote in zip(chosen, quotes, strict=True):
        notes: list[str] = []
        if evaluation.scaling is not None and not resolved.serving and quote.cards > 1:
            scaling_column = evaluation.scaling.columns[int(evaluation.machine_code[index])]
            notes.extend(_scaling_notes(context, quote, scaling_column))
        if evaluation.remote is not None and evaluation.remote[index] and resolved.data_city is not None:
            notes.append(
                locality_note(
                    offer_city=place_display_name(quote.city, context.lang),
                    data_city=place_display_name(resolved.data_city, context.lang),
                    dataset_gb=workload.dataset_gb,
                    mbps=context.cross_city_mbps,
                    lang=context.lang,
                )
            )
        breakdown = _fee_items(context, quote, index, column) if workload.dataset_gb else quote.breakdown
        changed = bool(notes) or breakdown is not quote.breakdown
        noted.append(
            msgspec.structs.replace(quote, warnings=[*quote.warnings, *notes], breakdown=breakdown)
            if changed
            else quote
        )
    return noted
