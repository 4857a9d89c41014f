"""``gpuquote serve`` logs JSON lines: one per event, each request's lines carrying its id, no credentials."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from service.http.requests import redact_query
from service.logs import (
    JsonFormatter,
    QueueToStderrHandler,
    capture_stray_output,
    direct_handler,
    request_id_var,
)
from tests.adapters.fake_vendor import FakeVendor
from tests.servers import gpuquote_server, write_vendors_file

ADMIN_KEY = "log-test-admin-key-0123456789"
SECRETS = ("s3cr3t-api-key", "s3cr3t-access-token", "s3cr3t-key")


def _lines(log_file: Path) -> list[dict[str, Any]]:
    text = log_file.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]  # every line, or the test fails


def _access_line(lines: list[dict[str, Any]], request_id: str) -> dict[str, Any]:
    found = [
        line for line in lines if line["logger"] == "gpuquote.access" and line.get("request_id") == request_id
    ]
    assert len(found) == 1, f"one access line for {request_id}: {found}"
    return found[0]


@pytest.mark.slow
def test_serve_logs_json_lines_with_request_ids_and_no_credentials(
    tmp_path: Path, fake_vendor: FakeVendor
) -> None:
    # The vendor's feed is missing, so a refresh fails and logs a warning while handling the request.
    vendors_file = write_vendors_file(tmp_path, fake_vendor.base_url, ["js-log-test"], timeout_s=5)
    env = {"GPUQUOTE_VENDORS_FILE": str(vendors_file), "GPUQUOTE_ADMIN_API_KEYS": ADMIN_KEY}
    log_file = tmp_path / "serve.log"
    with gpuquote_server(env, log_file=log_file) as base_url:
        health = httpx.get(base_url + "/health", headers={"X-Request-ID": "trace-health.1"})
        offers = httpx.get(
            base_url + "/offers",
            params={"gpu": "rtx4090", "api_key": SECRETS[0], "access_token": SECRETS[1], "key": SECRETS[2]},
        )
        refresh = httpx.post(
            base_url + "/admin/refresh",
            headers={"X-API-Key": ADMIN_KEY, "X-Request-ID": "trace-refresh-1"},
            timeout=30,
        )
    assert health.headers["X-Request-ID"] == "trace-health.1"
    assert refresh.status_code == 200
    assert refresh.json()["vendors"][0]["ok"] is False

    lines = _lines(log_file)
    raw = log_file.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in raw

    health_line = _access_line(lines, "trace-health.1")
    assert (health_line["method"], health_line["path"], health_line["status"]) == ("GET", "/health", 200)
    assert health_line["duration_ms"] >= 0

    offers_line = _access_line(lines, offers.headers["X-Request-ID"])
    # /offers refuses the unknown parameters (a 400 naming them); the access line still redacts them.
    assert offers_line["status"] == offers.status_code == 400
    assert offers_line["path"] == ("/offers?gpu=rtx4090&api_key=REDACTED&access_token=REDACTED&key=REDACTED")

    refresh_lines = [line for line in lines if line.get("request_id") == "trace-refresh-1"]
    assert {line["logger"] for line in refresh_lines} >= {"gpuquote.refresh", "gpuquote.access"}
    warning = next(line for line in refresh_lines if line["logger"] == "gpuquote.refresh")
    assert warning["level"] == "warning"
    assert "js-log-test" in warning["message"]
    assert _access_line(lines, "trace-refresh-1")["status"] == 200

    # Lines no request caused (the server's start-up, shutdown) carry no id; its own access log is off.
    assert any(line["logger"].startswith("_granian") and "request_id" not in line for line in lines)
    assert not any(line["logger"] in {"granian.access", "uvicorn.access"} for line in lines)


def test_a_traceback_is_a_field_of_its_line() -> None:
    try:
        raise ValueError("feed said no")
    except ValueError:
        record = logging.LogRecord(
            "gpuquote.refresh", logging.ERROR, __file__, 1, "failed", None, sys.exc_info()
        )
    token = request_id_var.set("req-7")
    try:
        line = JsonFormatter().format(record)
    finally:
        request_id_var.reset(token)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["request_id"] == "req-7"
    assert entry["error"].startswith("Traceback (most recent call last):")
    assert entry["error"].endswith("ValueError: feed said no")


def test_extra_fields_become_fields() -> None:
    record = logging.LogRecord("gpuquote.access", logging.INFO, __file__, 1, "GET / 200", None, None)
    record.status = 200
    entry = json.loads(JsonFormatter().format(record))
    assert entry["status"] == 200
    assert "request_id" not in entry


@pytest.mark.parametrize(
    ("query", "logged"),
    [
        (b"", ""),
        (b"gpu=rtx4090&limit=10", "gpu=rtx4090&limit=10"),
        (b"api_key=abc&gpu=a100", "api_key=REDACTED&gpu=a100"),
        (b"access_token=abc", "access_token=REDACTED"),
        (b"key=abc&Key=def", "key=REDACTED&Key=REDACTED"),
        (
            b"X-Amz-Signature=abc&password=p&client_secret=s",
            "X-Amz-Signature=REDACTED&password=REDACTED&client_secret=REDACTED",
        ),
        (b"apikey", "apikey=REDACTED"),
        (b"pwd=a&pass=b&jwt=c&bearer=d", "pwd=REDACTED&pass=REDACTED&jwt=REDACTED&bearer=REDACTED"),
    ],
)
def test_credentials_in_the_query_string_are_redacted(query: bytes, logged: str) -> None:
    assert redact_query(query) == logged


@pytest.fixture
def queue_only() -> Iterator[tuple[QueueToStderrHandler, io.StringIO]]:
    """A logger tree whose only destination is a JSON queue handler writing to a buffer (the served
    configuration; its own tree, since pytest adds capturing handlers to the root during a test)."""
    top = logging.getLogger("direct-log-test")
    buffer = io.StringIO()
    handler = QueueToStderrHandler(buffer)
    top.propagate = False
    top.setLevel(logging.INFO)
    yield handler, buffer
    handler.close()
    top.handlers.clear()


def _only(handler: QueueToStderrHandler) -> None:
    """The test's logger tree writes to ``handler`` only (pytest adds its capturing handlers in the call)."""
    logging.getLogger("direct-log-test").handlers[:] = [handler]


def test_an_access_line_queued_from_its_fields_reads_as_the_record_would(
    queue_only: tuple[QueueToStderrHandler, io.StringIO],
) -> None:
    handler, buffer = queue_only
    _only(handler)
    access = logging.getLogger("direct-log-test.access")
    assert direct_handler(access) is handler
    fields = {"method": "GET", "path": "/offers?gpu=h800", "status": 200, "duration_ms": 0.731}
    token = request_id_var.set("trace-direct-1")
    try:
        handler.emit_info(access.name, "GET /offers?gpu=h800 200", fields)
        record = access.makeRecord(
            access.name, logging.INFO, "", 0, "%s %s %d", ("GET", "/offers?gpu=h800", 200), None, extra=fields
        )
        access.handle(record)
    finally:
        request_id_var.reset(token)
    handler.close()
    direct, recorded = (json.loads(line) for line in buffer.getvalue().splitlines())
    direct.pop("time"), recorded.pop("time")
    assert direct == recorded
    assert list(direct) == list(recorded)  # the same field order
    assert direct["request_id"] == "trace-direct-1"


def test_a_filter_or_a_second_handler_sends_access_lines_through_records(
    queue_only: tuple[QueueToStderrHandler, io.StringIO],
) -> None:
    _only(queue_only[0])
    access = logging.getLogger("direct-log-test.access")
    top = logging.getLogger("direct-log-test")
    top.addFilter(lambda record: True)
    assert direct_handler(access) is None
    top.filters.clear()
    access.addHandler(logging.NullHandler())
    assert direct_handler(access) is None
    access.handlers.clear()
    assert direct_handler(access) is queue_only[0]


def test_warnings_and_stray_exceptions_become_json_lines() -> None:
    stream = io.StringIO()
    handler = QueueToStderrHandler(stream)
    root = logging.getLogger()
    saved = (warnings.showwarning, threading.excepthook, sys.unraisablehook, root.handlers[:], root.level)
    root.handlers[:] = [handler]
    try:
        capture_stray_output()
        with warnings.catch_warnings(), np.errstate(divide="warn"):
            warnings.simplefilter("always")
            np.array([1.0]) / np.array([0.0])
        worker = threading.Thread(target=lambda: 1 / 0, name="doomed")
        worker.start()
        worker.join()
        handler.close()
    finally:
        warnings.showwarning, threading.excepthook, sys.unraisablehook, root.handlers[:], level = saved
        root.setLevel(level)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    warned = next(line for line in lines if line["logger"] == "py.warnings")
    assert warned["category"] == "RuntimeWarning" and "divide by zero" in warned["message"]
    crashed = next(line for line in lines if line["logger"] == "gpuquote.errors")
    assert "doomed" in crashed["message"] and "ZeroDivisionError" in crashed["error"]
