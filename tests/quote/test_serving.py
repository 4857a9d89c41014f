"""Serving workloads placed replica by replica, over HTTP with the reference offers (``vendors.toml``).

A replica takes its memory minimum rounded up to a power of two within a machine; each machine holds
⌊machine cards / cards per replica⌋ whole replicas and as many machines of one offer are rented as
needed; a cluster (nodes rented two at a time) only when one replica needs more than a machine.

Memory (the rule in ``_memory``): inference at int8 takes 1.2 GB per billion parameters, bf16 2.4; a card
is used to 90 %, so an RTX 4090 holds 21.6 GB and an 80 GB card 72 GB.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Any]

WUXI = "js-wuxi-ref"


def workload(replicas: int, **fields: Any) -> dict[str, Any]:
    return {"kind": "serving", "hours": 720, "precision": "int8", "replicas": replicas, **fields}


async def quote(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def costs(answer: dict[str, Any]) -> dict[str, float]:
    return {item["offer_id"]: item["cost_cny"]["expected"] for item in answer["quotes"]}


async def test_three_replicas_rent_separate_machines_within_each_offers_limits(client: Client) -> None:
    # 70B at int8: 70 × 1.2 = 84 GB; 84 / 21.6 = 3.89 → 4 RTX 4090 per replica, 12 cards for 3.
    # Wuxi, 720 h (30 days, one month):
    #   hourly ¥5/card-hour: 12 × 720 × 5 = ¥43,200 (an 8-card machine with 2 replicas, one with 1);
    #   the day package sells at most 8 per-card units: 12 is past it;
    #   the 8-card machine month sells one machine: 3 replicas need 2.
    body = {"workload": workload(3, model_params_b=70), "gpus": ["rtx4090"]}
    answer = await quote(client, body)
    wuxi = {offer: cost for offer, cost in costs(answer).items() if offer.startswith(WUXI)}
    assert wuxi == {f"{WUXI}:4090": 43_200.0}
    assert all(item["cards"] == 12 for item in answer["quotes"])
    hourly = next(item for item in answer["quotes"] if item["offer_id"] == f"{WUXI}:4090")
    assert (hourly["nodes"], hourly["replicas"]) == (2, 3)  # two machines: 2 replicas and 1
    assert answer["cheapest"] == hourly["id"]
    # The Shenzhen RoCE cluster (whole nodes, two at least, ¥92,160 before) is not used: a replica fits
    # one machine. The packages that sell too few units are left out for capacity.
    assert not any(offer.startswith("sz-cluster") for offer in costs(answer))
    assert answer["excluded"]["capacity"] > 0


async def test_cards_per_replica_are_a_power_of_two(client: Client) -> None:
    # qwen2.5-72b at int8: 72.7 × 1.2 = 87.24 GB; 87.24 / 21.6 = 4.04 → 5 cards, run as 8 (tensor
    # parallel 8, never 5): 2 replicas take 16 cards. Wuxi hourly 16 × 720 × ¥5 = ¥57,600 on two machines;
    # the 8-card machine month sells one machine, one replica's worth.
    body = {"workload": workload(2, model="qwen2.5-72b"), "gpus": ["rtx4090"], "vendors": [WUXI]}
    answer = await quote(client, body)
    assert {item["cards"] for item in answer["quotes"]} == {16}
    assert costs(answer) == {f"{WUXI}:4090": 57_600.0}
    one = await quote(client, {**body, "workload": workload(1, model="qwen2.5-72b")})
    assert costs(one)[f"{WUXI}:4090x8-month"] == 24_900.0


async def test_a_replica_larger_than_a_machine_takes_whole_cluster_nodes(client: Client) -> None:
    # Llama 3.1 405B at bf16: 405 × 2.4 = 972 GB; 972 / 72 = 13.5 → 14 H800, more than an 8-card machine:
    # whole nodes, 16 cards per replica. The Shenzhen InfiniBand cluster bills ¥300 + ¥24 network + ¥6
    # storage = ¥330 per node-hour, two nodes a replica: 2 replicas × 2 nodes × 330 × 10 h = ¥13,200.
    serving = workload(2, model="llama3.1-405b", precision="bf16", hours=10)
    answer = await quote(client, {"workload": serving, "gpus": ["h800"]})
    assert [(item["offer_id"], item["cards"]) for item in answer["quotes"]] == [
        ("sz-cluster-ref:h800-ib-node", 32)
    ]
    assert answer["quotes"][0]["cost_cny"]["expected"] == 13_200.0


async def test_card_counts_are_total_cards_of_whole_replicas(client: Client) -> None:
    # 4 RTX 4090 per replica (84 GB, above). 16 cards: 4 replicas. Wuxi hourly 16 × 720 × 5 = ¥57,600
    # (the day package sells 8 cards, the machine month one machine); 8 cards: 2 replicas, hourly
    # 8 × 720 × 5 = ¥28,800, day packages 8 × 30 × 108 = ¥25,920, one machine month ¥24,900.
    body = {"workload": workload(2, model_params_b=70), "gpus": ["rtx4090"], "vendors": [WUXI]}
    answer = await quote(client, {**body, "card_counts": [16]})
    assert costs(answer) == {f"{WUXI}:4090": 57_600.0}
    assert {(item["cards"], item["replicas"]) for item in answer["quotes"]} == {(16, 4)}
    eight = await quote(client, {**body, "card_counts": [8]})
    assert costs(eight) == {
        f"{WUXI}:4090": 28_800.0,
        f"{WUXI}:4090-day": 25_920.0,
        f"{WUXI}:4090x8-month": 24_900.0,
    }


@pytest.mark.parametrize(
    ("counts", "reason"),
    [
        ([4], "2 replicas of 4 cards need 8 cards; 4 is too few"),
        ([10], "10 cards are not whole replicas of 4 cards"),
    ],
)
async def test_card_counts_that_hold_no_whole_replicas_are_a_422(
    client: Client, counts: list[int], reason: str
) -> None:
    body = {"workload": workload(2, model_params_b=70), "gpus": ["rtx4090"], "card_counts": counts}
    response = await client.post("/quote", json=body)
    assert response.status_code == 422, response.text
    assert "card_counts" in response.text
    assert reason in response.text


@pytest.mark.parametrize(
    ("lang", "same_hours"), [("en", "stays up the same 720 h"), ("zh", "同样的 720 小时")]
)
async def test_the_summary_says_every_option_runs_the_same_hours(
    client: Client, lang: str, same_hours: str
) -> None:
    body = {"workload": workload(3, model_params_b=70), "gpus": ["rtx4090"], "lang": lang}
    summary = (await quote(client, body))["summary"]
    assert same_hours in summary
    assert "fastest" not in summary
    assert "最快" not in summary
    assert "speed-ups are estimates" not in summary


async def test_serving_without_a_model_does_not_ask_for_a_task(client: Client) -> None:
    body = {
        "workload": {"kind": "serving", "hours": 24, "replicas": 3},
        "vendors": [WUXI],
        "gpus": ["rtx4090"],
    }
    answer = await quote(client, body)
    assert (
        "memory fit not checked: give the model's size and, for a batch job, the task" in answer["warnings"]
    )
    assert "give both" not in " ".join(answer["warnings"])
    # One card per replica: Wuxi hourly 3 × 24 × ¥5 = ¥360.
    assert costs(answer)[f"{WUXI}:4090"] == 360.0
