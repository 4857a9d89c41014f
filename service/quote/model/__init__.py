"""The per-snapshot model: pricing kinds reduced to one billing rule, combined plans, scaling curves,
memory fit, and the offer tables a request is evaluated over (``Snapshot``).

Nothing here knows a request: these are the facts of the offers and the domain rules every request
reads (``billing``, ``pricing``, ``plans``, ``scaling``, ``memory``), prepared once per store version
(``tables``, ``snapshot``).
"""

from service.quote.model.billing import BillingTerms, ExpectedBill, billed_hours, billed_hours_of, sold_counts
from service.quote.model.memory import (
    DEFAULT_BYTES_PER_PARAM,
    MAX_MEMORY_USE,
    PRECISION_BYTES,
    bytes_per_param_at,
    memory_needed_gb,
    min_cards,
)
from service.quote.model.plans import MixedPlan, cheapest_combination
from service.quote.model.pricing import KINDS, PricingRule, rule_of
from service.quote.model.scaling import (
    DEFAULT_CROSS_NODE_FACTOR,
    IN_MACHINE_CURVES,
    PROFILES,
    ScalingCurve,
    curve_from_override,
    derived_cross_node_factor,
    scaling_columns,
    speedup_range,
    speedup_table,
)
from service.quote.model.snapshot import Snapshot
from service.quote.model.tables import OfferTables

__all__ = [
    "DEFAULT_BYTES_PER_PARAM",
    "DEFAULT_CROSS_NODE_FACTOR",
    "IN_MACHINE_CURVES",
    "KINDS",
    "MAX_MEMORY_USE",
    "PRECISION_BYTES",
    "PROFILES",
    "BillingTerms",
    "ExpectedBill",
    "MixedPlan",
    "OfferTables",
    "PricingRule",
    "ScalingCurve",
    "Snapshot",
    "billed_hours",
    "billed_hours_of",
    "bytes_per_param_at",
    "cheapest_combination",
    "curve_from_override",
    "derived_cross_node_factor",
    "memory_needed_gb",
    "min_cards",
    "rule_of",
    "scaling_columns",
    "sold_counts",
    "speedup_range",
    "speedup_table",
]
