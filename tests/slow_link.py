"""A loopback TCP link that delays what a client sends by a fixed time: a Redis far away, so every round
trip holds its pooled connection for that long (without a frozen server's timeouts)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

__all__ = ["slow_link"]

_CHUNK_BYTES = 65_536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float) -> None:
    try:
        while chunk := await reader.read(_CHUNK_BYTES):
            if delay_s:
                await asyncio.sleep(delay_s)
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def slow_link(redis_url: str, delay_s: float) -> AsyncIterator[str]:
    """A Redis URL reaching ``redis_url``'s server through a link adding ``delay_s`` to each request."""
    target = urlsplit(redis_url)
    pipes: set[asyncio.Task[None]] = set()

    async def connect(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection(target.hostname, target.port)
        for pipe in (
            _pipe(client_reader, server_writer, delay_s),
            _pipe(server_reader, client_writer, 0.0),
        ):
            task = asyncio.create_task(pipe)
            pipes.add(task)
            task.add_done_callback(pipes.discard)

    server = await asyncio.start_server(connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        credentials, _, _ = target.netloc.rpartition("@")
        yield target._replace(netloc=f"{credentials}{'@' if credentials else ''}127.0.0.1:{port}").geturl()
    finally:
        server.close()
        for task in list(pipes):
            task.cancel()
        await asyncio.gather(*pipes, return_exceptions=True)
        await server.wait_closed()
