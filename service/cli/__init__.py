"""The ``gpuquote`` command: serve, refresh, quote, openapi, mcp.

Each command lives in its own module (``serve``, ``quote``, ``commands``), imported by name when it runs:
``gpuquote serve`` starts the server's workers from a process that loads the settings and the servers
alone (tens of MB), never the engine, the MCP SDK or the other commands' modules.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from service.cli.command import Command
from service.cli.quote_parser import add_quote_parser
from service.cli.serve import DEFAULT_SERVER, SERVERS

__all__ = ["build_parser", "main"]

DEFAULT_OPENAPI_PATH = Path("openapi/openapi.json")
DEFAULT_TOOLS_PATH = Path("openapi/tools.json")


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
    serve.set_defaults(handler=Command("service.cli.serve", "serve"))

    refresh = commands.add_parser("refresh", help="fetch vendor prices into the store now")
    refresh.add_argument("--vendor", help="refresh only this vendor id")
    refresh.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a running refresh")
    refresh.add_argument(
        "--dry-run",
        action="store_true",
        help="fetch and check every feed, store nothing (needs no GPUQUOTE_REDIS_URL)",
    )
    refresh.set_defaults(handler=Command("service.cli.commands", "refresh"))

    add_quote_parser(commands)

    openapi = commands.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", type=Path, default=DEFAULT_OPENAPI_PATH)
    openapi.add_argument("--tools-output", type=Path, default=DEFAULT_TOOLS_PATH, help="LLM tool definitions")
    openapi.set_defaults(handler=Command("service.cli.commands", "openapi"))

    mcp = commands.add_parser("mcp", help="serve the quote tools over the Model Context Protocol (stdio)")
    mcp.set_defaults(handler=Command("service.cli.commands", "mcp"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    command: Command = args.handler
    try:
        code = command(args)
    except command.exit_2_errors() as error:
        # Exit 2: configuration or store; 1 stays "a vendor failed" for schedulers to tell apart.
        print(f"gpuquote: {error}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
