"""Every snapshot the service builds is prepared before it is served: the rows' kinds serving,
independent-runs and deadline requests read are made on the rebuild's thread, not by the first such
request (``service.quote.prepare_snapshot``, called by the snapshot check)."""

from __future__ import annotations

from pathlib import Path

from litestar.testing import AsyncTestClient

from adapters.gpus import DEFAULT_GPU_CATALOG
from service.app import create_app
from service.quote.evaluate.layout import kept_layouts
from service.services import build_services
from service.services._upkeep import snapshot_check
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.builders import card_hour_feed
from tests.quote.seeded import catalog

_PREPARED = ("placement kinds", "followed placement kinds", "deadline row kinds")


def _vendors_file(folder: Path) -> Path:
    (folder / "one.json").write_bytes(card_hour_feed({"one-1": 5.0, "one-2": 6.5}))
    path = folder / "vendors.toml"
    path.write_text(
        '[[vendors]]\nid = "one"\nname = "One"\nregion = "jiangsu"\ncity = "suzhou"\n'
        'format = "static"\npath = "one.json"\n',
        encoding="utf-8",
    )
    return path


async def test_a_served_snapshot_already_holds_what_placed_and_deadline_requests_read(tmp_path: Path) -> None:
    services = build_services(Settings(vendors_file=_vendors_file(tmp_path)), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        snapshot = services.snapshots.held
        assert snapshot is not None and snapshot.tables.size == 2
        made = snapshot.tables.memos.stats()
        assert {name: made.get(name) for name in _PREPARED} == dict.fromkeys(_PREPARED, (1, 1))
        answered = await client.post(
            "/quote",
            json={"workload": {"kind": "independent", "gpu_hours": 40, "runs": 4, "cards_per_run": 1}},
        )
        assert answered.status_code == 200, answered.text
        assert services.snapshots.held is snapshot
        after = snapshot.tables.memos.stats()
        assert {name: after.get(name) for name in _PREPARED} == dict.fromkeys(_PREPARED, (1, 1))


def test_the_snapshot_check_prepares_what_billing_every_cell_of_a_plain_job_reads() -> None:
    """The check hands the service's quote options to ``prepare_snapshot``: the shared layout then holds
    its rows' billing terms per cell, which no default quote makes (a deadline or budget most rows meet
    reads them)."""
    snapshot = catalog(17, 3_000)
    snapshot_check(Settings(), DEFAULT_GPU_CATALOG, [])(snapshot)
    ((_, layout),) = kept_layouts(snapshot.tables)
    assert not layout.bounds_up_front
    assert layout.memos.stats().get("billing rows") == (1, 1)
