"""The response states what the model needs, and a fit with little memory left for activations is warned."""

from __future__ import annotations

from typing import Any

from litestar.testing import AsyncTestClient

from schemas.offer import CardHourPricing
from service.app import create_app
from service.quote import build_quote
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.quote.factories import offer, options, request, snapshot
from tests.summary.reference import quote_reference

LORA_72B = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "model_params_b": 72.7, "task": "lora"}}
# 72.7B × 2.4 bytes (bf16 base + adapters and activations) = 174.48 GB. At ≤ 90 % use an 80 GB card holds
# 72 GB: ceil(174.48 / 72) = 3 cards; a 24 GB card holds 21.6 GB: ceil(174.48 / 21.6) = 9 cards.
EXPECTED_MEMORY = {"needed_gb": 174.48, "min_cards": {"a100-80g": 3, "h800": 3, "rtx4090": 9}}


def test_a_72b_lora_states_the_memory_and_the_fewest_cards() -> None:
    memory = quote_reference(LORA_72B).memory
    assert memory is not None
    assert (memory.needed_gb, memory.min_cards) == (174.48, EXPECTED_MEMORY["min_cards"])
    assert quote_reference({"workload": {"gpu_hours": 48}}).memory is None  # no model given


async def test_over_http_the_memory_is_in_the_response() -> None:
    app = create_app(services=build_services(Settings(), store=MemoryPriceStore()))
    async with AsyncTestClient(app) as client:
        response = await client.post("/quote", json=LORA_72B)
    assert response.status_code == 200, response.text
    assert response.json()["memory"] == EXPECTED_MEMORY


def test_a_fit_at_the_edge_of_memory_is_warned() -> None:
    a100 = offer("js-a", "a100", gpu="a100-80g", pricing=CardHourPricing(cny_per_card_hour=20.0))
    # 30B inference: 30 × 2.4 = 72 GB, exactly 90 % of one 80 GB card: 10 % left for activations.
    tight = build_quote(
        snapshot([a100]),
        request(10, model_params_b=30, task="inference", card_counts=[1, 2]),
        options=options(),
    )
    by_cards: dict[int, Any] = {quote.cards: quote for quote in tight.quotes}
    assert any("takes 90 % of the cards' memory" in warning for warning in by_cards[1].warnings)
    assert not any("cards' memory" in warning for warning in by_cards[2].warnings)  # 45 %
