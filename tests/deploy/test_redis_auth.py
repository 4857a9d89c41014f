"""The bundled Redis requires a password from the Secret; the api and the refresh job use that password;
the Redis probes authenticate (run here against a stand-in redis-cli); probe timeouts fit the store deadline;
every image is an exact release.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.deploy.manifests import (
    COMPOSE,
    DOCKERFILE,
    K8S,
    SECRET_EXAMPLE,
    SECRET_NAME,
    Manifest,
    app_containers,
    compose_file,
    containers,
    env_entry,
    expand_env,
    find,
    image_pin_problem,
    load_documents,
    render_kustomization,
    secret_stand_in,
)

PASSWORD_KEY = "redis-password"
REDIS_MAXCLIENTS = 10_000  # Redis's default


@pytest.fixture(scope="module")
def documents() -> list[Manifest]:
    return render_kustomization(K8S)


@pytest.fixture(scope="module")
def config_maps(documents: list[Manifest]) -> dict[str, dict[str, str]]:
    return {d["metadata"]["name"]: d["data"] for d in documents if d["kind"] == "ConfigMap"}


@pytest.fixture(scope="module")
def redis_container(documents: list[Manifest]) -> Manifest:
    (container,) = containers(find(documents, "Deployment", "gpuquote-redis"))
    return container


def secret_ref(container: Manifest, name: str) -> dict[str, str] | None:
    entry = env_entry(container, name)
    if entry is None or "valueFrom" not in entry:
        return None
    ref: dict[str, str] = entry["valueFrom"]["secretKeyRef"]
    return ref


# --- the password -------------------------------------------------------------------------------------


def test_redis_requires_the_password_from_the_secret(redis_container: Manifest) -> None:
    args = redis_container["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    assert secret_ref(redis_container, "REDIS_PASSWORD") == {"name": SECRET_NAME, "key": PASSWORD_KEY}
    environ = expand_env(redis_container, {})
    assert environ["REDIS_PASSWORD"] == secret_stand_in(PASSWORD_KEY)


def test_api_and_refresh_connect_with_that_password(
    documents: list[Manifest], config_maps: dict[str, dict[str, str]]
) -> None:
    found = []
    for _, container in app_containers(documents):
        names = [entry["name"] for entry in container["env"]]
        # $(REDIS_PASSWORD) expands only if REDIS_PASSWORD is defined earlier in the same list.
        assert names.index("REDIS_PASSWORD") < names.index("GPUQUOTE_REDIS_URL")
        assert secret_ref(container, "REDIS_PASSWORD") == {"name": SECRET_NAME, "key": PASSWORD_KEY}
        url = urlsplit(expand_env(container, config_maps)["GPUQUOTE_REDIS_URL"])
        assert url.password == secret_stand_in(PASSWORD_KEY)
        found.append(container["name"])
    assert sorted(found) == ["api", "refresh"]
    # No password-less URL left behind in the ConfigMap for a container without the env entry to pick up.
    assert "GPUQUOTE_REDIS_URL" not in config_maps["gpuquote-settings"]


def test_no_literal_credentials_in_urls(documents: list[Manifest]) -> None:
    for document in documents:
        values = (
            [str(v) for v in document.get("data", {}).values()] if document["kind"] == "ConfigMap" else []
        )
        values += [str(e.get("value", "")) for c in containers(document) for e in c.get("env", [])]
        for value in values:
            for url in re.findall(r"rediss?://[^\s\"']+", value):
                password = urlsplit(url).password
                assert password is None or re.fullmatch(r"\$\([A-Z_]+\)", password), url


def test_secret_example_has_a_url_safe_redis_password() -> None:
    data = find(load_documents(SECRET_EXAMPLE), "Secret", SECRET_NAME)["stringData"]
    assert re.fullmatch(r"[A-Za-z0-9._~-]+", data[PASSWORD_KEY])


# --- the probes authenticate --------------------------------------------------------------------------

FAKE_REDIS_CLI = """#!/bin/sh
# Like redis-cli 7 against a server with requirepass: an error reply, exit status 0.
if [ "$1" = ping ] && [ "$REDISCLI_AUTH" = "$EXPECTED_PASSWORD" ]; then echo PONG; exit 0; fi
if [ -n "$REDISCLI_AUTH" ]; then echo "AUTH failed: WRONGPASS invalid username-password pair" >&2; fi
echo "NOAUTH Authentication required."
exit 0
"""


def run_probe(command: list[str], environ: dict[str, str], tmp_path: Path) -> int:
    cli = tmp_path / "redis-cli"
    cli.write_text(FAKE_REDIS_CLI, encoding="utf-8")
    cli.chmod(0o755)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", "EXPECTED_PASSWORD": "s3cret", **environ}
    return subprocess.run(command, env=env, capture_output=True, timeout=30, check=False).returncode


@pytest.mark.parametrize("probe", ["livenessProbe", "readinessProbe"])
def test_redis_probes_pass_only_when_authenticated(
    redis_container: Manifest, probe: str, tmp_path: Path
) -> None:
    command = redis_container[probe]["exec"]["command"]
    assert "redis-cli" in " ".join(command)
    assert secret_ref(redis_container, "REDISCLI_AUTH") == {"name": SECRET_NAME, "key": PASSWORD_KEY}
    assert redis_container[probe]["timeoutSeconds"] >= 2
    # The container's environment, with the Secret's value in place.
    assert run_probe(command, {"REDISCLI_AUTH": "s3cret"}, tmp_path) == 0
    assert run_probe(command, {"REDISCLI_AUTH": "wrong"}, tmp_path) != 0
    assert run_probe(command, {}, tmp_path) != 0


def test_compose_redis_health_check_authenticates(tmp_path: Path) -> None:
    redis = compose_file()["services"]["redis"]
    kind, script = redis["healthcheck"]["test"]
    assert kind == "CMD-SHELL"
    assert run_probe(["sh", "-c", script], {"REDISCLI_AUTH": "s3cret"}, tmp_path) == 0
    assert run_probe(["sh", "-c", script], {}, tmp_path) != 0
    assert shlex.split(script)[0] == "redis-cli"


# --- probe timeouts and the store deadline ------------------------------------------------------------


def readiness_problem(probe: Manifest, deadline_s: float) -> str | None:
    """Why a readinessProbe on /ready could time out while the app is healthy, or None.

    /ready answers within GPUQUOTE_STORE_DEADLINE_S whatever Redis does; the probe needs that plus room
    for the request itself (at least a second, and at least twice the deadline).
    """
    timeout = float(probe.get("timeoutSeconds", 1))
    if timeout < max(deadline_s + 1, 2 * deadline_s):
        return f"timeoutSeconds {timeout} leaves no room above the {deadline_s} s store deadline"
    return None


def test_readiness_timeout_is_comfortably_above_the_store_deadline(
    documents: list[Manifest], config_maps: dict[str, dict[str, str]], known_settings: frozenset[str]
) -> None:
    settings = config_maps["gpuquote-settings"]
    deadline = float(settings["GPUQUOTE_STORE_DEADLINE_S"])
    assert "GPUQUOTE_STORE_DEADLINE_S" in known_settings
    api = next(c for _, c in app_containers(documents) if c["name"] == "api")
    assert api["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert api["readinessProbe"]["timeoutSeconds"] > deadline
    assert readiness_problem(api["readinessProbe"], deadline) is None
    # The period leaves time for one probe to finish before the next.
    assert api["readinessProbe"]["periodSeconds"] > api["readinessProbe"]["timeoutSeconds"]


@pytest.mark.parametrize(("timeout", "deadline"), [(1, 0.5), (2, 1.5), (None, 0.5), (4, 3)])
def test_readiness_check_rejects_a_tight_timeout(timeout: int | None, deadline: float) -> None:
    probe = {} if timeout is None else {"timeoutSeconds": timeout}
    assert readiness_problem(probe, deadline) is not None


def test_redis_pool_fits_the_server(
    documents: list[Manifest], config_maps: dict[str, dict[str, str]]
) -> None:
    per_pod = int(config_maps["gpuquote-settings"]["GPUQUOTE_REDIS_MAX_CONNECTIONS"])
    max_pods = find(documents, "HorizontalPodAutoscaler")["spec"]["maxReplicas"] + 1  # + the refresh job
    assert per_pod >= 1
    assert per_pod * max_pods < REDIS_MAXCLIENTS


# --- images -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "image",
    [
        "redis:7.4.2-alpine3.21",
        "python:3.11.11-slim-bookworm",
        "registry.example.com:5000/team/gpuquote:0.1.0",
        "redis:7.4.2-alpine3.21@sha256:" + "0" * 64,
    ],
)
def test_pinning_rule_accepts_exact_releases(image: str) -> None:
    assert image_pin_problem(image) is None


@pytest.mark.parametrize(
    "image",
    [
        "redis",
        "redis:latest",
        "redis:7",
        "redis:7-alpine",
        "redis:7.4-alpine",
        "python:3.11-slim",
        "python:slim",
        "registry.example.com:5000/gpuquote",
        "redis@sha256:" + "0" * 64,  # a digest alone says nothing a reader can check
        "redis:7.4.2@sha256:abc",
    ],
)
def test_pinning_rule_rejects_floating_or_missing_tags(image: str) -> None:
    assert image_pin_problem(image) is not None


def dockerfile_bases() -> list[str]:
    stages: set[str] = set()
    bases = []
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", line.strip(), re.IGNORECASE)
        if match:
            if match[1] not in stages:  # FROM <earlier stage> is no image
                bases.append(match[1])
            if match[2]:
                stages.add(match[2])
    return bases


def test_every_image_is_an_exact_release(documents: list[Manifest]) -> None:
    images = {f"k8s {c['name']}": c["image"] for d in documents for c in containers(d)}
    built_here = {service["image"] for service in compose_file()["services"].values() if "build" in service}
    for name, service in compose_file()["services"].items():
        if service["image"] not in built_here:  # gpuquote:local is built from this repository
            images[f"compose {name}"] = service["image"]
    images |= {f"Dockerfile FROM {i}": base for i, base in enumerate(dockerfile_bases())}
    assert len(images) >= 5
    assert {where: problem for where, image in images.items() if (problem := image_pin_problem(image))} == {}


def test_compose_and_kubernetes_run_the_same_redis(documents: list[Manifest]) -> None:
    (redis,) = containers(find(documents, "Deployment", "gpuquote-redis"))
    assert compose_file()["services"]["redis"]["image"] == redis["image"]
    assert COMPOSE.is_file()


def test_app_image_tag_is_the_project_release(pyproject: dict[str, object]) -> None:
    kustomization = load_documents(K8S / "kustomization.yaml")[0]
    (rule,) = [rule for rule in kustomization["images"] if rule["name"] == "gpuquote"]
    project = pyproject["project"]
    assert isinstance(project, dict)
    assert rule["newTag"] == project["version"]
