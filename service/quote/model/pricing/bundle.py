"""多卡打包 — a bundle: a fixed group of cards rented as one unit, usually below the per-card price.

The unit is the bundle; a bundle supplies exactly a whole number of bundles' cards, at most its most
bundles, in one machine. Bought from a vendor that also sells the GPU by the card-hour, the line items show
the saving: what that card-hour offer would bill for the same cards and wall-clock hours, at its own
granularity and minimum, then a negative discount line (44 h on 4 cards is 14.67 h: 4 × ¥6.00 × 14.67 h
by the minute = ¥352.00, the bundle bills 15 h × ¥22.00 = ¥330.00, discount −¥22.00, 6.25 % off).
Without such an offer there is nothing the vendor would otherwise bill, so one compute line (no
discount against another vendor's price).
"""

from __future__ import annotations

from schemas.offer import BundlePricing
from schemas.quote import LineItem
from service.quote.base.money import cents, format_cny, round_cny
from service.quote.model.billing import BillingTerms, billed_hours_of
from service.quote.model.pricing.base import LineSheet, OfferWords, PricingRule, compute_line
from service.quote.prose.texts import billed_time_text, number_text, text

__all__ = ["BundleRule"]


class BundleRule(PricingRule[BundlePricing]):
    kind = "bundle"

    def terms(self, pricing: BundlePricing) -> BillingTerms:
        return BillingTerms(
            unit_cards=pricing.cards,
            min_units=1,
            max_units=pricing.max_bundles,
            whole_units_only=True,
            unit_rate_cny_per_hour=pricing.cny_per_bundle_hour,
            granularity_hours=pricing.granularity_s / 3600,
            min_billed_hours=0.0,
            machine_cards=pricing.cards * pricing.max_bundles,
            spans_machines=False,
        )

    def lines(self, pricing: BundlePricing, words: OfferWords, sheet: LineSheet) -> list[LineItem]:
        bill, lang, total_cny = sheet.bill, words.lang, sheet.total_cny
        fields = {"bundles": bill.units, "bundle_cards": pricing.cards, "price": words.price_text}
        reference, rate = words.reference, words.reference_rate
        if reference is not None and rate is not None:
            # What the card-hour offer itself would bill for the same run: its granularity, its minimum.
            list_hours = billed_hours_of(
                sheet.wall_clock_hours, rate.granularity_hours, rate.min_billed_hours
            )
            list_cny = sheet.cards * rate.cny_per_card_hour * list_hours
            if cents(list_cny) > cents(total_cny):
                percent = number_text((1 - bill.cost_cny / list_cny) * 100)
                listed = LineItem(
                    kind="compute",
                    description=text(
                        "item_bundle_list",
                        lang,
                        cards=sheet.cards,
                        gpu=words.gpu_name,
                        price=format_cny(rate.cny_per_card_hour),
                        reference=reference.id,
                        hours=billed_time_text(list_hours, lang),
                    ),
                    amount_cny=round_cny(list_cny),
                )
                discount = LineItem(
                    kind="discount",
                    description=text("item_bundle_discount", lang, percent=percent, **fields),
                    amount_cny=(cents(total_cny) - cents(list_cny)) / 100,
                )
                return [listed, discount]
        hours = billed_time_text(bill.billed_hours, lang)
        return [compute_line(text("item_bundle", lang, hours=hours, **fields), total_cny)]
