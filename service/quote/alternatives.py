"""Alternatives that change the decision: the same job with quantized weights (the Jiangsu article's first
advice, 先量化再加卡: quantize before buying cards).

Asked only where memory decides the answer: nothing fits, or the recommendation needs more than one card
to hold the model. For inference (and serving) and LoRA, whose weights' bytes the precision sets, the job is
quoted again at int8 and int4 where they are smaller than its own; an alternative is named when it fits
where nothing did, or costs less than the recommendation.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from schemas.quote import Alternative, Quote, QuoteRequest
from service.quote.evaluate.evaluation import Evaluation
from service.quote.model.memory import PRECISION_BYTES
from service.quote.resolve import ResolvedRequest

__all__ = ["QUANTIZED", "better_alternatives", "quantized_requests"]

QUANTIZED: tuple[Literal["int8", "int4"], ...] = ("int8", "int4")
_QUANTIZABLE = frozenset({"inference", "lora"})


def quantized_requests(
    resolved: ResolvedRequest, evaluation: Evaluation, recommended_offer: int | None
) -> list[tuple[Literal["int8", "int4"], QuoteRequest]]:
    """The request at each quantized precision worth quoting, where memory decides the answer."""
    workload = resolved.request.workload
    if resolved.model_params_b is None or resolved.memory_floor or resolved.job.task not in _QUANTIZABLE:
        return []
    if recommended_offer is None:
        excluded = evaluation.excluded
        if not (excluded.memory or excluded.capacity or excluded.budget or excluded.deadline):
            return []
    elif evaluation.min_cards[recommended_offer] <= 1:
        return []
    own = PRECISION_BYTES[workload.precision or "bf16"]
    return [
        (precision, _at(resolved.request, precision))
        for precision in QUANTIZED
        if PRECISION_BYTES[precision] < own
    ]


def _at(request: QuoteRequest, precision: Literal["int8", "int4"]) -> QuoteRequest:
    """``request`` at ``precision``, asking for its top quote alone: the recommendation is the top of the
    ranking whatever the limit, and a quote is built from its own figures alone, so it is the very quote
    the full answer recommends."""
    return msgspec.structs.replace(
        request, workload=msgspec.structs.replace(request.workload, precision=precision), limit=1
    )


def better_alternatives(
    answers: list[tuple[Literal["int8", "int4"], Quote | None, float | None]], recommended: Quote | None
) -> list[Alternative]:
    """The quantized answers (each precision's recommended quote and the memory it needs, None where
    nothing qualifies or no model size is known) that change the decision: a recommendation where there
    was none, or a cheaper one than ``recommended``."""
    found = []
    for precision, pick, memory_needed_gb in answers:
        if pick is None or memory_needed_gb is None:
            continue
        if recommended is not None and pick.cost_cny.expected >= recommended.cost_cny.expected:
            continue
        found.append(Alternative(precision=precision, quote=pick, memory_needed_gb=memory_needed_gb))
    return found
