"""Appending price changes to the history streams, many per round trip, in a script.

Each change goes to ``<prefix><offer_id>`` (a stream trimmed to about ``maxlen`` entries). A chunk of
changes travels as two arguments rather than two per change: the sizes of its parts (``"12,87,12,90"``)
and the parts themselves concatenated (offer id, then its msgpack ``PriceChange``, per change). Packing
100,000 separate arguments took longer than Redis took to append them; two strings per chunk pack in
no time, and the script cuts them apart with ``string.sub``.

A key that holds something other than a stream (``XADD`` fails with WRONGTYPE) is deleted and appended
again, and returned, so the caller can report the repair; a stream key costs no extra command.

On a cluster every key shares the ``{prices}`` hash tag, so a chunk is one slot; the first change's key
is declared (``KEYS[1]``) so the script is routed to that slot's node.
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from schemas.vendor import PriceChange
from service.store.base import offers_encoder

__all__ = ["HISTORY_CHUNK", "append_history_chunk"]

HISTORY_CHUNK = 5_000  # changes per script call

_APPEND_SCRIPT = """
local prefix, maxlen, sizes, packed = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local reset = {}
local at = 1
local key = nil
for size in string.gmatch(sizes, '%d+') do
  local part = string.sub(packed, at, at + size - 1)
  at = at + size
  if key == nil then
    key = prefix .. part
  else
    local added = redis.pcall('XADD', key, 'MAXLEN', '~', maxlen, '*', 'e', part)
    if type(added) == 'table' and added.err then
      redis.call('DEL', key)
      reset[#reset + 1] = key
      redis.call('XADD', key, 'MAXLEN', '~', maxlen, '*', 'e', part)
    end
    key = nil
  end
end
return reset
"""


async def append_history_chunk(
    client: Redis | RedisCluster, prefix: str, maxlen: int, changes: Sequence[PriceChange]
) -> list[bytes | str]:
    """Append one chunk of changes (at most ``HISTORY_CHUNK``); the keys reset from another type.

    Raises what the client raises (``RedisError``, ``OSError``): the caller decides what a failed
    append means.
    """
    parts: list[bytes] = []
    for change in changes:
        parts.append(change.offer_id.encode())
        parts.append(offers_encoder.encode(change))
    sizes = ",".join(str(len(part)) for part in parts)
    first_key = prefix + changes[0].offer_id
    reset = await client.eval(_APPEND_SCRIPT, 1, first_key, prefix, str(maxlen), sizes, b"".join(parts))
    return list(reset or ())
