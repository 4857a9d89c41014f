"""``gpuquote serve``'s parent process reads the settings and starts the workers; it never answers a
request, so it must not load the app, the engine or the other commands' dependencies (each worker imports
the app itself, ``service.asgi``): every MB it holds is counted again beside every worker."""

from __future__ import annotations

import subprocess
import sys

from service.cli.serve import SERVED_APP

_HEAVY = ("service.app", "service.quote", "service.services", "mcp", "polars", "litestar", "numpy", "redis")


def test_parsing_the_command_line_and_the_settings_loads_none_of_the_service() -> None:
    script = (
        "import sys\n"
        "from service.cli import build_parser\n"
        "from service.cli.serve import run_server\n"
        "from service.settings import Settings\n"
        "build_parser().parse_args(['serve']); Settings.from_env()\n"
        f"print(','.join(m for m in {_HEAVY!r} if m in sys.modules))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""


def test_the_served_app_is_the_workers_own_module() -> None:
    """The worker imports the app, but neither the MCP server nor polars (the price-sheet adapter loads it
    when a vendor's feed is a sheet)."""
    module, _, function = SERVED_APP.partition(":")
    script = (
        f"import {module}, sys; "
        f"print(callable({module}.{function}), 'mcp' in sys.modules, 'polars' in sys.modules)"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["True", "False", "False"]
