"""Settings, read from the environment (prefix ``GPUQUOTE_``) only when ``Settings.from_env`` is called."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from service.defaults import (
    DEFAULT_CROSS_CITY_MBPS,
    DEFAULT_CROSS_NODE_FACTOR,
    DEFAULT_GPU_HOURS_BETWEEN_FAILURES,
)

__all__ = ["BUNDLED_VENDORS_FILE", "Settings", "SettingsError"]

BUNDLED_VENDORS_FILE = Path(__file__).parent / "reference" / "vendors.toml"
_PREFIX = "GPUQUOTE_"


class SettingsError(ValueError):
    """An environment variable holds a value the service cannot use."""


def _decode_path(target: type, value: Any) -> Any:
    if target is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(f"cannot read {target.__name__} from the environment")


class Settings(msgspec.Struct, kw_only=True, frozen=True):
    redis_url: str | None = None
    redis_cluster: bool = False
    redis_namespace: str = "gpuquote"
    vendors_file: Path = BUNDLED_VENDORS_FILE
    admin_api_keys: tuple[str, ...] = ()
    refresh_interval_s: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    price_max_age_s: Annotated[float, msgspec.Meta(gt=0)] = 86_400.0
    quarantine_change_ratio: Annotated[float, msgspec.Meta(gt=0)] = 0.6
    refresh_lock_ttl_s: Annotated[float, msgspec.Meta(gt=0)] = 300.0
    # Price history per offer: entries kept, how long an entry (and the history of an offer gone or
    # unchanged) lives, and the share of Redis's maxmemory past which history is not written.
    history_max_entries: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 100
    history_max_age_s: Annotated[float, msgspec.Meta(gt=0)] = 30 * 86_400.0
    history_memory_limit_ratio: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.5
    cross_node_factor: Annotated[float, msgspec.Meta(gt=0, le=1)] = DEFAULT_CROSS_NODE_FACTOR
    # Mbit/s a copy of a job's data between cities gets (QuoteOptions.cross_city_mbps; README).
    cross_city_mbps: Annotated[float, msgspec.Meta(gt=0, le=1_000_000)] = DEFAULT_CROSS_CITY_MBPS
    # GPU-hours between hardware failures, for the interruptions quotes expect (QuoteOptions; README).
    gpu_hours_between_failures: Annotated[float, msgspec.Meta(gt=0, le=1e9)] = (
        DEFAULT_GPU_HOURS_BETWEEN_FAILURES
    )
    # Most cards a quote considers when the request leaves card_counts out (QuoteOptions.max_plan_cards).
    max_plan_cards: Annotated[int, msgspec.Meta(ge=1, le=1024)] = 512
    rate_limit_per_minute: Annotated[int, msgspec.Meta(ge=0)] = 0
    max_body_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 65_536
    # A request body must arrive whole within this (408 past it), and a stopping server waits this long
    # at most for requests in flight: both below the pod's 30 s termination grace.
    body_read_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 10.0
    shutdown_timeout_s: Annotated[int, msgspec.Meta(ge=1, le=300)] = 20
    cors_allow_origins: tuple[str, ...] = ()
    log_level: str = "INFO"
    # Store faults: a total deadline for the per-request version check and /ready, and a pool cap.
    store_deadline_s: Annotated[float, msgspec.Meta(gt=0, le=5)] = 0.5
    redis_max_connections: Annotated[int, msgspec.Meta(ge=1)] = 32
    # The nice value of the threads that decode and build a new snapshot (service.background): 19 keeps
    # them off the CPU the requests use; 0 builds faster on a busy CPU, at the requests' expense.
    snapshot_build_nice: Annotated[int, msgspec.Meta(ge=0, le=19)] = 19
    # How often a served process gives the memory quotes freed back to the system, when its heap holds
    # much of it unused (service.heap); 0 never does.
    heap_trim_interval_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] = 1.0
    # Vendor feeds are untrusted: a byte cap per fetched document.
    feed_max_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 8 * 1024 * 1024
    # Proxies whose X-Forwarded-For is trusted for the client address (rate limit); none by default.
    trusted_proxies: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``GPUQUOTE_*`` variables; a bad value raises ``SettingsError`` naming it."""
        env = os.environ if environ is None else environ
        raw: dict[str, Any] = {}
        for field in msgspec.structs.fields(cls):
            value = env.get(_PREFIX + field.name.upper())
            if value is None or value == "":
                continue
            if field.name in {"admin_api_keys", "cors_allow_origins", "trusted_proxies"}:
                raw[field.name] = [item.strip() for item in value.split(",") if item.strip()]
            else:
                raw[field.name] = value
        try:
            return msgspec.convert(raw, cls, strict=False, dec_hook=_decode_path)
        except msgspec.ValidationError as error:
            raise SettingsError(f"invalid GPUQUOTE_ setting: {error}") from error
