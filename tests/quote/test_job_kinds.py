"""Workloads as users bring them: independent runs, serving by throughput, growth, a vendor's lead time and
quantized alternatives, over HTTP (the engine's answers to the issue's hand-computed examples and to cases
of their own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from litestar.testing import AsyncTestClient

from schemas.quote import WorkloadKind
from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.summary.reference import quote_reference

Client = AsyncTestClient[Any]
BOOKED = Path(__file__).parent / "vendors" / "booked.toml"


async def _answer(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _by_offer(answer: dict[str, Any], offer_id: str, cards: int) -> dict[str, Any]:
    return next(q for q in answer["quotes"] if q["offer_id"] == offer_id and q["cards"] == cards)


async def test_batch_images_as_independent_work_are_eight_4090s_for_three_wuxi_days(client: Client) -> None:
    # 556 card-hours on RTX 4090 divide freely: 8 cards finish in 69.5 h; three Wuxi days of 8 cards at
    # ¥108 per card-day are ¥2,592 (as one communicating job it was 3 × H800 for ¥6,270.25).
    body = {
        "workload": {"kind": "independent", "gpu_hours": 556, "reference_gpu": "rtx4090"},
        "deadline_hours": 72,
    }
    answer = await _answer(client, body)
    best = next(q for q in answer["quotes"] if q["id"] == answer["recommended"])
    assert (best["gpu"], best["cards"], best["hours"]["expected"]) == ("rtx4090", 8, 69.5)
    assert best["cost_cny"]["expected"] == 2592.0
    assert best["runs_at_once"] == 8 and best.get("rounds") is None
    assert best["hours"]["low"] == best["hours"]["high"]  # no scaling range: the pieces never talk


async def test_a_sweep_of_200_two_hour_runs_is_25_rounds_on_8_cards(client: Client) -> None:
    body = {
        "workload": {"kind": "independent", "gpu_hours": 400, "runs": 200, "reference_gpu": "rtx4090"},
        "gpus": ["rtx4090"],
        "card_counts": [8],
    }
    answer = await _answer(client, body)
    hourly = _by_offer(answer, "js-wuxi-ref:4090", 8)
    assert (hourly["hours"]["expected"], hourly["cost_cny"]["expected"]) == (50.0, 2000.0)  # 8 × 50 h × ¥5
    assert (hourly["runs_at_once"], hourly["rounds"]) == (8, 25)
    mixed = next(q for q in answer["quotes"] if q["pricing"] == "mixed" and q["cards"] == 8)
    assert mixed["vendor"] == "js-wuxi-ref" and mixed["cost_cny"]["expected"] < 2000.0  # days plus hours
    assert any("25 round(s) of 8 runs at once, 2 h each" in warning for warning in hourly["warnings"])


@pytest.mark.parametrize(("cards", "rounds", "hours"), [(8, 2, 20.0), (12, 1, 10.0), (4, 3, 30.0)])
def test_runs_finish_in_whole_rounds(cards: int, rounds: int, hours: float) -> None:
    # 10 runs of 10 h each on one card (100 card-hours): k at once finish in ⌈10 / k⌉ rounds.
    body = {
        "workload": {"kind": "independent", "gpu_hours": 100, "runs": 10, "reference_gpu": "rtx4090"},
        "vendors": ["js-wuxi-ref"],
        "pricing": ["card_hour"],
        "card_counts": [cards],
    }
    quote = next(q for q in quote_reference(body).quotes if q.cards == cards)
    assert (quote.rounds, quote.hours.expected) == (rounds, hours)
    # 12 cards are two machines of the 8-card offer: the runs are placed over both.
    assert quote.nodes == (2 if cards > 8 else 1)


def test_a_run_that_needs_several_cards_takes_them_whole() -> None:
    # A 7B full fine-tune needs 6 × 24 GB: each run takes 8 cards (a power of two), so 16 cards hold 2 runs.
    body = {
        "workload": {
            "kind": "independent",
            "gpu_hours": 96,
            "runs": 4,
            "model": "qwen2.5-7b",
            "task": "full_finetune",
        },
        "vendors": ["js-wuxi-ref"],
        "pricing": ["card_hour"],
        "gpus": ["rtx4090"],
        "card_counts": [16],
    }
    quote = quote_reference(body).quotes[0]
    assert (quote.runs_at_once, quote.rounds, quote.nodes) == (2, 2, 2)


async def test_serving_by_throughput_sizes_the_replicas_per_gpu_model(client: Client) -> None:
    # Llama 3.1 70B at int8 (70.6 GB of weights, 84.7 GB with the runtime): a replica is 4 × RTX 4090
    # (4.03 TB/s) or 2 × A100 80G (4.08 TB/s); at 8 requests at once and 0.7 of the bandwidth each serves
    # about 320 tokens/s, so 3,000 tokens/s take 10 replicas: 40 cards, or 20.
    workload = {"kind": "serving", "hours": 720, "model": "llama-3.1-70b", "precision": "int8"}
    answer = await _answer(client, {"workload": {**workload, "target_tokens_per_s": 3000}})
    rtx = _by_offer(answer, "js-wuxi-ref:4090", 40)
    assert (rtx["replicas"], rtx["nodes"]) == (10, 5)
    assert rtx["tokens_per_s"]["expected"] == pytest.approx(3198, abs=1)
    assert any("under the 3,000 target" in warning for warning in rtx["warnings"])  # the low end is short
    a100 = _by_offer(answer, "js-nanjing-ref:a100-80g", 20)
    assert a100["replicas"] == 10
    # A measured replica replaces the estimate: 1,000 tokens/s each, 3 replicas.
    measured = await _answer(
        client, {"workload": {**workload, "target_tokens_per_s": 3000, "replica_tokens_per_s": 1000}}
    )
    assert {q["replicas"] for q in measured["quotes"]} == {3}


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        (
            {
                "kind": "serving",
                "hours": 10,
                "model": "qwen2.5-7b",
                "replicas": 2,
                "target_tokens_per_s": 100,
            },
            "workload.replicas",
        ),
        ({"kind": "serving", "hours": 10, "target_tokens_per_s": 100}, "workload.target_tokens_per_s"),
        ({"kind": "serving", "hours": 10, "concurrent_requests": 4}, "workload.concurrent_requests"),
        ({"gpu_hours": 10, "runs": 4}, "workload.runs"),
        ({"gpu_hours": 10, "target_tokens_per_s": 100}, "workload.target_tokens_per_s"),
        ({"kind": "serving", "hours": 10, "runs": 2}, "workload.runs"),
        ({"gpu_hours": 10, "growth_factor": 1}, "workload.growth_factor"),
    ],
)
async def test_a_workload_mistake_is_a_422_naming_the_field(
    client: Client, workload: dict[str, Any], field: str
) -> None:
    response = await client.post("/quote", json={"workload": workload})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field


async def test_growth_says_whether_the_offer_carries_the_grown_job(client: Client) -> None:
    body = {
        "workload": {"gpu_hours": 200, "reference_gpu": "rtx4090", "growth_factor": 2},
        "card_counts": [8, 16],
    }
    answer = await _answer(client, body)
    machine = _by_offer(answer, "js-wuxi-ref:4090", 8)
    assert machine["growth"] == {
        "factor": 2.0,
        "cards": 16,
        "fits": False,
        "why": "the grown job needs 16 cards; this offer supplies at most 8",
    }
    cluster = _by_offer(answer, "sz-cluster-ref:4090-roce-node", 16)
    assert cluster["growth"]["fits"] is True and cluster["growth"]["cards"] == 32
    assert cluster["growth"]["cost_cny"] > cluster["cost_cny"]["expected"]
    assert any("a single machine must be replaced" in warning for warning in machine["warnings"])


async def test_a_lead_time_counts_against_the_deadline() -> None:
    app = create_app(services=build_services(Settings(vendors_file=BOOKED), store=MemoryPriceStore()))
    async with AsyncTestClient(app) as client:
        loose = await _answer(
            client, {"workload": {"gpu_hours": 80}, "card_counts": [8], "deadline_hours": 48}
        )
        tight = await _answer(
            client, {"workload": {"gpu_hours": 80}, "card_counts": [8], "deadline_hours": 30}
        )
    # 80 h on 8 cards at 5× is 16 h: the booked machines (cheaper) start 24 h after booking, ending at 40 h.
    booked = _by_offer(loose, "sz-booked:4090x8", 8)
    assert loose["recommended"] == booked["id"]
    assert booked["lead_time_h"] == 24.0
    assert any("ready 24 h after booking" in warning for warning in booked["warnings"])
    # With 30 h to spare, 24 + 16 = 40 h is past it: only the on-demand cards qualify.
    assert [q["offer_id"] for q in tight["quotes"]] == ["sz-now:4090"]
    assert tight["excluded"]["deadline"] == 1


async def test_a_budget_memory_blocks_names_the_quantized_option(client: Client) -> None:
    # Serving Qwen2.5-32B for 200 h at bf16 needs 78 GB: 4 × RTX 4090 for ¥3,616 at least, past ¥1,100;
    # at int4 19.5 GB fit one card: 8 Wuxi days plus 8 h, ¥904.
    body = {"workload": {"kind": "serving", "hours": 200, "model": "qwen2.5-32b"}, "budget_cny": 1100}
    answer = await _answer(client, body)
    assert answer["quotes"] == []
    (alternative,) = answer["alternatives"]
    assert alternative["precision"] == "int4" and alternative["memory_needed_gb"] == 19.5
    assert (alternative["quote"]["cards"], alternative["quote"]["cost_cny"]["expected"]) == (1, 904.0)
    assert "With int4 weights" in answer["summary"] and "¥904.00" in answer["summary"]


def test_a_cheaper_quantized_option_is_named_beside_a_multi_card_recommendation() -> None:
    # A 72B LoRA at bf16 needs 174.5 GB (3 × 80 GB); its int4 base (0.4 + 0.5 bytes): 65.4 GB, one card.
    answer = quote_reference({"workload": {"gpu_hours": 48, "model": "qwen2.5-72b", "task": "lora"}})
    assert answer.recommended is not None
    recommended = next(q for q in answer.quotes if q.id == answer.recommended)
    assert answer.alternatives and all(
        alternative.quote.cost_cny.expected < recommended.cost_cny.expected
        for alternative in answer.alternatives
    )
    assert "check the model's quality" in answer.summary


def test_no_alternative_when_the_model_fits_one_card() -> None:
    answer = quote_reference({"workload": {"gpu_hours": 48, "model": "qwen2.5-7b", "task": "inference"}})
    assert answer.alternatives == []


# A request of each workload kind with only what the kind needs: every risk, spot and limit input left
# to the kind's defaults.
_LEAST_OF_EACH_KIND: dict[str, dict[str, Any]] = {
    "batch": {"workload": {"gpu_hours": 10}},
    "independent": {"workload": {"kind": "independent", "gpu_hours": 10, "runs": 2}},
    "serving": {"workload": {"kind": "serving", "hours": 10, "model": "qwen2.5-7b"}},
}


@pytest.mark.parametrize("deadline", [None, 30.0])
async def test_every_workload_kind_answers_on_its_defaults(client: Client, deadline: float | None) -> None:
    assert set(_LEAST_OF_EACH_KIND) == set(get_args(WorkloadKind))  # a new kind adds its request here
    for body in _LEAST_OF_EACH_KIND.values():
        answer = await _answer(client, body if deadline is None else {**body, "deadline_hours": deadline})
        assert answer["quotes"] and answer["summary"]
