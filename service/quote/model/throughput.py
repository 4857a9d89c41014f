"""What one serving replica serves, in tokens per second, for serving jobs sized by a throughput target.

Decoding is memory-bandwidth bound: each token of each sequence reads the model's weights once, so one
sequence decodes at about the replica's memory bandwidth over the weights' bytes, times how much of the
bandwidth a serving stack reaches (Llama 3.1 8B in BF16 on an A100 40GB decodes ~75 tokens/s, ~77 % of
1.555 TB/s over 16 GB); batching concurrent requests multiplies it at little latency cost up to about 8
(~6.6× at 8 in a public vLLM sweep; Llama 3.3 70B in BF16 on 8 × A100 NVLink serves ~1,480 tokens/s at
16). So tokens/s per replica ≈ concurrent requests × cards × bandwidth × 0.6–0.8 ÷ weight bytes, capped by
compute (2 × active parameters FLOPs per token at 0.35 of the peak) (sources in docs/engine.md). The
KV cache is taken to fit within the memory rule's 20 % overhead over the weights; a caller's measured
``replica_tokens_per_s`` replaces the whole estimate.
"""

from __future__ import annotations

import msgspec
import numpy as np

from schemas.quote import Range
from service.quote.base.arrays import FloatArray

__all__ = [
    "BANDWIDTH_USE",
    "COMPUTE_USE",
    "DEFAULT_CONCURRENT_REQUESTS",
    "Throughput",
    "replica_tokens_per_s",
]

DEFAULT_CONCURRENT_REQUESTS = 8
"""Requests a replica serves at once by default: batching to about 8 costs little latency (public vLLM sweep)."""

BANDWIDTH_USE = Range(low=0.6, expected=0.7, high=0.8)
"""Share of the memory bandwidth decoding reaches (77 % measured for an 8B model on an A100)."""

COMPUTE_USE = 0.35
"""Share of the peak BF16 rate a decoding replica reaches at most (the sizing's expected MFU)."""


class Throughput(msgspec.Struct, frozen=True, gc=False):
    """A serving job's throughput target and what sizes its replicas."""

    target_tokens_per_s: float
    concurrent_requests: int
    measured_tokens_per_s: float | None  # the caller's, per replica: replaces the estimate
    weight_gb: float | None  # the model's weights at its precision (None with a measured figure)
    active_params_b: float | None


def replica_tokens_per_s(
    throughput: Throughput, cards: FloatArray, bandwidth_tb_s: FloatArray, tflops_bf16: FloatArray
) -> FloatArray:
    """``(3, rows)``: low / expected / high tokens per second of one replica of ``cards`` cards of each
    row's GPU (its bandwidth and peak; NaN where the catalog gives none)."""
    measured = throughput.measured_tokens_per_s
    if measured is not None:
        return np.full((3, cards.size), measured)
    assert throughput.weight_gb is not None and throughput.active_params_b is not None
    per_pass = throughput.concurrent_requests * cards * bandwidth_tb_s * 1e12 / (throughput.weight_gb * 1e9)
    compute_cap = cards * tflops_bf16 * 1e12 * COMPUTE_USE / (2 * throughput.active_params_b * 1e9)
    bounds = np.stack(
        [per_pass * share for share in (BANDWIDTH_USE.low, BANDWIDTH_USE.expected, BANDWIDTH_USE.high)]
    )
    served: FloatArray = np.minimum(bounds, compute_cap)
    return served
