"""``gpuquote refresh`` exit codes: 2 for a configuration error, told in one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main
from tests.adapters.fake_vendor import FakeVendor
from tests.api.listing import write_listing_catalog


def test_a_bad_vendors_file_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vendors = tmp_path / "vendors.toml"
    vendors.write_text(
        '[[vendors]]\nid = "out"\nname = "Out"\nregion = "jiangsu"\ncity = "suzhou"\n'
        'format = "static"\npath = "../outside.json"\n',
        encoding="utf-8",
    )
    monkeypatch.delenv("GPUQUOTE_REDIS_URL", raising=False)
    monkeypatch.setenv("GPUQUOTE_VENDORS_FILE", str(vendors))

    assert main(["refresh"]) == 2

    error = capsys.readouterr().err
    assert error.startswith("gpuquote: invalid vendors file")
    assert "leads outside" in error
    assert "Traceback" not in error and len(error.strip().splitlines()) == 1


def test_on_the_embedded_store_a_refresh_says_no_server_would_see_it_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GPUQUOTE_REDIS_URL", raising=False)
    monkeypatch.setenv("GPUQUOTE_VENDORS_FILE", str(write_listing_catalog(tmp_path)))

    assert main(["refresh"]) == 2

    out, err = capsys.readouterr()
    assert "store version" not in out and "offers" not in out  # nothing that reads like a stored refresh
    assert err.startswith("gpuquote refresh: GPUQUOTE_REDIS_URL is not set")
    assert "no running server sees them" in err and "--dry-run" in err and "POST /admin/refresh" in err


def test_a_dry_run_fetches_and_checks_every_feed_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GPUQUOTE_REDIS_URL", raising=False)
    monkeypatch.setenv("GPUQUOTE_VENDORS_FILE", str(write_listing_catalog(tmp_path)))

    assert main(["refresh", "--dry-run"]) == 0

    out = capsys.readouterr().out
    assert out.startswith("refreshing all enabled vendors (dry run: fetched and checked, nothing stored)")
    assert "js-changzhou-t" in out and "js-yangzhou-old" in out
    assert out.rstrip().endswith("2 vendors, 0 failed, 6 offers; dry run: nothing stored")


def test_a_dry_run_exits_1_when_a_feed_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fake_vendor: FakeVendor,
) -> None:
    url = fake_vendor.serve("/prices", b"", status=503)
    vendors = write_listing_catalog(tmp_path)
    vendors.write_text(
        vendors.read_text(encoding="utf-8")
        + f'\n[[vendors]]\nid = "js-down"\nname = "Down"\nregion = "jiangsu"\ncity = "wuxi"\n'
        f'format = "card_hour_json"\nurl = "{url}"\nretries = 0\ntimeout_s = 2\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("GPUQUOTE_REDIS_URL", "redis://127.0.0.1:1/0")  # never contacted by a dry run
    monkeypatch.setenv("GPUQUOTE_VENDORS_FILE", str(vendors))

    assert main(["refresh", "--dry-run"]) == 1

    out = capsys.readouterr().out
    assert "js-down" in out and "FAILED" in out
    assert "3 vendors, 1 failed, 6 offers; dry run: nothing stored" in out
