"""What a returned quote adds about how it was derived: scaling sources, data locality, data fees, memory.

Each note follows the quote's own warnings (``_quote_warnings``), in this order, and the data fees
become line items:

- the in-machine curve's source, when it is not the article's rule (``_scaling``: by link and
  ``workload.communication``); the caller's own curve needs none;
- across nodes: the cross-node factor and where it comes from (derived from the fabric and the
  communication, or the caller's ``workload.cross_node_factor``), and, when the cards across nodes run
  slower than one machine of the same offer, a warning saying so;
- an offer outside ``workload.data_city``: IO waits, and the copy time its hours include (``_locality``);
- a model that takes 89.5 % or more of the cards' memory (shown to the percent): under 10 % is left for
  activations, which the memory figure for training does not count;
- storage and traffic the vendor lists, with ``workload.dataset_gb``: a ``storage`` and a ``network``
  line; the compute line gives up what they take, so the lines still add up to the quote's cost.

The scaling notes depend only on the speed-up column, the card count and the nodes, so a response looks
them up once per such triple (``_SCALING_NOTES``); they are written once for all responses
that ask the same (a bounded cache on those values, the language, the communication and the factor).
"""

from __future__ import annotations

from schemas.quote import Communication, Lang, LineItem, Range
from service.names import place_display_name
from service.quote.assemble.context import QuoteContext
from service.quote.base.memo import MemoSlot, memoized
from service.quote.base.money import cents, format_cny, round_cny
from service.quote.evaluate.evaluation import Figure
from service.quote.evaluate.locality import copy_hours
from service.quote.model.scaling import FABRIC_BANDWIDTH_RATIO, ScalingColumn
from service.quote.prose.names import gpu_name
from service.quote.prose.texts import Message, hours_text, number_text, said, text

__all__ = ["fee_items", "quote_notes"]

# A fit whose model takes this share of the cards' memory or more (shown to the percent) leaves under 10 %
# for activations, which the memory figure for training does not count.
_TIGHT_MEMORY_USE = 0.895


def _factor_why(column: ScalingColumn, lang: Lang, communication: str, operator_factor: float) -> str:
    if column.factor_from_caller:
        return text("factor_caller", lang)
    return text(
        "factor_derived",
        lang,
        operator=number_text(operator_factor),
        communication=communication,
        bandwidth=number_text(FABRIC_BANDWIDTH_RATIO.get(column.interconnect, 1.0)),
    )


def _scaling_notes(
    context: QuoteContext, column: ScalingColumn, cards: int, nodes: int, speedup: Range
) -> tuple[Message, ...]:
    """The notes on how ``cards`` cards scale in ``column``; none when the curve is the article's rule
    (or the caller's) on one machine, else written once for every response that asks the same."""
    curve_noted = bool(column.curve_source) and column.curve_source != "scaling_source_caller"
    if not curve_noted and not column.spans_nodes(cards):
        return ()
    return _written_scaling_notes(
        column, cards, nodes, speedup, context.lang, column.communication, context.operator_factor
    )


@memoized(1024)
def _written_scaling_notes(
    column: ScalingColumn,
    cards: int,
    nodes: int,
    speedup: Range,
    lang: Lang,
    communication_kind: Communication,
    operator_factor: float,
) -> tuple[Message, ...]:
    communication = text(f"communication_{communication_kind}", lang)
    interconnect = text(f"interconnect_{column.interconnect}", lang)
    notes: list[Message] = []
    if column.curve_source and column.curve_source != "scaling_source_caller":
        notes.append(
            said(
                "warn_scaling_curve",
                lang,
                low=number_text(speedup.low),
                high=number_text(speedup.high),
                cards=cards,
                communication=communication,
                interconnect=interconnect,
                source=text(column.curve_source, lang),
            )
        )
    if not column.spans_nodes(cards):
        return tuple(notes)
    notes.append(
        said(
            "warn_cross_node",
            lang,
            factor=f"{column.cross_node_factor:.2f}",
            interconnect=interconnect,
            why=_factor_why(column, lang, communication, operator_factor),
        )
    )
    one_machine = column.speedup(column.machine_cards)
    if speedup.expected < round(one_machine.expected, 2):
        notes.append(
            said(
                "warn_slower_than_one_machine",
                lang,
                cards=cards,
                nodes=nodes,
                interconnect=interconnect,
                speedup=number_text(speedup.expected),
                machine_cards=column.machine_cards,
                one_machine=number_text(one_machine.expected),
                communication=communication,
            )
        )
    return tuple(notes)


def _locality_note(
    *, offer_city: str, data_city: str, dataset_gb: float | None, mbps: float, lang: Lang
) -> Message:
    """The warning an offer outside the data's city carries: IO waits, and the copy time added."""
    if dataset_gb is None:
        return said("warn_data_remote", lang, city=offer_city, data_city=data_city)
    return said(
        "warn_data_copy",
        lang,
        city=offer_city,
        data_city=data_city,
        dataset=number_text(dataset_gb),
        mbps=number_text(mbps),
        hours=hours_text(copy_hours(dataset_gb, mbps)),
    )


# The scaling notes of this response, by (speed-up column, count column, nodes).
_SCALING_NOTES: MemoSlot[tuple[int, int, int], tuple[Message, ...]] = MemoSlot("scaling notes", size=64)


def _split_heavy(context: QuoteContext, index: int) -> bool:
    """Whether the offer's cards hold the model only split across them, scaled as a heavy job for it
    (the caller said neither how the job communicates nor how it scales: ``jobs.batch.curve_speedups``)."""
    request = context.resolved.request
    return (
        request.workload.communication is None
        and request.scaling is None
        and context.evaluation.min_cards[index] > 1
    )


def _split_note(context: QuoteContext, index: int) -> Message:
    offer = context.tables.offers[index]
    return said(
        "warn_split_model",
        context.lang,
        gpu=gpu_name(offer.gpu, context.catalog),
        need=number_text(context.resolved.memory_needed_gb or 0.0),
        min_cards=int(context.evaluation.min_cards[index]),
    )


def quote_notes(
    context: QuoteContext, index: int, column: int, cards: int, nodes: int, speedup: Range
) -> list[Message]:
    """The notes of offer ``index`` at count column ``column`` (``cards`` cards on ``nodes`` nodes)."""
    evaluation, resolved = context.evaluation, context.resolved
    notes: list[Message] = []
    if resolved.kind.shortened_by_cards and cards > 1 and _split_heavy(context, index):
        notes.append(_split_note(context, index))
    if resolved.kind.shortened_by_cards and cards > 1:
        code = int(evaluation.scaling.code[index])
        key = (code, column, nodes)
        memo = _SCALING_NOTES.of(context.memos)
        scaling = memo.lookup(key)
        if scaling is None:
            column_of = evaluation.scaling.columns[code]
            scaling = memo.keep(key, _scaling_notes(context, column_of, cards, nodes, speedup))
        notes.extend(scaling)
    if evaluation.remote is not None and evaluation.remote[index] and resolved.data_city is not None:
        notes.append(
            _locality_note(
                offer_city=place_display_name(context.tables.offers[index].city, context.lang),
                data_city=place_display_name(resolved.data_city, context.lang),
                dataset_gb=resolved.request.workload.dataset_gb,
                mbps=context.cross_city_mbps,
                lang=context.lang,
            )
        )
    needed_gb = resolved.memory_needed_gb
    if needed_gb is not None:
        memory_gb = context.tables.offers[index].gpu_memory_gb
        used = needed_gb / (cards * memory_gb)
        if used >= _TIGHT_MEMORY_USE:
            notes.append(
                said(
                    "warn_memory_tight",
                    context.lang,
                    used=number_text(100 * used),
                    need=number_text(needed_gb),
                    cards=cards,
                    memory=memory_gb,
                )
            )
    return notes


def fee_items(context: QuoteContext, index: int, column: int, breakdown: list[LineItem]) -> list[LineItem]:
    """``breakdown`` with the storage and traffic lines added and the compute line reduced by them
    (``breakdown`` itself when there are none)."""
    evaluation, lang = context.evaluation, context.lang
    figures = evaluation.figures[:, evaluation.cell(column, index)]
    dataset = number_text(context.resolved.request.workload.dataset_gb or 0.0)
    offer = context.tables.offers[index]
    fees: list[LineItem] = []
    storage = float(figures[Figure.STORAGE_CNY])
    if cents(storage) > 0:
        price = format_cny(offer.storage_cny_per_gb_day or 0.0)
        description = text("item_data_storage", lang, dataset=dataset, price=price)
        fees.append(LineItem(kind="storage", description=description, amount_cny=round_cny(storage)))
    traffic = float(figures[Figure.TRAFFIC_CNY])
    if cents(traffic) > 0:
        price = format_cny(offer.traffic_cny_per_gb or 0.0)
        description = text("item_data_traffic", lang, dataset=dataset, price=price)
        fees.append(LineItem(kind="network", description=description, amount_cny=round_cny(traffic)))
    if not fees:
        return breakdown
    taken = sum(cents(item.amount_cny) for item in fees)
    items = list(breakdown)
    at = next(i for i, item in enumerate(items) if item.kind == "compute")
    compute = items[at]
    items[at] = LineItem(
        kind="compute",
        description=compute.description,
        amount_cny=(cents(compute.amount_cny) - taken) / 100,
    )
    return [*items, *fees]
