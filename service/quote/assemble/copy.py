"""The rent paid while a data set copies in from another city, as a line of its own.

An offer outside the data's city waits for the copy before the job starts (``evaluate.locality``), and
its cards are rented meanwhile: the bill's hours are the job's and the copy's. The compute lines bill the
job's own hours (rounded up to the offer's granularity, at least its minimum), and the copy line the
rest of the billed time at the rental's hourly rate, so each line multiplies out and the copy's cost is
what copying the data next to the cards before renting them saves. A copy that fits in the job's own
rounding adds nothing and has no line; a combined plan's parts keep their lines (its packages cover the
hours whole).
"""

from __future__ import annotations

import msgspec

from schemas.quote import LineItem
from service.names import place_display_name
from service.quote.assemble.context import QuoteContext
from service.quote.base.money import cents, format_cny, round_cny
from service.quote.evaluate.locality import copy_hours
from service.quote.model.billing import BILLING_TOLERANCE, billed_hours_of
from service.quote.model.pricing import LineSheet, LineWriter
from service.quote.prose.texts import billed_time_text, hours_text, number_text, text

__all__ = ["rent_lines"]


def rent_lines(context: QuoteContext, index: int, sheet: LineSheet, writer: LineWriter) -> list[LineItem]:
    """Offer ``index``'s compute lines for ``sheet``, and the rent while its data copies in, if any."""
    dataset_gb = context.resolved.request.workload.dataset_gb
    remote = context.evaluation.remote
    if not dataset_gb or remote is None or not remote[index]:
        return writer.items(sheet)
    copying_h = copy_hours(dataset_gb, context.cross_city_mbps)
    terms, bill = context.tables.terms[index], sheet.bill
    job_h = max(sheet.wall_clock_hours - copying_h, 0.0)
    job_billed_h = billed_hours_of(job_h, terms.granularity_hours, terms.min_billed_hours)
    copy_billed_h = bill.billed_hours - job_billed_h
    if copy_billed_h <= BILLING_TOLERANCE * terms.granularity_hours:
        return writer.items(sheet)
    copy_cny = bill.hourly_rate_cny * copy_billed_h
    job_bill = msgspec.structs.replace(bill, billed_hours=job_billed_h, cost_cny=bill.cost_cny - copy_cny)
    job_total = (cents(sheet.total_cny) - cents(copy_cny)) / 100
    lines = writer.items(LineSheet(sheet.cards, job_bill, job_total, job_h))
    lang = context.lang
    description = text(
        "item_data_copy",
        lang,
        dataset=number_text(dataset_gb),
        data_city=place_display_name(context.resolved.data_city or "", lang),
        mbps=number_text(context.cross_city_mbps),
        copy=hours_text(copying_h),
        billed=billed_time_text(copy_billed_h, lang),
        rate=format_cny(bill.hourly_rate_cny),
    )
    return [*lines, LineItem(kind="data_copy", description=description, amount_cny=round_cny(copy_cny))]
