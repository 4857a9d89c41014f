"""The GPU catalog and the name normalizer that maps what vendors write to canonical ids.

Vendors write "RTX 4090", "4090 24G", "NVIDIA GeForce RTX 4090", "A100-SXM4-80GB". The normalizer strips
brand and form-factor words, reads a memory size if one is written, and accepts a name only when exactly
one catalog model fits. A name it cannot place is reported (``UnknownGpuName``), never guessed: an A100
without a memory size is ambiguous, a "4090 48G" is not a card in the catalog.

Performance indices are dense BF16/FP16 tensor TFLOPS relative to an RTX 4090; operators tune them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from schemas.gpu import GpuModel

__all__ = ["DEFAULT_GPU_CATALOG", "GpuCatalog", "UnknownGpuName"]


class UnknownGpuName(ValueError):
    """A GPU name that matches no catalog model, or more than one."""

    def __init__(self, raw_name: str, reason: str) -> None:
        super().__init__(f"unknown GPU {raw_name!r}: {reason}")
        self.raw_name = raw_name
        self.reason = reason


def _model(gpu_id: str, name: str, memory_gb: int, tflops: float, index: float, *aliases: str) -> GpuModel:
    return GpuModel(
        id=gpu_id, name=name, memory_gb=memory_gb, tflops_bf16=tflops, perf_index=index, aliases=list(aliases)
    )


DEFAULT_MODELS: tuple[GpuModel, ...] = (
    _model("h100", "NVIDIA H100 SXM 80GB", 80, 989, 6.0, "H100-SXM5-80GB", "H100 80G"),
    _model("h800", "NVIDIA H800 SXM 80GB", 80, 989, 6.0, "H800 SXM", "H800 80G"),
    _model("l40s", "NVIDIA L40S 48GB", 48, 362, 2.2, "L40S"),
    _model("a100-80g", "NVIDIA A100 80GB", 80, 312, 1.9, "A100-SXM4-80GB", "A100 80G"),
    _model("a100-40g", "NVIDIA A100 40GB", 40, 312, 1.9, "A100-PCIE-40GB", "A100 40G"),
    _model("a800-80g", "NVIDIA A800 80GB", 80, 312, 1.9, "A800 80G", "A800-SXM4-80GB"),
    _model("a800-40g", "NVIDIA A800 40GB", 40, 312, 1.9, "A800 40G"),
    _model("rtx4090", "NVIDIA GeForce RTX 4090 24GB", 24, 165, 1.0, "RTX 4090", "4090 24G"),
    _model("h20", "NVIDIA H20 96GB", 96, 148, 0.9, "H20", "H20 96G"),
    _model("rtx4090d", "NVIDIA GeForce RTX 4090D 24GB", 24, 147, 0.89, "RTX 4090D", "4090D"),
    _model("v100-32g", "NVIDIA Tesla V100 32GB", 32, 125, 0.76, "Tesla V100-SXM2-32GB", "V100 32G"),
    _model("v100-16g", "NVIDIA Tesla V100 16GB", 16, 125, 0.76, "V100-PCIE-16GB"),
    _model("l20", "NVIDIA L20 48GB", 48, 120, 0.72, "L20"),
    _model("rtx3090", "NVIDIA GeForce RTX 3090 24GB", 24, 71, 0.43, "RTX 3090", "3090 24G"),
)

# A family is what is left of a name once brand, form factor and memory are stripped.
_FAMILY_PATTERN = re.compile(r"^(?P<family>[a-z]*\d+[a-z]?)$")
_MEMORY_PATTERN = re.compile(r"(?<![a-z0-9])(?P<gb>\d{2,3})\s*g(?:i?b)?(?![a-z0-9])")
_NOISE_WORDS = re.compile(r"nvidia|geforce|tesla|rtx|sxm\d?|pcie|nvl(?:ink)?|hbm\d?e?|gpu|显卡")


def _family_of(gpu_id: str) -> str:
    return gpu_id.split("-", 1)[0].removeprefix("rtx")


class GpuCatalog:
    """Canonical GPU models by id, plus the normalizer over vendor spellings."""

    def __init__(self, models: Iterable[GpuModel]) -> None:
        self._by_id: dict[str, GpuModel] = {model.id: model for model in models}
        self._by_family: dict[str, list[GpuModel]] = {}
        for model in self._by_id.values():
            self._by_family.setdefault(_family_of(model.id), []).append(model)

    @property
    def models(self) -> Mapping[str, GpuModel]:
        return self._by_id

    def __contains__(self, gpu_id: object) -> bool:
        return gpu_id in self._by_id

    def get(self, gpu_id: str) -> GpuModel:
        return self._by_id[gpu_id]

    def normalize(self, raw_name: str) -> str:
        """The canonical id for a vendor's GPU name; raises ``UnknownGpuName`` rather than guess."""
        lowered = raw_name.strip().lower()
        if lowered in self._by_id:
            return lowered
        memory_match = _MEMORY_PATTERN.search(lowered)
        memory_gb = int(memory_match["gb"]) if memory_match else None
        remainder = (
            lowered[: memory_match.start()] + lowered[memory_match.end() :] if memory_match else lowered
        )
        compact = _NOISE_WORDS.sub("", re.sub(r"[^a-z0-9\u4e00-\u9fff]", "", remainder))
        family_match = _FAMILY_PATTERN.match(compact)
        if family_match is None or family_match["family"] not in self._by_family:
            raise UnknownGpuName(raw_name, f"no catalog model is called {compact or raw_name!r}")
        candidates = self._by_family[family_match["family"]]
        if memory_gb is not None:
            candidates = [model for model in candidates if model.memory_gb == memory_gb]
            if not candidates:
                raise UnknownGpuName(
                    raw_name, f"no {family_match['family']} with {memory_gb} GB in the catalog"
                )
        if len(candidates) > 1:
            sizes = " or ".join(f"{model.memory_gb} GB" for model in candidates)
            raise UnknownGpuName(raw_name, f"ambiguous memory size: {sizes}")
        return candidates[0].id


DEFAULT_GPU_CATALOG = GpuCatalog(DEFAULT_MODELS)
