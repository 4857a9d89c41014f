"""Communication-aware scaling over HTTP: the cross-node factor follows the offer's fabric and
``workload.communication``; a heavy job across Ethernet nodes is slower than one machine, and says so.

The clusters (``tests/quote/vendors/clusters.toml``) are two H800 node-hour offers alike in all but their
fabric (8-card nodes, 1–4 nodes). Hand-worked figures, from ``service/quote/model/scaling.py``'s tables at the
default operator factor F = 0.9 (overhead o = 1/0.9 − 1 = 1/9 per doubling of nodes):

- fabric offers' in-machine curve at 8 cards: heavy 2.4–5.5× (expected 3.95), light 4.5–5.5× (5.0);
- cross-node factor f = 1 / (1 + o × c × b): Ethernet heavy (c 3, b 8): 1 / (1 + 24/9) = 3/11 = 0.2727;
  InfiniBand heavy (c 3, b 1): 0.75; InfiniBand light (c 1/3): 27/28 = 0.9643;
- 32 cards on 4 nodes is two doublings past one machine: speed-up = 4 × s(8) × f²:
  Ethernet heavy 4 × 3.95 × 9/121 = 1.18 (against 3.95 on one machine: slower);
  InfiniBand heavy 4 × 3.95 × 0.5625 = 8.89 (2.25× the machine); light 4 × 5 × (27/28)² = 18.6 (3.72×).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Any]
VENDORS = Path(__file__).parent / "vendors" / "clusters.toml"


@pytest.fixture
def vendors_file() -> Path:
    return VENDORS


async def _quotes(client: Client, vendor: str, communication: str, **extra: object) -> dict[int, Any]:
    workload = {"gpu_hours": 800, "communication": communication, **extra}
    body = {"workload": workload, "vendors": [vendor], "card_counts": [8, 32]}
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    return {quote["cards"]: quote for quote in response.json()["quotes"]}


async def test_heavy_job_over_ethernet_is_not_faster_on_32_cards(client: Client) -> None:
    quotes = await _quotes(client, "sz-eth", "heavy")
    assert quotes[8]["speedup"]["expected"] == 3.95
    assert quotes[32]["speedup"]["expected"] == 1.18  # 4 × 3.95 × (3/11)²
    assert quotes[32]["hours"]["expected"] > quotes[8]["hours"]["expected"]
    assert quotes[32]["hours"]["expected"] == 680.73  # 800 / (4 × 3.95 × 9/121) = 800 / 1.17521
    warnings = " ".join(quotes[32]["warnings"])
    assert "0.27 of the efficiency kept per doubling of nodes" in warnings
    assert "run slower than 8 cards in one machine (1.18× against 3.95×)" in warnings
    assert not any("slower" in warning for warning in quotes[8]["warnings"])


async def test_infiniband_is_faster_on_32_cards_but_less_so_for_a_heavy_job(client: Client) -> None:
    heavy = await _quotes(client, "sz-ib", "heavy")
    light = await _quotes(client, "sz-ib", "light")
    assert heavy[32]["speedup"]["expected"] == 8.89  # 4 × 3.95 × 0.75²
    assert light[32]["speedup"]["expected"] == 18.6  # 4 × 5 × (27/28)²
    heavy_gain = heavy[32]["speedup"]["expected"] / heavy[8]["speedup"]["expected"]
    light_gain = light[32]["speedup"]["expected"] / light[8]["speedup"]["expected"]
    assert 1 < heavy_gain < light_gain
    assert heavy_gain == pytest.approx(2.25, abs=0.01)
    assert light_gain == pytest.approx(3.72, abs=0.01)


async def test_the_callers_cross_node_factor_replaces_the_derived_one(client: Client) -> None:
    quotes = await _quotes(client, "sz-eth", "heavy", cross_node_factor=1.0)
    assert quotes[32]["speedup"]["expected"] == 15.8  # 4 × 3.95 × 1²
    assert any("your measured cross-node factor" in warning for warning in quotes[32]["warnings"])


async def test_measured_points_win_over_the_fabric(client: Client) -> None:
    workload = {"gpu_hours": 800, "communication": "heavy"}
    body = {
        "workload": workload,
        "vendors": ["sz-eth"],
        "card_counts": [32],
        "scaling": {"8": [6.0, 6.0], "32": [20.0, 22.0]},
    }
    (quote,) = (await client.post("/quote", json=body)).json()["quotes"]
    assert quote["speedup"] == {"low": 20.0, "expected": 21.0, "high": 22.0}


async def test_heavy_job_one_machine_holds_says_single_machine_in_the_summary(client: Client) -> None:
    # 14.7B QLoRA at 0.6 bytes per parameter is 8.82 GB: one H800 holds it.
    workload = {"gpu_hours": 100, "communication": "heavy", "model_params_b": 14.7, "task": "qlora"}
    body = {"workload": workload, "card_counts": [8, 16]}
    response = (await client.post("/quote", json=body)).json()
    assert response["warnings"][0].startswith("a communication-heavy job that one machine holds (8.82 GB)")
    assert "safer on a single machine" in response["summary"]
    zh = (await client.post("/quote", json={**body, "lang": "zh"})).json()
    assert "单机更稳" in zh["summary"]


async def test_cross_node_factor_out_of_range_is_a_named_422(client: Client) -> None:
    body = {"workload": {"gpu_hours": 10, "cross_node_factor": 1.5}}
    response = await client.post("/quote", json=body)
    assert response.status_code == 422
    assert "workload.cross_node_factor" in response.text
