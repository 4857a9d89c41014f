"""Structured logs: one JSON object per line on stderr, carrying the id of the request that caused it.

The request id lives in ``request_id_var`` (set by ``service.http.requests.RequestMiddleware``), and the
formatter reads it when a record is emitted. A traceback is a field of its line (``error``), never extra
lines, so every line parses on its own.

Python's own writes to stderr go the same way once ``capture_stray_output`` ran (``gpuquote serve`` in
every worker, the command line): a warning (numpy's ``RuntimeWarning``, a ``DeprecationWarning``) is a
line of logger ``py.warnings`` with its ``category`` and ``source``; an exception in a thread or one
that could not be raised (``Exception ignored in ...``) is an error line with its traceback. Nothing
that is not a JSON line reaches stderr.

Writing is off the event loop: records are formatted where they are logged (the request id is still in
context there) and appended to a queue; a writer thread writes what has queued to stderr in one write
every ``FLUSH_INTERVAL_S`` (sooner when ``FLUSH_LINES`` lines wait or a warning or error arrives), so a
slow or blocked stderr pipe delays log lines, never requests, and a busy server does not wake a thread
(and hand it the GIL) for every access line. The writer starts when the configuration is applied and is
stopped, writing what is queued, when logging shuts down at process exit, or when a server's worker
process exits (a multiprocessing finalizer: a forked worker leaves through ``os._exit``, past ``atexit``).
"""

from __future__ import annotations

import collections
import contextvars
import logging
import logging.config
import multiprocessing.util
import sys
import threading
import time
import traceback
import warnings
from types import TracebackType
from typing import Any, TextIO

import msgspec

__all__ = [
    "JsonFormatter",
    "QueueToStderrHandler",
    "capture_stray_output",
    "configure_logging",
    "direct_handler",
    "log_config",
    "request_id_var",
]

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

FLUSH_INTERVAL_S = 0.05
FLUSH_LINES = 512

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and becomes a field
# (except uvicorn's terminal-coloured copy of its message).
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()
    | {"message", "asctime", "color_message"}
)
_encoder = msgspec.json.Encoder(enc_hook=str)


class _Clock:
    """UTC ISO-8601 times to the millisecond; the part up to the second is formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def iso(self, created: float) -> str:
        second = int(created)
        if second != self._second:  # a race between threads only formats the same prefix twice
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._prefix}.{int((created - second) * 1000):03d}+00:00"


class JsonFormatter(logging.Formatter):
    """``time``, ``level``, ``logger``, ``message``, ``request_id`` when in a request, ``extra=`` fields,
    and ``error`` (the formatted traceback) when the record carries an exception."""

    def __init__(self) -> None:
        super().__init__()
        self._clock = _Clock()

    def entry(self, created: float, level: str, logger: str, message: str) -> dict[str, Any]:
        """The fields every line starts with, in their order; the request id from the context."""
        entry: dict[str, Any] = {
            "time": self._clock.iso(created),
            "level": level,
            "logger": logger,
            "message": message,
        }
        if (request_id := request_id_var.get()) is not None:
            entry["request_id"] = request_id
        return entry

    def format(self, record: logging.LogRecord) -> str:
        entry = self.entry(record.created, record.levelname.lower(), record.name, record.getMessage())
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and key[0] != "_":
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return _encoder.encode(entry).decode()


class QueueToStderrHandler(logging.Handler):
    """Formats each record as a JSON line and queues it; a writer thread writes the queue to stderr."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self._stream = stream if stream is not None else sys.stderr
        self._lines: collections.deque[str] = collections.deque()
        self._wake = threading.Event()
        self._stopping = False
        self._writer: threading.Thread | None = threading.Thread(
            target=self._write_forever, name="gpuquote-log-writer", daemon=True
        )
        self._writer.start()
        multiprocessing.util.Finalize(self, self.close, exitpriority=100)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._lines.append(self.format(record))  # deque.append is atomic: no lock, no wake-up
        except Exception:  # logging never raises into the caller
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING or len(self._lines) >= FLUSH_LINES:
            self._wake.set()

    def emit_info(self, logger: str, message: str, fields: dict[str, Any]) -> None:
        """Queue the line ``format`` would write for an INFO record of ``logger`` with ``fields`` as its
        ``extra=``, without building the record (``direct_handler`` says when that is the same)."""
        formatter = self.formatter
        if not isinstance(formatter, JsonFormatter):
            raise TypeError("emit_info needs the JSON formatter")
        entry = formatter.entry(time.time(), "info", logger, message)
        entry.update(fields)
        self._lines.append(_encoder.encode(entry).decode())
        if len(self._lines) >= FLUSH_LINES:
            self._wake.set()

    def _write_forever(self) -> None:
        while not self._stopping:
            self._wake.wait(FLUSH_INTERVAL_S)
            self._wake.clear()
            self._write_queued()
        self._write_queued()

    def _write_queued(self) -> None:
        lines = self._lines
        batch = [lines.popleft() for _ in range(len(lines))]
        if not batch:
            return
        try:
            self._stream.write("\n".join(batch) + "\n")
            self._stream.flush()
        except (OSError, ValueError):  # stderr closed or gone: the lines cannot be written anywhere
            pass

    def flush(self) -> None:
        self._wake.set()

    def close(self) -> None:
        # logging.shutdown (at exit), a worker's exit and a later dictConfig all close handlers: once.
        if self._writer is not None:
            self._stopping = True
            self._wake.set()
            self._writer.join(timeout=5)
            self._writer = None
        super().close()


def direct_handler(logger: logging.Logger) -> QueueToStderrHandler | None:
    """The JSON queue handler that is the only one an INFO record of ``logger`` reaches, with no filter on
    the way and the JSON formatter, or None. Then a caller that logs on every request (the access line)
    may hand it the line's fields directly (``emit_info``): the same line, without a ``LogRecord``.

    Walked on each call (three loggers, no allocation) so a reconfiguration (``dictConfig``, a test's
    capturing handler, a filter) takes effect on the next line.
    """
    found: QueueToStderrHandler | None = None
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if (
                found is not None
                or type(handler) is not QueueToStderrHandler
                or handler.filters
                or handler.level > logging.INFO
                or type(handler.formatter) is not JsonFormatter
            ):
                return None
            found = handler
        current = current.parent if current.propagate else None
    return found


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


_warnings_logger = logging.getLogger("py.warnings")
_errors_logger = logging.getLogger("gpuquote.errors")


def _log_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` as a log line: the warning's text, its category and where it was raised."""
    _warnings_logger.warning(
        "%s: %s",
        category.__name__,
        message,
        extra={"category": category.__name__, "source": f"{filename}:{lineno}"},
    )


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    error = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
    thread = args.thread.name if args.thread is not None else "?"
    _errors_logger.error("uncaught exception in thread %s", thread, extra={"error": error})


def _log_unraisable(unraisable: Any) -> None:
    kind: type[BaseException] = unraisable.exc_type
    value: BaseException | None = unraisable.exc_value
    tb: TracebackType | None = unraisable.exc_traceback
    error = "".join(traceback.format_exception(kind, value, tb))
    message = unraisable.err_msg or "Exception ignored in"
    _errors_logger.error("%s: %r", message, unraisable.object, extra={"error": error})


def capture_stray_output() -> None:
    """Send Python's own stderr writes through logging: warnings, and exceptions no caller can see."""
    warnings.showwarning = _log_warning
    threading.excepthook = _log_thread_exception
    sys.unraisablehook = _log_unraisable


def configure_logging(level: str = "INFO") -> None:
    logging.config.dictConfig(log_config(level))
    capture_stray_output()
