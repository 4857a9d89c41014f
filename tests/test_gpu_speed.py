"""GPU speed ranges relative to an RTX 4090, and converting one card's hours between models."""

from __future__ import annotations

import itertools

import msgspec
import pytest

from adapters.gpus import DEFAULT_GPU_CATALOG, GpuCatalog, conversion_range
from schemas.gpu import GpuModel, SpeedRange

GPU_IDS = sorted(DEFAULT_GPU_CATALOG.models)


def test_every_catalog_model_has_an_ordered_speed_range_with_a_source_for_each_end() -> None:
    for model in DEFAULT_GPU_CATALOG.models.values():
        assert model.speed is not None, model.id
        assert 0 < model.speed.low <= model.speed.expected <= model.speed.high, model.id
        assert model.speed_sources, model.id
        if model.id != "rtx4090":
            assert [source.split(" ", 1)[0] for source in model.speed_sources] == ["low", "expected", "high"]


def test_the_reference_card_is_one_at_every_end() -> None:
    assert DEFAULT_GPU_CATALOG.get("rtx4090").speed == SpeedRange(low=1.0, expected=1.0, high=1.0)


@pytest.mark.parametrize("gpu_id", GPU_IDS)
def test_peak_index_is_the_compute_bound_end_of_the_range(gpu_id: str) -> None:
    model = DEFAULT_GPU_CATALOG.get(gpu_id)
    assert model.speed is not None
    assert model.speed.low <= model.perf_index <= model.speed.high


def test_h800_spans_measured_throughput_to_peak_compute() -> None:
    speed = DEFAULT_GPU_CATALOG.get("h800").speed
    assert speed == SpeedRange(low=3.0, expected=3.3, high=6.0)
    assert DEFAULT_GPU_CATALOG.get("h800").perf_index == speed.high


def test_h20_memory_bandwidth_is_its_optimistic_end() -> None:
    speed = DEFAULT_GPU_CATALOG.get("h20").speed
    assert speed is not None
    assert speed.expected == 0.9  # compute-bound work: peak BF16 148 vs 165 TFLOPS
    assert speed.high == pytest.approx(4.0 / 1.008, abs=0.01)  # memory-bound work: 4.0 vs 1.008 TB/s


def test_48_hours_on_an_rtx4090_become_8_to_16_hours_on_an_h800() -> None:
    low, expected, high = conversion_range(DEFAULT_GPU_CATALOG, "rtx4090", "h800")
    hours_optimistic, hours_expected, hours_pessimistic = 48 / high, 48 / expected, 48 / low
    assert hours_optimistic <= 48 / 6
    assert hours_pessimistic >= 48 / 3.5
    assert hours_optimistic < hours_expected < hours_pessimistic
    assert (low, expected, high) == (3.0, 3.3, 6.0)


@pytest.mark.parametrize("gpu_id", GPU_IDS)
def test_converting_to_the_same_model_is_exactly_one(gpu_id: str) -> None:
    assert conversion_range(DEFAULT_GPU_CATALOG, gpu_id, gpu_id) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(("reference", "gpu"), list(itertools.permutations(GPU_IDS, 2)))
def test_conversions_are_ordered_and_invert_each_other(reference: str, gpu: str) -> None:
    there = conversion_range(DEFAULT_GPU_CATALOG, reference, gpu)
    back = conversion_range(DEFAULT_GPU_CATALOG, gpu, reference)
    assert there[0] <= there[1] <= there[2]
    assert there[1] * back[1] == pytest.approx(1.0)
    assert there[0] * back[2] == pytest.approx(1.0)
    assert there[2] * back[0] == pytest.approx(1.0)


def test_a_model_without_a_range_converts_at_its_peak_index() -> None:
    catalog = GpuCatalog(
        [
            DEFAULT_GPU_CATALOG.get("rtx4090"),
            GpuModel(id="x1", name="X1", memory_gb=48, perf_index=2.0, tflops_bf16=330),
        ]
    )
    assert conversion_range(catalog, "rtx4090", "x1") == (2.0, 2.0, 2.0)


def test_unknown_ids_raise_key_error() -> None:
    with pytest.raises(KeyError):
        conversion_range(DEFAULT_GPU_CATALOG, "rtx4090", "h200")


def test_a_speed_range_out_of_order_is_refused_at_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="out of order"):
        msgspec.json.decode(b'{"low": 2, "expected": 1, "high": 3}', type=SpeedRange)


def test_speed_range_encodes_in_the_gpu_list() -> None:
    encoded = msgspec.json.decode(msgspec.json.encode(DEFAULT_GPU_CATALOG.get("h800")))
    assert encoded["speed"] == {"low": 3.0, "expected": 3.3, "high": 6.0}
    assert encoded["perf_index"] == 6.0
    assert len(encoded["speed_sources"]) == 3
