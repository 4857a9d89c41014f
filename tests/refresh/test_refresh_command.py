"""``gpuquote refresh`` exit codes: 2 for a configuration error, told in one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main


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
