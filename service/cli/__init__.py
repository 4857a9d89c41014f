"""The ``gpuquote`` command: serve, refresh, quote, openapi."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from granian import Granian
from granian.constants import Interfaces, Loops
from granian.http import HTTP1Settings
from granian.log import LogLevels
from granian.utils.proxies import wrap_asgi_with_proxy_headers
from litestar.types import ASGIApp

from adapters.vendors_file import VendorsFileError
from schemas.api import RefreshReport, VendorRefresh
from service.app import create_app
from service.cli.quote import add_quote_parser, run_quote_command
from service.errors import GpuquoteError, RefreshBusy
from service.logs import capture_stray_output, configure_logging, log_config
from service.services import build_services
from service.settings import Settings, SettingsError
from service.store.base import StoreUnavailable
from service.store.memory import MemoryPriceStore
from service.tools.mcp import run_stdio
from service.tools.schema import tools_document

__all__ = ["main"]

DEFAULT_OPENAPI_PATH = Path("openapi/openapi.json")
DEFAULT_TOOLS_PATH = Path("openapi/tools.json")


def openapi_document() -> str:
    """The app's OpenAPI document as stable, sorted JSON (what ``openapi/openapi.json`` must equal)."""
    schema = create_app(Settings()).openapi_schema.to_schema()
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


SERVERS = ("granian", "uvicorn")
DEFAULT_SERVER = "granian"  # bench/http.py: the faster of the two on /health and a bare route


def proxied_app() -> ASGIApp:
    """The served app factory (either server): the service, trusting ``X-Forwarded-*`` from proxies only.

    Only ``GPUQUOTE_TRUSTED_PROXIES`` may set the client address (what uvicorn's ``proxy_headers`` with
    ``forwarded_allow_ips`` does); with none configured the socket peer stays the client.
    """
    settings = Settings.from_env()
    capture_stray_output()  # this worker's warnings (numpy's among them) are JSON lines too
    app: ASGIApp = create_app(settings, freeze_heap=True)
    if settings.trusted_proxies:
        app = wrap_asgi_with_proxy_headers(app, trusted_hosts=list(settings.trusted_proxies))
    return app


def run_server(target: str, *, server: str, host: str, port: int, workers: int, settings: Settings) -> None:
    """Serve the ASGI app factory ``target`` (``module:function``) with granian or uvicorn.

    Either way: JSON log lines through one queue per worker (the app writes the access line itself, so
    the server's own access log is off) and uvloop. The server never reads ``X-Forwarded-*`` itself:
    ``proxied_app`` does, from ``settings.trusted_proxies`` only.
    """
    logging_config = log_config(settings.log_level)
    if server == "granian":
        Granian(
            target,
            factory=True,
            address=host,
            port=port,
            interface=Interfaces.ASGI,
            workers=workers,
            loop=Loops.uvloop,
            log_dictconfig=logging_config,
            log_level=LogLevels(settings.log_level.lower()),
            log_access=False,
            # Headers that trickle in are cut off like a slow body (the app times out bodies itself).
            http1_settings=HTTP1Settings(header_read_timeout=int(settings.body_read_timeout_s * 1000)),
            workers_kill_timeout=settings.shutdown_timeout_s,
        ).serve()
        return
    uvicorn.run(
        target,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop",
        http="httptools",
        log_config=logging_config,
        access_log=False,
        proxy_headers=False,  # the app factory applies the trusted proxies' headers itself
        timeout_graceful_shutdown=settings.shutdown_timeout_s,
    )


def _serve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()  # fail here, with the variable named, rather than inside a worker
    run_server(
        "service.cli:proxied_app",
        server=args.server,
        host=args.host,
        port=args.port,
        workers=args.workers,
        settings=settings,
    )
    return 0


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


def _openapi(args: argparse.Namespace) -> int:
    args.output.parent.mkdir(parents=True, exist_ok=True)
    document = openapi_document()
    args.output.write_text(document, encoding="utf-8")
    print(f"wrote {args.output}")
    args.tools_output.parent.mkdir(parents=True, exist_ok=True)
    args.tools_output.write_text(tools_document(json.loads(document)), encoding="utf-8")
    print(f"wrote {args.tools_output}")
    return 0


def _mcp(args: argparse.Namespace) -> int:
    asyncio.run(run_stdio(Settings.from_env(), json.loads(openapi_document())))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpuquote", description="GPU-rental prices and total-cost quotes.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument(
        "--server", choices=SERVERS, default=DEFAULT_SERVER, help=f"HTTP server (default {DEFAULT_SERVER})"
    )
    serve.set_defaults(handler=_serve)

    refresh = commands.add_parser("refresh", help="fetch vendor prices into the store now")
    refresh.add_argument("--vendor", help="refresh only this vendor id")
    refresh.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a running refresh")
    refresh.add_argument(
        "--dry-run",
        action="store_true",
        help="fetch and check every feed, store nothing (needs no GPUQUOTE_REDIS_URL)",
    )
    refresh.set_defaults(handler=lambda args: asyncio.run(_refresh(args)))

    add_quote_parser(commands).set_defaults(handler=run_quote_command)

    openapi = commands.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", type=Path, default=DEFAULT_OPENAPI_PATH)
    openapi.add_argument("--tools-output", type=Path, default=DEFAULT_TOOLS_PATH, help="LLM tool definitions")
    openapi.set_defaults(handler=_openapi)

    mcp = commands.add_parser("mcp", help="serve the quote tools over the Model Context Protocol (stdio)")
    mcp.set_defaults(handler=_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except (SettingsError, VendorsFileError, GpuquoteError, StoreUnavailable) as error:
        # Exit 2: configuration or store; 1 stays "a vendor failed" for schedulers to tell apart.
        print(f"gpuquote: {error}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
