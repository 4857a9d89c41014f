"""Streams around the stdio transport so that every line read gets its answer: stdin closing ends the
session only once every request read has its answer written, and a line that is not a JSON-RPC message
is answered with a JSON-RPC error instead of being dropped.

A client that writes its requests and closes stdin (``... | gpuquote mcp``) otherwise loses the answers
still being worked out: the SDK's server loop ends at end of input and cancels its handlers. Here end of
input is held back until each request id read has had its response or error sent, or until
``DRAIN_TIMEOUT_S`` passes (a request nobody answers does not keep the process alive).

The SDK's stdio reader hands on a line it cannot read as an exception, which its server loop only logs,
so the client waits for an answer that never comes. JSON-RPC 2.0 says what to answer: a line that is not
JSON gets ``-32700`` (parse error), JSON that is not a request, notification or response gets ``-32600``
(invalid request), each with ``id: null`` unless the id can be read. A blank line is not a message and
gets nothing. The answer never quotes the line.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["DRAIN_TIMEOUT_S", "draining_streams"]

DRAIN_TIMEOUT_S = 60.0

RequestId = str | int


class _Pending:
    """Ids of the requests read and not yet answered, and an event set whenever none is left."""

    def __init__(self) -> None:
        self.ids: set[RequestId] = set()
        self.drained = anyio.Event()
        self.drained.set()

    def add(self, request_id: RequestId) -> None:
        if not self.ids:
            self.drained = anyio.Event()
        self.ids.add(request_id)

    def answered(self, request_id: RequestId) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.drained.set()


class _Wrapped:
    """A stream around the transport's: closing and the context manager are the inner stream's."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception] | WriteStream[SessionMessage], pending: _Pending
    ) -> None:
        self._closable = inner
        self._pending = pending

    async def aclose(self) -> None:
        await self._closable.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


def _unreadable_line_error(error: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering a line the transport could not read; ``None`` for a blank line."""
    # The SDK's reader raises pydantic's ValidationError; read through its ``errors()`` list of problems.
    listing = getattr(error, "errors", None)
    problems: list[dict[str, Any]] = listing() if callable(listing) else []
    if problems and problems[0]["type"] == "json_invalid":
        line = problems[0].get("input")
        if isinstance(line, str | bytes) and not line.strip():
            return None
        return JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message="Parse error: the line is not one JSON document"),
        )
    # Valid JSON, but not a JSON-RPC message: answer to its id when it has a usable one.
    # The message itself is a problem's input at the top (``(member,)``), or of a field missing from it.
    whole = [
        p["input"]
        for p in problems
        if isinstance(p.get("input"), dict)
        and (len(p["loc"]) <= 1 or (p["type"] == "missing" and len(p["loc"]) == 2))
    ]
    request_id = whole[0].get("id") if whole else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        request_id = None
    message = "Invalid request: not a JSON-RPC 2.0 request, notification or response"
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=message))


class _DrainingReader(_Wrapped):
    """The stdin side: records each request's id; its end waits for those answers. A line that cannot be
    read is answered on ``answer`` here, since the server loop would drop it."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        pending: _Pending,
        answer: WriteStream[SessionMessage],
    ) -> None:
        super().__init__(inner, pending)
        self._inner = inner
        self._answer = answer

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                with anyio.move_on_after(DRAIN_TIMEOUT_S):
                    await self._pending.drained.wait()
                raise
            if isinstance(item, Exception):
                reply = _unreadable_line_error(item)
                if reply is not None:
                    await self._answer.send(SessionMessage(reply))
                continue
            if isinstance(item.message, JSONRPCRequest):
                self._pending.add(item.message.id)
            return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _AnsweringWriter(_Wrapped):
    """The stdout side: a response or error sent settles its request."""

    def __init__(self, inner: WriteStream[SessionMessage], pending: _Pending) -> None:
        super().__init__(inner, pending)
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError) and item.message.id is not None:
            self._pending.answered(item.message.id)


def draining_streams(
    read_stream: ReadStream[SessionMessage | Exception], write_stream: WriteStream[SessionMessage]
) -> tuple[_DrainingReader, _AnsweringWriter]:
    """The transport's streams, with end of input held back until the requests read are answered."""
    pending = _Pending()
    writer = _AnsweringWriter(write_stream, pending)
    return _DrainingReader(read_stream, pending, writer), writer
