"""A model that does not fit one card is split across cards, and so scales as a communication-heavy job.

Tensor or pipeline parallelism (or ZeRO-3) moves weights or activations between cards every step, whatever
the caller called the job: the cards that hold the model only split across them take the heavy curves and
factors of their fabric (PCIe without peer-to-peer, NVLink, across nodes), the quote says so, and the
caller's own ``communication`` or measured scaling points still win.
"""

from __future__ import annotations

from typing import Any

import pytest

from schemas.quote import Quote
from tests.summary.reference import quote_reference

# 48 h of work on one RTX 4090 (the reference card): a 72.7B full fine-tune needs 1,163.2 GB, 54 cards of
# 24 GB (7 nodes of the reference RoCE cluster) or 17 of 80 GB (3 nodes of the H800 cluster).
FULL_72B: dict[str, Any] = {"gpu_hours": 48, "model": "qwen2.5-72b", "task": "full_finetune"}
SPLIT_NOTE = "is scaled as a communication-heavy job"


def _quote(body: dict[str, Any], offer_id: str, cards: int) -> Quote:
    response = quote_reference(body)
    return next(quote for quote in response.quotes if quote.offer_id == offer_id and quote.cards == cards)


def test_a_72b_full_finetune_on_4090_nodes_scales_as_heavy_and_says_why() -> None:
    quote = _quote({"workload": FULL_72B}, "sz-cluster-ref:4090-roce-node", 56)
    # Heavy over RoCE: 8-card in-machine 2.4–5.5×, 0.75 kept per doubling of nodes: 7.49–17.17×.
    assert (quote.speedup.low, quote.speedup.high) == (7.49, 17.17)
    assert quote.hours.expected == 3.89
    assert quote.cost_cny.expected == 1792.0  # 7 nodes × ¥64 × 4 h
    assert any(SPLIT_NOTE in warning for warning in quote.warnings)


def test_the_h800_cluster_becomes_the_alternative_to_the_4090_nodes() -> None:
    response = quote_reference({"workload": {**FULL_72B, "reference_gpu": "rtx4090"}})
    first, second = response.quotes[0], response.quotes[1]
    assert (first.gpu, first.cards) == ("rtx4090", 56)
    assert (second.gpu, second.cards) == ("h800", 24)
    # Moderate, as a caller who does not know the job splits would have been told: 26× and ¥896.
    moderate = _quote(
        {"workload": {**FULL_72B, "communication": "moderate"}}, "sz-cluster-ref:4090-roce-node", 56
    )
    assert moderate.cost_cny.expected == 896.0
    assert not any(SPLIT_NOTE in warning for warning in moderate.warnings)


@pytest.mark.parametrize(
    ("communication", "low", "high"),
    [(None, 2.4, 4.0), ("moderate", 4.5, 5.5), ("light", 4.5, 5.5)],
)
def test_a_7b_full_finetune_needing_6_cards_scales_as_heavy_over_pcie_unless_told(
    communication: str | None, low: float, high: float
) -> None:
    workload: dict[str, Any] = {"gpu_hours": 48, "model": "qwen2.5-7b", "task": "full_finetune"}
    if communication is not None:
        workload["communication"] = communication
    quote = _quote({"workload": workload, "card_counts": [8]}, "js-wuxi-ref:4090", 8)
    assert (quote.speedup.low, quote.speedup.high) == (low, high)
    assert any(SPLIT_NOTE in warning for warning in quote.warnings) is (communication is None)


def test_measured_scaling_points_win_over_the_split_rule() -> None:
    workload = {"gpu_hours": 48, "model": "qwen2.5-7b", "task": "full_finetune"}
    body = {"workload": workload, "card_counts": [8], "scaling": {"8": [6.0, 7.0]}}
    quote = _quote(body, "js-wuxi-ref:4090", 8)
    assert (quote.speedup.low, quote.speedup.high) == (6.0, 7.0)
    assert not any(SPLIT_NOTE in warning for warning in quote.warnings)


def test_a_model_one_card_holds_keeps_the_default_curve() -> None:
    workload = {"gpu_hours": 48, "model": "qwen2.5-7b", "task": "lora"}  # 18.3 GB: one 4090
    quote = _quote({"workload": workload, "card_counts": [8]}, "js-wuxi-ref:4090", 8)
    assert (quote.speedup.low, quote.speedup.high) == (4.5, 5.5)
    assert not any(SPLIT_NOTE in warning for warning in quote.warnings)


def test_an_nvlink_machine_splitting_the_model_keeps_the_articles_rule() -> None:
    """Heavy on NVLink is the article's rule (NVLink carries a split model well), not the PCIe collapse."""
    workload = {"gpu_hours": 48, "model": "qwen2.5-72b", "task": "lora"}  # 174.5 GB: 3 × 80 GB
    quote = _quote({"workload": workload, "card_counts": [8]}, "js-wuxi-ref:a100-80g", 8)
    assert (quote.speedup.low, quote.speedup.high) == (4.5, 5.5)
    assert any(SPLIT_NOTE in warning for warning in quote.warnings)
