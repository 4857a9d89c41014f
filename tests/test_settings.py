from __future__ import annotations

from pathlib import Path

import pytest

from service.settings import BUNDLED_VENDORS_FILE, Settings, SettingsError


def test_defaults_run_embedded_on_the_reference_catalog() -> None:
    settings = Settings.from_env({})
    assert settings.redis_url is None
    assert settings.vendors_file == BUNDLED_VENDORS_FILE
    assert settings.refresh_interval_s == 0
    assert settings.rate_limit_per_minute == 0


def test_environment_values_are_parsed() -> None:
    settings = Settings.from_env(
        {
            "GPUQUOTE_REDIS_URL": "redis://cache:6379/1",
            "GPUQUOTE_REDIS_CLUSTER": "true",
            "GPUQUOTE_ADMIN_API_KEYS": "alpha, beta,,",
            "GPUQUOTE_PRICE_MAX_AGE_S": "3600",
            "GPUQUOTE_VENDORS_FILE": "/etc/gpuquote/vendors.toml",
        }
    )
    assert settings.redis_url == "redis://cache:6379/1"
    assert settings.redis_cluster is True
    assert settings.admin_api_keys == ("alpha", "beta")
    assert settings.price_max_age_s == 3600.0
    assert settings.vendors_file == Path("/etc/gpuquote/vendors.toml")


@pytest.mark.parametrize(
    ("name", "value"), [("GPUQUOTE_PRICE_MAX_AGE_S", "soon"), ("GPUQUOTE_REFRESH_INTERVAL_S", "-5")]
)
def test_bad_values_name_the_setting(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name.removeprefix("GPUQUOTE_").lower()):
        Settings.from_env({name: value})
