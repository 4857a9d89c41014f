"""Price stores: ``MemoryPriceStore`` (embedded default) and ``RedisPriceStore`` (shared, production)."""

from service.store.base import PriceStore, StoreContents, StoreUnavailable
from service.store.memory import MemoryPriceStore
from service.store.redis import RedisPriceStore, connect_redis

__all__ = [
    "MemoryPriceStore",
    "PriceStore",
    "RedisPriceStore",
    "StoreContents",
    "StoreUnavailable",
    "connect_redis",
]
