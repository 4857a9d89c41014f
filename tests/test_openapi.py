"""The committed OpenAPI document must be the one the code generates."""

from __future__ import annotations

import json
from pathlib import Path

from service.cli.commands import openapi_document

COMMITTED = Path(__file__).resolve().parents[1] / "openapi" / "openapi.json"


def test_committed_spec_matches_the_app() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == openapi_document(), (
        "openapi/openapi.json is out of date: run `gpuquote openapi`"
    )


def test_every_operation_has_an_id_summary_and_tags() -> None:
    spec = json.loads(openapi_document())
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert operation.get("operationId"), f"{method} {path}"
            assert operation.get("summary"), f"{method} {path}"
            assert operation.get("tags"), f"{method} {path}"
