"""按节点时 — per node-hour: whole nodes × hours, every card of a rented node billed, used or idle.

The unit is one node, at least the minimum nodes, at most the most nodes; the rate includes the network
premium and the storage fee per node-hour, each its own line item. The only kind that spans machines.
"""

from __future__ import annotations

from schemas.offer import NodeHourPricing
from schemas.quote import MAX_CARDS, Lang, LineItem, LineItemKind
from service.quote.base.money import format_cny, round_cny
from service.quote.model.billing import BillingTerms, ExpectedBill
from service.quote.model.pricing.base import LineSheet, OfferWords, PricingRule, compute_line
from service.quote.prose.texts import billed_time_text, text

__all__ = ["NodeHourRule"]


class NodeHourRule(PricingRule[NodeHourPricing]):
    kind = "node_hour"

    def terms(self, pricing: NodeHourPricing) -> BillingTerms:
        node_rate = (
            pricing.cny_per_node_hour
            + pricing.network_premium_cny_per_node_hour
            + pricing.storage_cny_per_node_hour
        )
        return BillingTerms(
            unit_cards=pricing.cards_per_node,
            min_units=pricing.min_nodes,
            max_units=pricing.max_nodes or MAX_CARDS,
            whole_units_only=False,
            unit_rate_cny_per_hour=node_rate,
            granularity_hours=pricing.granularity_s / 3600,
            min_billed_hours=0.0,
            machine_cards=pricing.cards_per_node,
            spans_machines=True,
        )

    def lines(self, pricing: NodeHourPricing, words: OfferWords, sheet: LineSheet) -> list[LineItem]:
        bill, lang = sheet.bill, words.lang
        nodes, hours = bill.units, billed_time_text(bill.billed_hours, lang)
        premiums: tuple[tuple[LineItemKind, str, float], ...] = (
            ("network", "item_network", pricing.network_premium_cny_per_node_hour),
            ("storage", "item_storage", pricing.storage_cny_per_node_hour),
        )
        extras = tuple(
            LineItem(
                kind=kind,
                description=text(key, lang, nodes=nodes, price=format_cny(price), hours=hours),
                amount_cny=round_cny(nodes * price * bill.billed_hours),
            )
            for kind, key, price in premiums
            if price > 0
        )
        node = {"nodes": nodes, "node_cards": pricing.cards_per_node, "price": words.price_text}
        return [compute_line(text("item_node", lang, hours=hours, **node), sheet.total_cny, extras), *extras]

    def idle_reason(self, pricing: NodeHourPricing, bill: ExpectedBill, lang: Lang) -> str:
        return text("why_nodes", lang, node_cards=pricing.cards_per_node, min_nodes=pricing.min_nodes)
