"""The request and timing faults of ``bench/faults.py``: hostile bodies, Redis frozen, 256 callers, slow
and half-sent bodies, a paginated feed at its cap, a vendor slowing start-up, Redis down, stderr."""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
from fault_stack import Replica, Row, Stack, catalog, expected_catalog, lost, probe, refresh


def _hostile_bodies(count: int) -> list[bytes]:
    huge = b"9" * 5000
    fixed = [
        b'{"workload": {"gpu_hours": ' + huge + b"}}",
        b'{"workload": {"gpu_hours": 48}, "limit": 1, "limit": ' + huge + b"}",
        b'{"workload": {"gpu_hours": 48}, "x": [' + huge + b"]}",
        b'{"workload": {"gpu_hours": 48, "cross_node_factor": 5e-324}, "card_counts": [16]}',
        b'{"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 1e-300}}}',
        b'{"workload": {"gpu_hours": 1e308}}',
        b'{"workload": {"gpu_hours": 1}, "deadline_hours": 5e-324}',
        b'{"workload": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"workload": {"gpu_hours": 1}, "\\u006cimit": 1, "limit": 2}',
        b"", b"{", b"null", b"[]", b'"x"', b"\xff\xfe",
    ]  # fmt: skip
    rng = random.Random(21)
    seed = json.dumps(
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "card_counts": [1, 8]}
    ).encode()
    for _ in range(count):
        body = bytearray(seed)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(body))
            body[at : at + 1] = rng.choice(
                [b"9" * 400, b"1e308", b"-", b"[", b"{", b'"', b"\\u0000", b"5e-324", b""]
            )
        fixed.append(bytes(body))
    return fixed


def hostile_bodies(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        statuses: dict[int, int] = {}
        errors = leaks = 0
        with httpx.Client() as client:
            for body in _hostile_bodies(400):
                response = client.post(
                    replica.url + "/quote", content=body, headers={"Content-Type": "application/json"}
                )
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                errors += response.status_code >= 500
                leaks += sum(response.text.count(marker) for marker in stack.markers())
        note = "statuses " + ", ".join(f"{status}×{n}" for status, n in sorted(statuses.items()))
        return Row("", sum(statuses.values()), errors, leaks + stack.leaks_in_logs(), 0, note)


def frozen_history(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        stack.redis.freeze()
        slowest, tried, errors = 0.0, 0, 0
        try:
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                started = time.monotonic()
                response = httpx.get(replica.url + "/offers/a:a-1/history", timeout=30)
                slowest = max(slowest, time.monotonic() - started)
                tried += 1
                errors += response.status_code not in {200, 503}
        finally:
            stack.redis.thaw()
        return Row(
            "",
            tried,
            errors + int(slowest > 1.0),
            0,
            0,
            f"slowest {slowest:.2f} s (deadline 0.5 s), 503 expected",
        )


def _metric(text: str, name: str) -> float:
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


_WRK_QUOTES = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, "/quote", nil, string.format('{"workload": {"gpu_hours": %.3f}}', 1 + counter / 1000))
end
"""


def _load(folder: Path, replica: Replica, seconds: float, markers: list[str]) -> tuple[int, int, int]:
    """(requests, non-2xx, leaks) of 256 concurrent callers sending new quotes: wrk when installed (the
    load a Python client cannot make), else the probe."""
    if shutil.which("wrk") is None:
        tally = asyncio.run(
            probe([replica], seconds, markers, concurrency=256, routes=[("POST", "/quote", None)])
        )
        return tally.tried, tally.unexpected, tally.leaks
    script = folder / "quotes.lua"
    script.write_text(_WRK_QUOTES, encoding="utf-8")
    command = ["wrk", "-t2", "-c256", f"-d{max(int(seconds), 5)}s", "-s", str(script), replica.url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    requests = re.search(r"(\d+) requests in", output)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return int(requests[1]) if requests else 0, int(non_2xx[1]) if non_2xx else 0, 0


def busy_healthy_redis(folder: Path, seconds: float) -> Row:
    """256 concurrent callers, Redis healthy: no store error, no in-process rate counts, ready throughout."""
    with Stack(folder) as stack:
        replica = stack.start_replica()
        before = httpx.get(replica.url + "/metrics").text
        readiness: list[str] = []
        warned: list[int] = []

        def watch() -> None:  # what a probe and a caller see meanwhile
            with httpx.Client(timeout=10) as client:
                for step in range(30):
                    readiness.append(client.get(replica.url + "/ready").json()["status"])
                    body = {"workload": {"gpu_hours": 3 + step / 100}, "card_counts": [1]}
                    warnings = client.post(replica.url + "/quote", json=body).json().get("warnings", [])
                    warned.append(sum("unreachable" in warning for warning in warnings))
                    time.sleep(max(seconds, 5) / 40)

        watcher = threading.Thread(target=watch)
        watcher.start()
        tried, non_2xx, leaks = _load(folder, replica, seconds, stack.markers())
        watcher.join()
        after = httpx.get(replica.url + "/metrics").text
        store_errors = _metric(after, "gpuquote_store_errors_total") - _metric(
            before, "gpuquote_store_errors_total"
        )
        local = _metric(after, "gpuquote_rate_limit_local_total") - _metric(
            before, "gpuquote_rate_limit_local_total"
        )
        degraded = sum(status != "ready" for status in readiness)
        note = (
            f"store errors +{store_errors:.0f}, local rate counts +{local:.0f}, "
            f"/ready not ready {degraded}/{len(readiness)}, quotes warning unreachable {sum(warned)}"
        )
        anomalies = int(store_errors + local) + degraded + sum(warned)
        return Row("", tried + 60, non_2xx + anomalies, leaks, 0, note)


def _half_sent(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        b"POST /quote HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n{"
    )
    return sock


def half_sent_bodies(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        sockets = [_half_sent(replica.url) for _ in range(10)]
        held = 0
        for sock in sockets:
            sock.settimeout(15)
            try:
                held += not sock.recv(64).startswith(b"HTTP/1.1 408")
            except TimeoutError:
                held += 1
            sock.close()
        more = [_half_sent(replica.url) for _ in range(10)]
        time.sleep(0.2)
        stop_s = replica.stop(timeout_s=60)
        for sock in more:
            sock.close()
        note = f"sockets not cut off within 15 s: {held}; SIGTERM with 10 half-sent bodies: exit in {stop_s:.1f} s"
        return Row("", 20, held + int(stop_s > 30), 0, 0, note)


def paginated_feed(folder: Path, seconds: float) -> Row:
    """100 pages, each 60 % of FEED_MAX_BYTES (1 MiB here): the feed fails at its second page."""
    cap = 2**20
    with Stack(folder, env={"GPUQUOTE_FEED_MAX_BYTES": str(cap)}) as stack:
        region = {"region_name": "r", "inventory": 1, "price": 550}
        regions = [region] * (int(0.6 * cap) // len(json.dumps(region)))
        for page in range(1, 101):
            gpus = [{"gpu_name": "RTX 4090", "gpu_count": 8, "regions": regions}]
            stack.vendor.serve(
                f"/p?page={page}", json.dumps({"data": gpus, "next": f"/p?page={page + 1}"}).encode()
            )
        stack.vendors_file.write_text(
            stack.vendors_file.read_text()
            + f'[[vendors]]\nid = "pages"\nname = "pages"\nregion = "jiangsu"\n'
            f'city = "suzhou"\nformat = "per_second_json"\nurl = "{stack.vendor.url("/p?page=1")}"\nretries = 0\n',
            encoding="utf-8",
        )
        replica = stack.start_replica()
        report = refresh(replica)
        (pages,) = [v for v in report["vendors"] if v["vendor"] == "pages"]
        fetched = sum(stack.vendor.hits(f"/p?page={page}") for page in range(1, 101))
        note = f"pages fetched per refresh: {fetched / 2:.0f}; vendor failed: {not pages['ok']}"
        return Row("", 1, 0, 0, lost(catalog(replica), expected_catalog()), note)


def slow_vendor_startup(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        stack.vendor.serve("/slow.json", status=429, headers={"Retry-After": "99999"})
        stack.vendors_file = stack.write_vendors(["a", "slow"], retries=2)
        started = time.monotonic()
        replica = stack.start_replica(wait_s=90)
        healthy_s = time.monotonic() - started
        served = catalog(replica)
        note = f"first /health 200 after {healthy_s:.1f} s (startup probe: 60 s)"
        return Row("", 1, int(healthy_s > 60), 0, lost(served, expected_catalog(["a"])), note)


def redis_down_no_snapshot(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        stack.redis.stop()
        replica = stack.start_replica()
        tally = asyncio.run(probe([replica], seconds, stack.markers(), expected_503=True))
        note = f"503 by design (no snapshot): {tally.statuses[503]}"
        return Row("", tally.tried, tally.unexpected, tally.leaks + stack.leaks_in_logs(), 0, note)


def stderr_json(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        bodies = _hostile_bodies(50)
        with httpx.Client() as client:
            for body in bodies:
                client.post(
                    replica.url + "/quote", content=body, headers={"Content-Type": "application/json"}
                )
            heads = [client.head(replica.url + path).status_code for path in ("/", "/health")]
        bad = stack.non_json_log_lines()
        return Row(
            "",
            len(bodies) + 2,
            sum(s != 200 for s in heads),
            0,
            0,
            f"non-JSON stderr lines: {bad}; HEAD: {heads}",
        )
