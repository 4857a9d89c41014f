"""The GPU catalog and the name normalizer that maps what vendors write to canonical ids.

Vendors write "RTX 4090", "4090 24G", "NVIDIA GeForce RTX 4090", "A100-SXM4-80GB". The normalizer strips
brand and form-factor words, reads a memory size if one is written, and accepts a name only when exactly
one catalog model fits. A name it cannot place is reported (``UnknownGpuName``), never guessed: an A100
without a memory size is ambiguous, a "4090 48G" is not a card in the catalog.

Speeds are relative to an RTX 4090 (= 1) and are ranges, because peak compute overstates real speed-ups:
``perf_index`` is the peak dense BF16 ratio (an H800 is 6.0), while memory bandwidth differs 3.3x and
measured LLM throughput about 3x. Each model's ``speed`` is ``{low, expected, high}`` with
``speed_sources`` naming where each end comes from: published measurements where they exist (H100/H800,
A100/A800), otherwise derived from the peak-compute and memory-bandwidth ratios (``_derived``).
``conversion_range`` turns one card's hours on one model into hours on another. Operators tune them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from schemas.gpu import GpuModel, PairSpeed, SpeedRange

__all__ = [
    "DEFAULT_GPU_CATALOG",
    "DEFAULT_PAIRS",
    "GpuCatalog",
    "UnknownGpuName",
    "conversion_pair",
    "conversion_range",
]


class UnknownGpuName(ValueError):
    """A GPU name that matches no catalog model, or more than one."""

    def __init__(self, raw_name: str, reason: str) -> None:
        super().__init__(f"unknown GPU {raw_name!r}: {reason}")
        self.raw_name = raw_name
        self.reason = reason


# The RTX 4090's memory bandwidth (GDDR6X, TB/s), the denominator of every bandwidth ratio; its dense
# BF16 rate with FP32 accumulate, 165 TFLOPS (NVIDIA Ada Lovelace architecture whitepaper), is that of
# every peak ratio (``perf_index``).
_RTX4090_BANDWIDTH_TB_S = 1.008
# The derivation's pessimistic margin: the H100's measured LLM throughput over an RTX 4090 (3x) falls 10 %
# short of the scarcer of its two ratios (bandwidth, 3.3x).
_MEASURED_SHORTFALL = 0.9

_H100_MEASURED = (
    "LLM inference throughput for models over 13B measured about 3x an RTX 4090 "
    "('Datacenter vs Consumer GPUs: H100 vs RTX 4090', fridayswithfaraday.com)"
)
_A100_MEASURED = (
    "the H100's expected 3.3 over 2.5, the middle of the 2-3x H100-over-A100 measured in mixed-precision "
    "training of 1B-30B models against vendor claims of up to 6x (a 7B GPT with FP8 ran 3x an A100 "
    "with BF16: MosaicML with CoreWeave, 'Benchmarking Large Language Models on NVIDIA H100 GPUs', 2023)"
)
_A100_PARITY = (
    "small models that fit in 24 GB often train at near parity with an RTX 4090 "
    "(public single-card fine-tuning measurements)"
)
_DERIVED = "derived from datasheet ratios; no published measurement against an RTX 4090"

Speed = tuple[SpeedRange, list[str]]

_REFERENCE: Speed = (
    SpeedRange(low=1.0, expected=1.0, high=1.0),
    ["the reference card: every speed in the catalog is relative to the RTX 4090"],
)
_HOPPER: Speed = (
    SpeedRange(low=3.0, expected=3.3, high=6.0),
    [
        f"low 3.0: {_H100_MEASURED}; also 989 over the RTX 4090's FP16-accumulate 330 TFLOPS",
        "expected 3.3: memory bandwidth 3.35 vs 1.008 TB/s (NVIDIA H100 SXM datasheet; the H800 SXM's is "
        "the same), which the measured 3x tracks",
        "high 6.0: peak dense BF16 (FP32 accumulate) 989 vs 165 TFLOPS (NVIDIA H100 SXM datasheet; NVIDIA "
        "Ada Lovelace whitepaper for the RTX 4090)",
    ],
)


def _peak_text(tflops: float, index: float) -> str:
    return f"peak dense BF16/FP16 tensor {tflops:g} vs 165 TFLOPS ({index})"


def _bandwidth_text(bandwidth_tb_s: float, ratio: float) -> str:
    return f"memory bandwidth {bandwidth_tb_s:g} vs 1.008 TB/s ({ratio})"


def _ampere(tflops: float, index: float, bandwidth_tb_s: float) -> Speed:
    """A100 / A800: measured low and expected; the larger of the peak and bandwidth ratios is the high end."""
    bandwidth_ratio = round(bandwidth_tb_s / _RTX4090_BANDWIDTH_TB_S, 2)
    high = max(index, bandwidth_ratio)
    high_text = (
        _bandwidth_text(bandwidth_tb_s, bandwidth_ratio) + f", above the {_peak_text(tflops, index)}"
        if bandwidth_ratio > index
        else _peak_text(tflops, index) + f"; {_bandwidth_text(bandwidth_tb_s, bandwidth_ratio)} is below it"
    )
    return SpeedRange(low=1.0, expected=1.3, high=high), [
        f"low 1.0: {_A100_PARITY}",
        f"expected 1.3: {_A100_MEASURED}",
        f"high {high}: {high_text} (NVIDIA A100 datasheet; the A800's is the same)",
    ]


def _derived(tflops: float, index: float, bandwidth_tb_s: float) -> Speed:
    """No published measurement against an RTX 4090: the range comes from the two datasheet ratios.

    Work runs at the pace of the resource the card has relatively less of, so the scarcer ratio is the
    expected speed and 0.9 of it the pessimistic one (the H100's measurement: 3x against 3.3x); the
    ampler ratio is the optimistic end. Applied to the H100 the rule gives 2.99 / 3.32 / 6.0, its
    measured range.
    """
    bandwidth_ratio = round(bandwidth_tb_s / _RTX4090_BANDWIDTH_TB_S, 2)
    peak, bandwidth = _peak_text(tflops, index), _bandwidth_text(bandwidth_tb_s, bandwidth_ratio)
    scarce, ample = (peak, bandwidth) if index <= bandwidth_ratio else (bandwidth, peak)
    expected, high = sorted((index, bandwidth_ratio))
    low = round(_MEASURED_SHORTFALL * expected, 2)
    return SpeedRange(low=low, expected=expected, high=high), [
        f"low {low}: 0.9 of the expected ratio, the shortfall measured on the H100 ({_DERIVED})",
        f"expected {expected}: the scarcer resource, {scarce} ({_DERIVED})",
        f"high {high}: the ampler resource, {ample} ({_DERIVED})",
    ]


def _model(
    gpu_id: str, name: str, memory_gb: int, tflops: float, index: float, bandwidth_tb_s: float, *aliases: str
) -> GpuModel:
    speed_range, sources = _MEASURED.get(gpu_id) or _derived(tflops, index, bandwidth_tb_s)
    return GpuModel(
        id=gpu_id,
        name=name,
        memory_gb=memory_gb,
        tflops_bf16=tflops,
        perf_index=index,
        aliases=list(aliases),
        bandwidth_tb_s=bandwidth_tb_s,
        speed=speed_range,
        speed_sources=sources,
    )


# Models with published measurements; every other model's range is ``_derived``.
_MEASURED: dict[str, Speed] = {
    "rtx4090": _REFERENCE,
    "h100": _HOPPER,
    "h800": _HOPPER,
    "a100-80g": _ampere(312, 1.9, 2.039),
    "a800-80g": _ampere(312, 1.9, 2.039),
    "a100-40g": _ampere(312, 1.9, 1.555),
    "a800-40g": _ampere(312, 1.9, 1.555),
}

# Columns: id, name, memory GB, peak dense BF16 TFLOPS, its ratio to the RTX 4090's 165 (``perf_index``),
# memory bandwidth TB/s (vendor datasheets), then vendor spellings.
DEFAULT_MODELS: tuple[GpuModel, ...] = (
    _model("h100", "NVIDIA H100 SXM 80GB", 80, 989, 6.0, 3.35, "H100-SXM5-80GB", "H100 80G"),
    _model("h800", "NVIDIA H800 SXM 80GB", 80, 989, 6.0, 3.35, "H800 SXM", "H800 80G"),
    _model("l40s", "NVIDIA L40S 48GB", 48, 362, 2.2, 0.864, "L40S"),
    _model("a100-80g", "NVIDIA A100 80GB", 80, 312, 1.9, 2.039, "A100-SXM4-80GB", "A100 80G"),
    _model("a100-40g", "NVIDIA A100 40GB", 40, 312, 1.9, 1.555, "A100-PCIE-40GB", "A100 40G"),
    _model("a800-80g", "NVIDIA A800 80GB", 80, 312, 1.9, 2.039, "A800 80G", "A800-SXM4-80GB"),
    _model("a800-40g", "NVIDIA A800 40GB", 40, 312, 1.9, 1.555, "A800 40G"),
    _model("rtx4090", "NVIDIA GeForce RTX 4090 24GB", 24, 165, 1.0, 1.008, "RTX 4090", "4090 24G"),
    _model("h20", "NVIDIA H20 96GB", 96, 148, 0.9, 4.0, "H20", "H20 96G"),
    _model("rtx4090d", "NVIDIA GeForce RTX 4090D 24GB", 24, 147, 0.89, 1.008, "RTX 4090D", "4090D"),
    _model("v100-32g", "NVIDIA Tesla V100 32GB", 32, 125, 0.76, 0.9, "Tesla V100-SXM2-32GB", "V100 32G"),
    _model("v100-16g", "NVIDIA Tesla V100 16GB", 16, 125, 0.76, 0.9, "V100-PCIE-16GB"),
    _model("l20", "NVIDIA L20 48GB", 48, 120, 0.72, 0.864, "L20"),
    _model("rtx3090", "NVIDIA GeForce RTX 3090 24GB", 24, 71, 0.43, 0.936, "RTX 3090", "3090 24G"),
)

_HOPPER_OVER_AMPERE = (
    "H100 over A100 measured 2-3x in mixed-precision training of 1B-30B models, against vendor claims of up "
    "to 6x (MosaicML with CoreWeave, 'Benchmarking Large Language Models on NVIDIA H100 GPUs', 2023); the "
    "H800 has the H100's compute and memory, the A800 the A100's"
)

# Published direct comparisons between two models (the 80 GB Ampere cards the measurement used).
DEFAULT_PAIRS: tuple[PairSpeed, ...] = tuple(
    PairSpeed(
        faster=faster,
        slower=slower,
        speed=SpeedRange(low=2.0, expected=2.5, high=3.0),
        source=_HOPPER_OVER_AMPERE,
    )
    for faster in ("h100", "h800")
    for slower in ("a100-80g", "a800-80g")
)

# A family is what is left of a name once brand, form factor and memory are stripped.
_FAMILY_PATTERN = re.compile(r"^(?P<family>[a-z]*\d+[a-z]?)$")
_MEMORY_PATTERN = re.compile(r"(?<![a-z0-9])(?P<gb>\d{2,3})\s*g(?:i?b)?(?![a-z0-9])")
_NOISE_WORDS = re.compile(r"nvidia|geforce|tesla|rtx|sxm\d?|pcie|nvl(?:ink)?|hbm\d?e?|gpu|显卡")


def _family_of(gpu_id: str) -> str:
    return gpu_id.split("-", 1)[0].removeprefix("rtx")


class GpuCatalog:
    """Canonical GPU models by id, plus the normalizer over vendor spellings."""

    def __init__(self, models: Iterable[GpuModel], pairs: Iterable[PairSpeed] = ()) -> None:
        self._by_id: dict[str, GpuModel] = {model.id: model for model in models}
        self._pairs: dict[tuple[str, str], PairSpeed] = {(pair.faster, pair.slower): pair for pair in pairs}
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

    def pair(self, one: str, other: str) -> PairSpeed | None:
        """The direct measurement between two models, whichever is the faster; None without one."""
        return self._pairs.get((one, other)) or self._pairs.get((other, one))

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


DEFAULT_GPU_CATALOG = GpuCatalog(DEFAULT_MODELS, DEFAULT_PAIRS)


def _speed_of(model: GpuModel) -> SpeedRange:
    if model.speed is not None:
        return model.speed
    return SpeedRange(low=model.perf_index, expected=model.perf_index, high=model.perf_index)


def conversion_pair(catalog: GpuCatalog, reference_gpu: str, gpu: str) -> PairSpeed | None:
    """The catalog's direct measurement between the two models, which ``conversion_range`` then uses."""
    return catalog.pair(gpu, reference_gpu) if gpu != reference_gpu else None


def conversion_range(catalog: GpuCatalog, reference_gpu: str, gpu: str) -> tuple[float, float, float]:
    """``(low, expected, high)`` factors dividing one-card hours on ``reference_gpu`` into hours on ``gpu``.

    Hours on ``gpu`` = hours on ``reference_gpu`` / factor, so ``low`` gives the most hours: the
    pessimistic end. ``expected`` is the ratio of the two expected speeds. The ends pair the two ranges
    the way the hours can actually fall: ``low`` is ``gpu`` at its slowest over ``reference_gpu`` at its
    fastest (the caller's hours were measured on a card that runs the work well), ``high`` the other way
    round. So ``expected`` lies strictly inside whenever either range is one, and the conversion back is
    the exact inverse. RTX 4090 (one speed) to H800: 3.0 / 3.3 / 6.0. Where the catalog holds a direct
    measurement of the pair (``conversion_pair``) it is the conversion instead: A100 80G to H800 2.0 / 2.5
    / 3.0 (through the RTX 4090 it would be 1.49 / 2.54 / 6.0), and back 0.33 / 0.4 / 0.5. Two models with
    the same range (the same model, H100 and H800): exactly 1 at every end. Unknown ids raise ``KeyError``.
    """
    pair = conversion_pair(catalog, reference_gpu, gpu)
    if pair is not None:
        speed = pair.speed
        if pair.faster == gpu:
            return speed.low, speed.expected, speed.high
        return 1 / speed.high, 1 / speed.expected, 1 / speed.low
    reference, target = _speed_of(catalog.get(reference_gpu)), _speed_of(catalog.get(gpu))
    if reference == target:
        return 1.0, 1.0, 1.0
    return (
        target.low / reference.high,
        target.expected / reference.expected,
        target.high / reference.low,
    )
