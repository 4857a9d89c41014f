"""``gpuquote mcp`` answers every line it reads: JSON-RPC errors for lines that are not messages, a
refusal that says to initialize first, and ``list_offers`` by ``GET /offers``'s parameter names.

Driven the way a client that pipes its lines in does (``... | gpuquote mcp``), over a catalog of the
tests' own (``tests.api.listing``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.api.listing import OLD_OFFERS, write_listing_catalog
from tests.servers import GPUQUOTE

pytestmark = pytest.mark.slow

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"},
    },
}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _run(lines: list[str], vendors_file: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [GPUQUOTE, "mcp"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "GPUQUOTE_REDIS_URL": "",
            "GPUQUOTE_REFRESH_INTERVAL_S": "0",
            "GPUQUOTE_VENDORS_FILE": str(vendors_file),
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_lines_that_are_not_messages_get_json_rpc_errors_and_early_calls_say_initialize(
    tmp_path: Path,
) -> None:
    secret_looking = '{"api_key": "sk-not-for-echo"'  # cut short: not JSON, and never echoed back
    answers = _run(
        [
            secret_looking,
            "",  # a blank line is no message: no answer
            json.dumps({"jsonrpc": "2.0", "id": 41, "method": 17}),
            json.dumps([1, 2]),
            json.dumps(_call(42, "vendor_status", {})),
            json.dumps(_INITIALIZE),
            json.dumps(_INITIALIZED),
            json.dumps(_call(43, "vendor_status", {"vendors": ["js-yangzhou-old"]})),
        ],
        write_listing_catalog(tmp_path),
    )

    # The three unreadable lines are answered in order as they are read, before any later line is;
    # the requests' answers may come in any order.
    parse, invalid_with_id, invalid = answers[:3]
    by_id = {answer["id"]: answer for answer in answers[3:]}
    assert sorted(by_id) == [1, 42, 43]
    early, initialized, status = by_id[42], by_id[1], by_id[43]
    assert parse == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not one JSON document"},
    }
    assert "sk-not-for-echo" not in json.dumps(answers)
    assert (invalid_with_id["id"], invalid_with_id["error"]["code"]) == (41, -32600)
    assert (invalid["id"], invalid["error"]["code"]) == (None, -32600)
    assert early["id"] == 42
    assert early["error"]["code"] == -32600
    assert "send `initialize`" in early["error"]["message"]
    assert initialized["id"] == 1 and "result" in initialized
    # The session works once initialized; the old prices are stale there too.
    (vendor,) = status["result"]["structuredContent"]["vendors"]
    assert vendor["vendor"] == "js-yangzhou-old" and vendor["stale"] is True


def test_list_offers_over_stdio_takes_the_routes_names_sorting_and_filters(tmp_path: Path) -> None:
    answers = _run(
        [
            json.dumps(_INITIALIZE),
            json.dumps(_INITIALIZED),
            json.dumps(_call(2, "list_offers", {"gpu": "RTX 4090", "sort": "price", "spot": False})),
            json.dumps(_call(3, "list_offers", {"city": "扬州", "min_cny_per_card_hour": 2})),
            json.dumps(_call(4, "list_offers", {"sort": "fastest"})),
        ],
        write_listing_catalog(tmp_path),
    )
    by_id = {answer["id"]: answer["result"] for answer in answers}

    cheapest_4090s = by_id[2]["structuredContent"]["items"]
    assert [(item["id"], item["cny_per_card_hour"]) for item in cheapest_4090s] == [
        ("js-yangzhou-old:4090", OLD_OFFERS["offers"][0]["pricing"]["price_cny"]),  # type: ignore[index]
        ("js-changzhou-t:4090-week", 2.5),
        ("js-changzhou-t:4090x2", 3.55),
    ]
    assert [item["stale"] for item in cheapest_4090s] == [True, False, False]
    assert [item["id"] for item in by_id[3]["structuredContent"]["items"]] == ["js-yangzhou-old:4090"]
    assert by_id[4]["isError"] is True
    assert by_id[4]["content"][0]["text"].startswith("sort: must be one of -cards, -memory, -price")
