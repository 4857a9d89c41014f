"""``gpuquote refresh``, ``openapi`` and ``mcp``: the commands that load the whole service."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from schemas.api import RefreshReport, VendorRefresh
from service.app import create_app
from service.cli.exits import EXIT_2_ERRORS
from service.errors import RefreshBusy
from service.logs import configure_logging
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from service.tools.mcp import run_stdio
from service.tools.schema import tools_document

__all__ = ["EXIT_2_ERRORS", "mcp", "openapi", "openapi_document", "refresh"]


def openapi_document() -> str:
    """The app's OpenAPI document as stable, sorted JSON (what ``openapi/openapi.json`` must equal)."""
    schema = create_app(Settings()).openapi_schema.to_schema()
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _progress_line(outcome: VendorRefresh) -> None:
    if outcome.ok:
        detail = (
            f"{outcome.offers} offers, {outcome.rows_dropped} rows dropped, {outcome.quarantined} held back"
        )
    else:
        detail = f"FAILED, kept {outcome.offers} previous offers: {outcome.error}"
    print(f"  {outcome.vendor:<24} {outcome.duration_s:6.2f} s  {detail}", flush=True)


def _summary(report: RefreshReport, *, dry_run: bool = False) -> str:
    failed = [outcome.vendor for outcome in report.vendors if not outcome.ok]
    offers = sum(outcome.offers for outcome in report.vendors)
    lines = [
        f"{'vendor':<24} {'ok':<4} {'offers':>6} {'dropped':>7} {'held':>5}",
        *(
            f"{o.vendor:<24} {'yes' if o.ok else 'NO':<4} "
            f"{o.offers:>6} {o.rows_dropped:>7} {o.quarantined:>5}"
            for o in report.vendors
        ),
        f"{len(report.vendors)} vendors, {len(failed)} failed, {offers} offers; "
        + ("dry run: nothing stored" if dry_run else f"store version {report.version}"),
    ]
    if report.removed:
        lines.append(f"removed (no longer in the vendors file): {', '.join(report.removed)}")
    return "\n".join(lines)


EMBEDDED_REFRESH = (
    "gpuquote refresh: GPUQUOTE_REDIS_URL is not set, so the store would be this process's own memory: "
    "prices fetched here vanish when it exits and no running server sees them. Set GPUQUOTE_REDIS_URL to "
    "the Redis the servers share, or call POST /admin/refresh on the server (a server on the embedded "
    "store refreshes itself with GPUQUOTE_REFRESH_INTERVAL_S); `gpuquote refresh --dry-run` fetches and "
    "checks every feed without storing anything."
)


async def _refresh(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    # A dry run fetches into a store of its own that nobody reads; a real one needs the shared store.
    store = MemoryPriceStore(history_max_entries=1) if args.dry_run else None
    services = build_services(settings, store=store)
    if not args.dry_run and services.store_kind == "memory":
        await services.aclose()
        print(EMBEDDED_REFRESH, file=sys.stderr)
        return 2  # a configuration error: the documented code
    try:
        what = "vendor " + args.vendor if args.vendor else "all enabled vendors"
        dry = " (dry run: fetched and checked, nothing stored)" if args.dry_run else ""
        print(f"refreshing {what}{dry} ...", flush=True)
        report = await services.refresher.refresh(args.vendor, wait_s=args.wait, on_progress=_progress_line)
    except RefreshBusy as busy:
        print(f"skipped: {busy.detail}")
        return 0
    finally:
        await services.aclose()
    print(_summary(report, dry_run=args.dry_run))
    return 0 if report.ok else 1


def openapi(args: argparse.Namespace) -> int:
    args.output.parent.mkdir(parents=True, exist_ok=True)
    document = openapi_document()
    args.output.write_text(document, encoding="utf-8")
    print(f"wrote {args.output}")
    args.tools_output.parent.mkdir(parents=True, exist_ok=True)
    args.tools_output.write_text(tools_document(json.loads(document)), encoding="utf-8")
    print(f"wrote {args.tools_output}")
    return 0


def mcp(args: argparse.Namespace) -> int:
    asyncio.run(run_stdio(Settings.from_env(), json.loads(openapi_document())))
    return 0


def refresh(args: argparse.Namespace) -> int:
    return asyncio.run(_refresh(args))
