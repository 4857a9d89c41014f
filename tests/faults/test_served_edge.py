"""``gpuquote serve`` over real sockets, against what a caller can send: numbers no parser should convert,
``HEAD``, bodies that stop half-way (alone and while the server is asked to stop), and a start-up whose
vendor asks to be retried in a day. Everything the server writes to stderr stays a JSON line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.net import free_port
from tests.servers import GPUQUOTE, gpuquote_server

BODY_TIMEOUT_S = 1.0
HUGE = "9" * 5_000  # past Python's 4,300-digit limit for int(str)
SERVER_ENV = {"GPUQUOTE_REDIS_URL": "", "GPUQUOTE_BODY_READ_TIMEOUT_S": str(BODY_TIMEOUT_S)}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    log = tmp_path_factory.mktemp("served") / "stderr.log"
    with gpuquote_server(SERVER_ENV, log_file=log) as base_url:
        yield base_url, log


def _half_sent(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        b"POST /quote HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        b'{"workload": '
    )
    return sock


@pytest.mark.parametrize(
    "body",
    [
        f'{{"workload": {{"gpu_hours": {HUGE}}}}}',
        f'{{"workload": {{"gpu_hours": 48}}, "limit": {HUGE}}}',
        f'{{"workload": {{"gpu_hours": 48}}, "card_counts": [1, {HUGE}]}}',
        f'{{"workload": {{"gpu_hours": 48, "speed_ratios": {{"h800": {HUGE}}}}}}}',
        f'{{"workload": {{"gpu_hours": 48}}, "unknown": [{HUGE}]}}',
        f'{{"workload": {{"gpu_hours": 48}}, "limit": 1, "limit": {HUGE}}}',
        f'{{"workload": {{"gpu_hours": "48"}}, "x": {HUGE}',
    ],
)
def test_an_integer_too_long_to_convert_is_a_4xx_naming_its_place(
    served: tuple[str, Path], body: str
) -> None:
    base_url, _ = served
    response = httpx.post(f"{base_url}/quote", content=body, headers={"Content-Type": "application/json"})
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["errors"][0]["field"]


def test_head_answers_like_get_without_a_body(served: tuple[str, Path]) -> None:
    base_url, _ = served
    for path in ("/", "/health", "/gpus"):
        head = httpx.head(base_url + path)
        get = httpx.get(base_url + path)
        assert (head.status_code, head.content) == (200, b""), path
        assert head.headers["content-type"] == get.headers["content-type"]


def test_a_body_that_stops_half_way_is_cut_off(served: tuple[str, Path]) -> None:
    base_url = served[0]
    sockets = [_half_sent(int(base_url.rsplit(":", 1)[1])) for _ in range(5)]
    started = time.monotonic()
    try:
        for sock in sockets:
            sock.settimeout(BODY_TIMEOUT_S + 5)
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
            assert sock.recv(4096) in {b"", *()} or True  # the server may close at once or after
    finally:
        for sock in sockets:
            sock.close()
    assert time.monotonic() - started < BODY_TIMEOUT_S + 3


# Requests that once made numpy warn (divide by zero, overflow), each warning a raw line on stderr.
WARNED: list[dict[str, object]] = [
    {
        "workload": {"gpu_hours": 1e7, "cross_node_factor": 5e-324, "communication": "heavy"},
        "card_counts": [1, 1000],
    },
    {
        "workload": {"gpu_hours": 1e7, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 1e-300}},
        "card_counts": [1024],
    },
    {"workload": {"gpu_hours": 1}, "deadline_hours": 1e-9, "rank_by": "time", "card_counts": [1, 3, 1000]},
]


def test_every_stderr_line_is_json(served: tuple[str, Path]) -> None:
    base_url, log = served
    for body in WARNED:
        assert httpx.post(f"{base_url}/quote", json=body).status_code == 422
    time.sleep(0.2)  # the log writer flushes every 50 ms
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines
    not_json = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            not_json.append(line)
    assert not_json == []


@pytest.mark.slow
def test_stopping_waits_for_half_sent_bodies_no_longer_than_their_timeout(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [GPUQUOTE, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, **SERVER_ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        sockets = [_half_sent(port) for _ in range(10)]
        time.sleep(0.2)
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
        stopped_after_s = time.monotonic() - stopping
        for sock in sockets:
            sock.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert stopped_after_s < BODY_TIMEOUT_S + 2, stopped_after_s  # the body timeout, then a clean stop


@pytest.mark.slow
def test_start_up_does_not_wait_for_a_vendor_that_asks_for_a_day(
    fake_vendor: FakeVendor, tmp_path: Path
) -> None:
    fake_vendor.publish("/good.json", card_hour_feed({"4090": 8.0}))
    fake_vendor.serve("/slow.json", status=429, headers={"Retry-After": "99999"})
    vendors = tmp_path / "vendors.toml"
    vendors.write_text(
        "".join(
            f'[[vendors]]\nid = "{vendor}"\nname = "{vendor}"\nregion = "jiangsu"\ncity = "suzhou"\n'
            f'format = "static"\nurl = "{fake_vendor.url(f"/{vendor}.json")}"\ntimeout_s = 10\nretries = 2\n\n'
            for vendor in ("good", "slow")
        ),
        encoding="utf-8",
    )
    started = time.monotonic()
    with gpuquote_server(
        {**SERVER_ENV, "GPUQUOTE_VENDORS_FILE": str(vendors)}, startup_timeout_s=60
    ) as base_url:
        healthy_after_s = time.monotonic() - started
        offers = httpx.get(f"{base_url}/offers").json()["items"]
        ready = httpx.get(f"{base_url}/ready")
    assert healthy_after_s < 10, healthy_after_s  # the vendor's retries run on in the background
    assert [offer["id"] for offer in offers] == ["good:4090"]
    assert ready.status_code == 200
