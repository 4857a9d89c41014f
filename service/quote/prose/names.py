"""Names as prose writes them, in the summary's language: vendors by their display name (``name_zh`` in
Chinese), places 苏州 / Suzhou, GPUs ``RTX 4090``, ``A100 80G``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adapters.gpus import GpuCatalog
from schemas.quote import Lang
from service.names import gpu_display_name, place_display_name
from service.quote.base.memo import memoized

__all__ = ["ProseNames", "gpu_name"]


@dataclass(frozen=True, slots=True)
class ProseNames:
    """Display names for prose in one language: vendors (id → name), places and GPUs."""

    vendors: Mapping[str, str]
    catalog: GpuCatalog
    lang: Lang

    def vendor(self, vendor: str) -> str:
        return self.vendors.get(vendor) or vendor

    def gpu(self, gpu: str) -> str:
        return gpu_name(gpu, self.catalog)

    def place(self, place: str) -> str:
        return _place_name(place, self.lang)


@memoized(512)
def gpu_name(gpu_id: str, catalog: GpuCatalog) -> str:
    """``gpu_display_name`` cached: the catalog is built once and never changed (keyed by identity); a
    quote names its GPU several times."""
    return gpu_display_name(gpu_id, catalog)


@memoized(1024)
def _place_name(place: str, lang: Lang) -> str:
    """``place_display_name`` cached: a summary names two places per option, from a short list."""
    return place_display_name(place, lang)
