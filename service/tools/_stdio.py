"""Streams around the stdio transport so that stdin closing ends the session only once every request
read from it has its answer written.

A client that writes its requests and closes stdin (``... | gpuquote mcp``) otherwise loses the answers
still being worked out: the SDK's server loop ends at end of input and cancels its handlers. Here end of
input is held back until each request id read has had its response or error sent, or until
``DRAIN_TIMEOUT_S`` passes (a request nobody answers does not keep the process alive).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

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


class _DrainingReader(_Wrapped):
    """The stdin side: records each request's id; its end waits for those answers."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], pending: _Pending) -> None:
        super().__init__(inner, pending)
        self._inner = inner

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            with anyio.move_on_after(DRAIN_TIMEOUT_S):
                await self._pending.drained.wait()
            raise
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
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
    return _DrainingReader(read_stream, pending), _AnsweringWriter(write_stream, pending)
