"""Structured logs: one JSON object per line on stderr, carrying the id of the request that caused it.

The request id lives in ``request_id_var`` (set by ``service.http.requests.RequestMiddleware``), and the
formatter reads it when a record is emitted. A traceback is a field of its line (``error``), never extra
lines, so every line parses on its own.

Writing is off the event loop: records are formatted where they are logged (cheap, and the request id is
still in context there) and put on a queue; a listener thread writes them to stderr, so a slow or blocked
stderr pipe delays log lines, never requests. The listener starts when the configuration is applied and
is stopped, flushing what is queued, when logging shuts down at process exit.
"""

from __future__ import annotations

import contextvars
import json
import logging
import logging.config
import logging.handlers
import queue
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "JsonFormatter",
    "QueueToStderrHandler",
    "configure_logging",
    "log_config",
    "request_id_var",
]

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and becomes a field
# (except uvicorn's terminal-coloured copy of its message).
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()
    | {"message", "asctime", "color_message"}
)


class JsonFormatter(logging.Formatter):
    """``time``, ``level``, ``logger``, ``message``, ``request_id`` when in a request, ``extra=`` fields,
    and ``error`` (the formatted traceback) when the record carries an exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (request_id := request_id_var.get()) is not None:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class _AlreadyFormatted(logging.Formatter):
    """The queue carries finished lines (``QueueHandler.prepare`` put the JSON in ``msg``)."""

    def format(self, record: logging.LogRecord) -> str:
        return str(record.msg)


class QueueToStderrHandler(logging.handlers.QueueHandler):
    """Formats each record as JSON and queues it; a ``QueueListener`` thread writes the lines to stderr."""

    def __init__(self) -> None:
        lines: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
        super().__init__(lines)
        self.setFormatter(JsonFormatter())
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setFormatter(_AlreadyFormatted())
        self._listener: logging.handlers.QueueListener | None = logging.handlers.QueueListener(lines, stderr)
        self._listener.start()

    def close(self) -> None:
        # logging.shutdown (at exit) and a later dictConfig both close handlers: drain the queue once.
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
        super().close()


def log_config(level: str = "INFO") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` document: every logger, uvicorn's included, through one JSON queue.

    ``gpuquote serve`` hands it to the server (granian or uvicorn), which applies it in each worker
    process; the servers' own loggers propagate to the root's JSON handler.
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"json": {"()": QueueToStderrHandler}},
        "root": {"handlers": ["json"], "level": level.upper()},
        "loggers": {
            name: {"handlers": [], "propagate": True}
            for name in (
                "_granian",
                "granian.access",
                "uvicorn",
                "uvicorn.error",
                "uvicorn.access",
                "litestar",
            )
        },
    }


def configure_logging(level: str = "INFO") -> None:
    logging.config.dictConfig(log_config(level))
