"""The project's contract as the deployment files see it: console script, CLI, routes, settings.

Each contract is read from the code itself (``service.cli``, ``service.app``, ``service.settings``), so
the manifests are checked against what the service really accepts and serves, offline.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"

CliProblem = Callable[[Sequence[str]], str | None]
SettingsProblem = Callable[[Mapping[str, str]], str | None]


def _load_pyproject() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


@functools.cache
def _cli_help(target: str, subcommand: str) -> str | None:
    """``gpuquote <subcommand> --help`` run the way the console script runs it; None if it is refused."""
    module, _, function = target.partition(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    environ = {key: value for key, value in os.environ.items() if not key.startswith("GPUQUOTE_")}
    completed = subprocess.run(
        [sys.executable, "-c", code, subcommand, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=environ,
        check=False,
    )
    return completed.stdout if completed.returncode == 0 else None


@pytest.fixture(scope="session")
def pyproject() -> dict[str, Any]:
    return _load_pyproject()


@pytest.fixture(scope="session")
def console_scripts(pyproject: dict[str, Any]) -> dict[str, str]:
    """``[project.scripts]``: console script name → ``module:function``."""
    scripts: dict[str, str] = pyproject["project"]["scripts"]
    return scripts


@pytest.fixture(scope="session")
def cli_problem(console_scripts: dict[str, str]) -> CliProblem:
    """Why an argv (``["gpuquote", "refresh", ...]``) would not run, or None if it would.

    The program must be a declared console script, the subcommand must exist and every ``--option`` must
    be one the subcommand accepts: asked of the real CLI (``<sub> --help``).
    """

    def problem(argv: Sequence[str]) -> str | None:
        if not argv or argv[0] not in console_scripts:
            return f"{list(argv)}: program is not a [project.scripts] entry {sorted(console_scripts)}"
        if len(argv) < 2 or argv[1].startswith("-"):
            return f"{list(argv)}: no subcommand"
        program, subcommand, *rest = argv
        options = {arg.split("=", 1)[0] for arg in rest if arg.startswith("--")}
        help_text = _cli_help(console_scripts[program], subcommand)
        if help_text is None:
            return f"`{program} {subcommand} --help` fails: no such subcommand"
        missing = sorted(option for option in options if option not in help_text)
        return f"`{program} {subcommand}` has no option {missing}" if missing else None

    return problem


@pytest.fixture(scope="session")
def served_get_paths() -> frozenset[str]:
    """Paths the app answers GET on (``service.app.create_app``)."""
    create_app = importlib.import_module("service.app").create_app
    settings_type = importlib.import_module("service.settings").Settings
    app = create_app(settings_type())
    return frozenset(route.path for route in app.routes if "GET" in getattr(route, "methods", ()))


@pytest.fixture(scope="session")
def served_paths() -> frozenset[str]:
    """Paths the app answers on, any method (``service.app.create_app``)."""
    create_app = importlib.import_module("service.app").create_app
    settings_type = importlib.import_module("service.settings").Settings
    app = create_app(settings_type())
    return frozenset(route.path for route in app.routes)


@pytest.fixture(scope="session")
def known_settings() -> frozenset[str]:
    """Every ``GPUQUOTE_*`` variable the service reads: the ``Settings`` fields."""
    settings_type = importlib.import_module("service.settings").Settings
    return frozenset("GPUQUOTE_" + field.name.upper() for field in msgspec.structs.fields(settings_type))


@pytest.fixture(scope="session")
def settings_problem() -> SettingsProblem:
    """Why ``Settings.from_env`` rejects an environment, or None."""

    def problem(environ: Mapping[str, str]) -> str | None:
        settings_type = importlib.import_module("service.settings").Settings
        try:
            settings_type.from_env(dict(environ))
        except ValueError as error:
            return str(error)
        return None

    return problem
