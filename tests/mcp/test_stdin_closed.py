"""A client that writes its requests and closes stdin (``... | gpuquote mcp``) still gets every answer."""

from __future__ import annotations

import json
import os
import subprocess

from tests.servers import GPUQUOTE

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


def _call(request_id: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_requests_written_before_stdin_closes_are_all_answered() -> None:
    requests = [
        _INITIALIZE,
        _INITIALIZED,
        _call(2, "quote", {"workload": {"gpu_hours": 48}}),
        _call(3, "quote", {"workload": {"gpu_hours": 48}, "gpus": ["no-such-gpu"]}),
        _call(4, "vendor_status", {}),
    ]
    done = subprocess.run(
        [GPUQUOTE, "mcp"],
        input="".join(json.dumps(request) + "\n" for request in requests),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GPUQUOTE_REDIS_URL": "", "GPUQUOTE_REFRESH_INTERVAL_S": "0"},
        check=False,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4]
    quoted = answers[2]["result"]
    assert not quoted.get("isError")
    assert "¥" in quoted["content"][0]["text"]
    refused = answers[3]["result"]
    assert refused["isError"] is True  # a bad argument is an answer too, not a lost request
    assert "no-such-gpu" in refused["content"][0]["text"]
    assert "vendors" in answers[4]["result"]["content"][0]["text"]
