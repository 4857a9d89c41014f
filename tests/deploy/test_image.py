"""deploy/Dockerfile, its build-context filter and deploy/compose.yaml, checked statically: no Docker engine.

The Dockerfile must run the console script pyproject.toml declares, as a non-root user, with a health check
that hits a route the app serves; the context filter must send exactly what ``pip install .`` needs; the
compose services must run real CLI commands against the compose Redis.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata
import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.manifests import COMPOSE, DOCKERFILE, REPO, compose_file, compose_interpolate

DOCKERIGNORE = REPO / "deploy" / "Dockerfile.dockerignore"

CliProblem = Callable[[Sequence[str]], str | None]
Instruction = tuple[str, str]


# --- Dockerfile -----------------------------------------------------------------------------------------


def dockerfile_stages() -> list[list[Instruction]]:
    """The instructions, grouped by stage (each list starts with its FROM), continuation lines joined."""
    stages: list[list[Instruction]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # Docker drops comment lines, also inside a continuation
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, rest = (pending + line).partition(" ")
        pending = ""
        if keyword.upper() == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword.upper(), rest.strip()))
    return stages


def last(stage: list[Instruction], keyword: str) -> str:
    values = [rest for name, rest in stage if name == keyword]
    assert values, f"no {keyword} in the stage starting {stage[0]}"
    return values[-1]


def exec_form(value: str) -> list[str]:
    """A JSON-array (exec form) instruction argument; the shell form would hide the real argv."""
    argv = json.loads(value)
    assert isinstance(argv, list), f"not exec form: {value}"
    return [str(arg) for arg in argv]


def test_dockerfile_builds_a_venv_and_ships_it_on_slim() -> None:
    stages = dockerfile_stages()
    assert len(stages) >= 2
    builder, runtime = stages[0], stages[-1]
    # An exact Python 3.11 release on Debian slim (tests/deploy/test_images.py checks the pinning rule).
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})? AS builder", builder[0][1])
    # The same base image: the copied venv's interpreter links resolve to the same Python.
    assert runtime[0][1].split()[0] == builder[0][1].split()[0]
    assert any(name == "RUN" and re.search(r"\bpip install \.(\s|$)", rest) for name, rest in builder)
    assert ("COPY", "--from=builder /opt/venv /opt/venv") in runtime
    assert not any(name == "RUN" and "pip install" in rest for name, rest in runtime)


def test_image_runs_as_a_numeric_non_root_user() -> None:
    runtime = dockerfile_stages()[-1]
    user, _, group = last(runtime, "USER").partition(":")
    assert user.isdigit(), "Kubernetes runAsNonRoot can only verify a numeric USER"
    assert int(user) != 0
    assert not group or int(group) != 0
    created = " ".join(rest for name, rest in runtime if name == "RUN")
    assert f"--uid {user}" in created


def test_entrypoint_is_the_declared_console_script(
    console_scripts: dict[str, str], cli_problem: CliProblem
) -> None:
    runtime = dockerfile_stages()[-1]
    entrypoint = exec_form(last(runtime, "ENTRYPOINT"))
    command = exec_form(last(runtime, "CMD"))
    assert entrypoint == ["gpuquote"]
    assert console_scripts["gpuquote"] == "service.cli:main"
    assert cli_problem([*entrypoint, *command]) is None
    assert command[0] == "serve"
    assert command[command.index("--host") + 1] == "0.0.0.0"
    assert command[command.index("--port") + 1] == last(runtime, "EXPOSE")


def healthcheck_argv() -> list[str]:
    options_and_command = last(dockerfile_stages()[-1], "HEALTHCHECK")
    _, _, command = options_and_command.partition("CMD ")
    return exec_form(command)


def test_healthcheck_calls_health_on_the_exposed_port(served_get_paths: frozenset[str]) -> None:
    argv = healthcheck_argv()
    assert argv[:2] == ["python", "-c"]  # slim images have no curl
    url = urlsplit(re.findall(r"'(http://[^']+)'", argv[2])[0])
    assert url.path == "/health"
    assert url.path in served_get_paths
    assert str(url.port) == last(dockerfile_stages()[-1], "EXPOSE")


class _StatusHandler(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


def run_healthcheck_against(status: int) -> int:
    """Exit code of the image's health-check command against a loopback server answering ``status``."""
    handler = type("Handler", (_StatusHandler,), {"status": status})
    with HTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        code = healthcheck_argv()[2].replace("127.0.0.1:8000", f"127.0.0.1:{server.server_port}")
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, check=False)
        server.shutdown()
        thread.join()
    return completed.returncode


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False), (500, False)])
def test_healthcheck_command_fails_on_an_error_status(status: int, healthy: bool) -> None:
    assert (run_healthcheck_against(status) == 0) is healthy


# --- build context --------------------------------------------------------------------------------------


def dockerignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def sent_to_builder(relative: str, patterns: list[str]) -> bool:
    """Docker's rule for one path: the last matching pattern wins; a match on a folder covers its files.

    ``**/`` also matches at the top level, as in Docker. fnmatch's ``*`` crosses ``/``, which the patterns
    here (``*`` alone, ``**/x``) do not depend on.
    """
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern.removeprefix("!").strip("/")
        candidates = [body, body.removeprefix("**/")] if body.startswith("**/") else [body]
        if any(fnmatch.fnmatchcase(prefix, c) for prefix in prefixes for c in candidates):
            excluded = not negated
    return not excluded


def package_files(pyproject: dict[str, Any]) -> Iterator[str]:
    """Every source and data file under the packages ``[tool.setuptools.packages.find]`` includes."""
    tops = {
        pattern.rstrip("*").split(".")[0]
        for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    for top in sorted(tops):
        for path in (REPO / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path.relative_to(REPO).as_posix()


def test_build_context_holds_what_pip_install_needs(pyproject: dict[str, Any]) -> None:
    patterns = dockerignore_patterns()
    needed = ["pyproject.toml", pyproject["project"]["readme"], *package_files(pyproject)]
    assert len(needed) > 10
    assert [path for path in needed if not sent_to_builder(path, patterns)] == []


@pytest.mark.parametrize(
    "path",
    [
        ".git/HEAD",
        ".venv/bin/python",
        "tests/conftest.py",
        "deploy/.env",
        "deploy/k8s/secret.example.yaml",
        "service/__pycache__/cli.cpython-311.pyc",
        "__pycache__/x.pyc",
        "adapters/static.pyc",
    ],
)
def test_build_context_leaves_out_everything_else(path: str) -> None:
    assert not sent_to_builder(path, dockerignore_patterns())


def third_party_imports(package_dirs: set[str]) -> dict[str, str]:
    """Top-level modules the packaged code imports at run time (not under ``TYPE_CHECKING``) → a file."""
    found: dict[str, str] = {}
    for top in sorted(package_dirs):
        for path in sorted((REPO / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            type_only = {
                id(node)
                for branch in ast.walk(tree)
                if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                for node in ast.walk(branch)
            }
            for node in ast.walk(tree):
                if id(node) in type_only:
                    continue
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    module = name.split(".")[0]
                    if module not in sys.stdlib_module_names and module not in package_dirs:
                        found.setdefault(module, path.relative_to(REPO).as_posix())
    return found


def installable_distributions(requirements: list[str]) -> set[str]:
    """The distributions ``pip install .`` brings in: the requirements and, as installed here, theirs."""
    names: set[str] = set()
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in names:
            continue
        names.add(name)
        for text in importlib.metadata.requires(requirement.name) or []:
            child = Requirement(text)
            extras = requirement.extras or {""}
            if child.marker is None or any(child.marker.evaluate({"extra": extra}) for extra in extras):
                pending.append(child)
    return names


def test_packaged_code_imports_only_what_the_image_installs(pyproject: dict[str, Any]) -> None:
    """The image gets the declared dependencies only; a module imported but not declared breaks it."""
    tops = {
        pattern.rstrip("*").split(".")[0]
        for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    installed = installable_distributions(pyproject["project"]["dependencies"])
    providers = importlib.metadata.packages_distributions()
    undeclared = {
        module: where
        for module, where in third_party_imports(tops).items()
        if not {canonicalize_name(dist) for dist in providers.get(module, [])} & installed
    }
    assert undeclared == {}


# --- compose --------------------------------------------------------------------------------------------


# What deploy/.env holds for the tests: the variables compose requires, nothing else.
COMPOSE_ENV = {"GPUQUOTE_ADMIN_API_KEYS": "k1,k2", "REDIS_PASSWORD": "0123456789abcdef"}


def compose_services() -> dict[str, Any]:
    services: dict[str, Any] = compose_file()["services"]
    return services


def interpolate(value: str) -> str:
    """A compose value as compose resolves it with ``COMPOSE_ENV`` in deploy/.env."""
    return compose_interpolate(value, COMPOSE_ENV)


def test_compose_runs_one_image_with_real_commands(cli_problem: CliProblem) -> None:
    services = compose_services()
    assert services.keys() == {"redis", "api", "refresh"}
    api, refresh = services["api"], services["refresh"]
    assert (COMPOSE.parent / api["build"]["context"]).resolve() == REPO
    assert (REPO / api["build"]["dockerfile"]).resolve() == DOCKERFILE
    assert refresh["image"] == api["image"]
    assert cli_problem(["gpuquote", *api["command"]]) is None
    assert refresh["command"] == ["refresh"]
    assert cli_problem(["gpuquote", *refresh["command"]]) is None
    assert refresh["profiles"] == ["jobs"]  # never started by `up`; run on demand
    assert refresh["healthcheck"] == {"disable": True}  # no HTTP server in a refresh run
    port = api["command"][api["command"].index("--port") + 1]
    assert any(mapping.endswith(f":{port}") for mapping in api["ports"])


def test_compose_wires_redis_settings_and_the_admin_key(
    known_settings: frozenset[str], settings_problem: Callable[[Mapping[str, str]], str | None]
) -> None:
    services = compose_services()
    assert "healthcheck" in services["redis"]
    assert "ports" not in services["redis"]  # reachable from the stack only
    for name in ("api", "refresh"):
        service = services[name]
        assert service["depends_on"] == {"redis": {"condition": "service_healthy"}}
        environment: dict[str, str] = service["environment"]
        assert environment.keys() <= known_settings
        url = urlsplit(interpolate(environment["GPUQUOTE_REDIS_URL"]))
        assert url.hostname in services
        assert url.password == COMPOSE_ENV["REDIS_PASSWORD"]
        assert environment["GPUQUOTE_ADMIN_API_KEYS"].startswith("${GPUQUOTE_ADMIN_API_KEYS:")
        assert settings_problem({key: interpolate(value) for key, value in environment.items()}) is None
    assert "/health" in " ".join(services["api"]["healthcheck"]["test"])


def compose_unknown_settings(document: dict[str, Any], known_settings: frozenset[str]) -> list[str]:
    """``GPUQUOTE_*`` names set anywhere in compose (every service, every ``x-`` block) that are no setting."""
    blocks = {name: body for name, body in document.items() if name.startswith("x-")}
    blocks |= {
        f"services.{name}": service.get("environment", {}) for name, service in document["services"].items()
    }
    problems = []
    for where, environment in blocks.items():
        names = (
            environment.keys() if isinstance(environment, dict) else [e.split("=", 1)[0] for e in environment]
        )
        problems += [f"{where}: {n}" for n in names if n.startswith("GPUQUOTE_") and n not in known_settings]
    return problems


def test_compose_sets_only_settings_the_service_defines(known_settings: frozenset[str]) -> None:
    document = compose_file()
    assert compose_unknown_settings(document, known_settings) == []
    document["services"]["refresh"]["environment"]["GPUQUOTE_REDIS_TIMEOUT_MS"] = "500"
    document["services"]["redis"]["environment"] = ["GPUQUOTE_REDIS_PASWORD=x"]
    assert compose_unknown_settings(document, known_settings) == [
        "services.redis: GPUQUOTE_REDIS_PASWORD",
        "services.refresh: GPUQUOTE_REDIS_TIMEOUT_MS",
    ]


def test_compose_redis_requires_the_password_the_api_uses() -> None:
    services = compose_services()
    command = [interpolate(arg) for arg in services["redis"]["command"]]
    assert command[command.index("--requirepass") + 1] == COMPOSE_ENV["REDIS_PASSWORD"]
    # The health check authenticates through REDISCLI_AUTH (no password on its command line).
    assert interpolate(services["redis"]["environment"]["REDISCLI_AUTH"]) == COMPOSE_ENV["REDIS_PASSWORD"]
    test = services["redis"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    assert "redis-cli ping" in test[1]
    assert "PONG" in test[1]
    # No usable default: without REDIS_PASSWORD in deploy/.env compose refuses to start.
    for value in (services["api"]["environment"]["GPUQUOTE_REDIS_URL"], *services["redis"]["command"]):
        if "REDIS_PASSWORD" in value:
            with pytest.raises(ValueError, match="REDIS_PASSWORD"):
                compose_interpolate(value, {})
