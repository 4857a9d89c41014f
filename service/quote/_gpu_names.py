"""GPU display names for prose, worked out once per (GPU id, catalog): a quote names its GPU several times."""

from __future__ import annotations

import functools

from adapters.gpus import GpuCatalog
from service.names import gpu_display_name

__all__ = ["gpu_name"]


@functools.lru_cache(maxsize=512)
def gpu_name(gpu_id: str, catalog: GpuCatalog) -> str:
    """``gpu_display_name`` cached: the catalog is built once and never changed (keyed by identity)."""
    return gpu_display_name(gpu_id, catalog)
