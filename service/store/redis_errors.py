"""What went wrong with Redis, in words that are safe anywhere: no host, port, socket path or payload.

redis-py's messages name the server (``Error 111 connecting to 10.0.0.7:6379. Connection refused.``) and,
for a failed pipeline command, echo the command with its arguments (``Command # 2 (SET <key> <the msgpack
offers>) of pipeline caused error: ...``). Neither may reach a public route or a log line: the address is
infrastructure, the arguments can be megabytes of binary. ``describe`` keeps what an operator needs (the
kind of failure, the errno's text, the server's own error such as ``OOM command not allowed``) and drops
the rest; every ``StoreUnavailable`` the Redis store raises carries only its words.
"""

from __future__ import annotations

import os
import re

from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    BusyLoadingError,
    OutOfMemoryError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["describe", "is_out_of_memory", "is_wrong_type"]

_PIPELINE_ECHO = re.compile(r"^Command # \d+ \(.*\) of pipeline caused error: ", re.DOTALL)
_TUPLE_REPR = re.compile(r"""^\((['"])(?P<message>.*)\1,?\)$""", re.DOTALL)
_ERRNO = re.compile(r"Error (-?\d+) ")
# Addresses a server message could still carry (a cluster's MOVED/ASK redirection): IPv4, IPv6, names.
_ADDRESS = re.compile(
    r"(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?|\[[0-9A-Fa-f:.]+\](?::\d+)?|[\w.-]+\.[A-Za-z]{2,}:\d+"
)
_MAX_CHARS = 200


def _server_message(error: ResponseError) -> str:
    """The server's error text from a ``ResponseError``, without redis-py's echo of the command."""
    text = str(error.args[0]) if error.args else str(error)
    text = _PIPELINE_ECHO.sub("", text)
    if match := _TUPLE_REPR.match(text):
        text = match["message"]
    return text.splitlines()[0] if text else type(error).__name__


# Failures told by their class, before the message is looked at.
_BY_CLASS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    ((AuthenticationError, AuthorizationError), "authentication refused"),
    (BusyLoadingError, "the server is loading its data"),
    ((RedisTimeoutError, TimeoutError), "timed out"),
)
_BY_TEXT = (
    ("No connection available", "no free connection in the pool"),
    ("closed by server", "connection closed by the server"),
)


def _connection_problem(error: BaseException) -> str:
    for kinds, problem in _BY_CLASS:
        if isinstance(error, kinds):
            return problem
    text = str(error)
    for fragment, problem in _BY_TEXT:
        if fragment in text:
            return problem
    number: int | None = int(match.group(1)) if (match := _ERRNO.search(text)) else None
    if number is None and isinstance(error, OSError):
        number = error.errno
    if number is None:
        return "connection failed"
    return f"connection failed: {os.strerror(number) if number > 0 else 'address not resolved'}"


def describe(error: BaseException) -> str:
    """A short, address-free account of a Redis client error."""
    if isinstance(error, OutOfMemoryError):
        text = f"OOM {_server_message(error)}"  # redis-py took the server's code off
    elif isinstance(error, ResponseError) and not isinstance(error, AuthorizationError):
        text = _server_message(error)
    elif isinstance(error, RedisConnectionError | RedisTimeoutError | TimeoutError | OSError):
        text = _connection_problem(error)
    else:
        text = type(error).__name__
    return _ADDRESS.sub("<address>", text)[:_MAX_CHARS]


def is_out_of_memory(error: BaseException) -> bool:
    """Redis refused a write because it is at ``maxmemory`` (``noeviction``). redis-py raises its own
    class for that, with the server's ``OOM`` code taken off the message (kept inside a script's error)."""
    if isinstance(error, OutOfMemoryError):
        return True
    return isinstance(error, ResponseError) and _server_message(error).startswith("OOM ")


def is_wrong_type(error: BaseException) -> bool:
    return isinstance(error, ResponseError) and _server_message(error).startswith("WRONGTYPE ")
