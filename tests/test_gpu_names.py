"""The GPU name normalizer over the spellings vendors really use."""

from __future__ import annotations

import pytest

from adapters.gpus import DEFAULT_GPU_CATALOG, UnknownGpuName


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("RTX 4090", "rtx4090"),
        ("4090 24G", "rtx4090"),
        ("NVIDIA GeForce RTX 4090", "rtx4090"),
        ("rtx4090", "rtx4090"),
        ("GeForce RTX 4090 24GB", "rtx4090"),
        ("RTX 4090D", "rtx4090d"),
        ("4090D 24G", "rtx4090d"),
        ("A100-SXM4-80GB", "a100-80g"),
        ("NVIDIA A100-PCIE-40GB", "a100-40g"),
        ("A800 80G", "a800-80g"),
        ("a800-80g", "a800-80g"),
        ("H800 SXM", "h800"),
        ("H800", "h800"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("H20 96G", "h20"),
        ("L40S", "l40s"),
        ("NVIDIA L20", "l20"),
        ("Tesla V100-SXM2-32GB", "v100-32g"),
        ("V100 16GB", "v100-16g"),
        ("RTX 3090 24G", "rtx3090"),
        ("  rtx 4090  ", "rtx4090"),
    ],
)
def test_vendor_spellings_map_to_canonical_ids(spelling: str, canonical: str) -> None:
    assert DEFAULT_GPU_CATALOG.normalize(spelling) == canonical


@pytest.mark.parametrize(
    ("spelling", "reason_part"),
    [
        ("A100", "ambiguous memory size"),
        ("A800", "ambiguous memory size"),
        ("4090 48G", "no 4090 with 48 GB"),
        ("H200", "no catalog model"),
        ("RTX 5090", "no catalog model"),
        ("MI300X", "no catalog model"),
        ("", "no catalog model"),
    ],
)
def test_unknown_or_ambiguous_names_are_reported_not_guessed(spelling: str, reason_part: str) -> None:
    with pytest.raises(UnknownGpuName) as raised:
        DEFAULT_GPU_CATALOG.normalize(spelling)
    assert reason_part in raised.value.reason


def test_catalog_matches_the_domain_table() -> None:
    models = DEFAULT_GPU_CATALOG.models
    assert {
        gpu_id: (m.memory_gb, m.perf_index)
        for gpu_id, m in models.items()
        if gpu_id in {"h800", "l40s", "h20", "l20"}
    } == {
        "h800": (80, 6.0),
        "l40s": (48, 2.2),
        "h20": (96, 0.9),
        "l20": (48, 0.72),
    }
