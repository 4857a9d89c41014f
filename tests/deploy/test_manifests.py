"""deploy/k8s, offline: the kustomization rendered without the kustomize binary, every document validated
against the Kubernetes JSON schemas bundled with ``kubernetes-validate`` (strict: an unknown or misspelled
field fails), then checked against the service it runs: probe paths, CLI commands, settings, the vendors
file, and the Secret it may only reference.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import kubernetes_validate  # type: ignore[import-untyped]
import msgspec
import pytest

from adapters import ADAPTERS, AdapterContext, build_adapter
from adapters.vendors_file import load_vendors_file
from schemas.vendor import VendorsFile
from tests.deploy.manifests import (
    API_DEPLOYMENT,
    K8S,
    REPO,
    SECRET_EXAMPLE,
    SECRET_NAME,
    Manifest,
    app_containers,
    containers,
    env_entry,
    env_references,
    expand_env,
    find,
    image_pin_problem,
    load_documents,
    pod_template,
    render_kustomization,
    split_image,
)

# The oldest Kubernetes these manifests support, and the newest whose schemas the package bundles.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
SENSITIVE_NAME = re.compile(r"KEY|TOKEN|PASSWORD|SECRET", re.IGNORECASE)

CliProblem = Callable[[Sequence[str]], str | None]


# --- rendering -----------------------------------------------------------------------------------------


def quantity(value: str | int | float) -> float:
    """A Kubernetes resource quantity (``250m``, ``1``, ``768Mi``) as a plain number."""
    units = {"m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30}
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    assert match is not None, f"not a quantity: {value!r}"
    return float(match[1]) * units[match[2]]


@pytest.fixture(scope="module")
def documents() -> list[Manifest]:
    return render_kustomization(K8S)


@pytest.fixture(scope="module")
def api_container(documents: list[Manifest]) -> Manifest:
    deployment = find(documents, "Deployment", API_DEPLOYMENT)
    return next(c for c in containers(deployment) if c["name"] == "api")


@pytest.fixture(scope="module")
def refresh_container(documents: list[Manifest]) -> Manifest:
    return containers(find(documents, "CronJob"))[0]


@pytest.fixture(scope="module")
def settings_data(documents: list[Manifest]) -> dict[str, str]:
    data: dict[str, str] = find(documents, "ConfigMap", "gpuquote-settings")["data"]
    return data


@pytest.fixture(scope="module")
def config_maps(documents: list[Manifest]) -> dict[str, dict[str, str]]:
    return {d["metadata"]["name"]: d["data"] for d in documents if d["kind"] == "ConfigMap"}


def token_variables(documents: list[Manifest]) -> set[str]:
    vendors = msgspec.toml.decode(vendors_data(documents)["vendors.toml"], type=VendorsFile).vendors
    return {vendor.token_env for vendor in vendors if vendor.token_env}


# --- the kustomization and the schemas -------------------------------------------------------------------


def test_kustomization_lists_every_manifest_but_the_secret_example() -> None:
    listed = set(load_documents(K8S / "kustomization.yaml")[0]["resources"])
    on_disk = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert SECRET_EXAMPLE.name not in listed
    assert listed == on_disk - {SECRET_EXAMPLE.name}


def test_render_has_the_whole_service(documents: list[Manifest]) -> None:
    kinds = {document["kind"] for document in documents}
    expected = {
        "ConfigMap",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "CronJob",
        "NetworkPolicy",
        "Ingress",
    }
    assert expected <= kinds
    names = [(document["kind"], document["metadata"]["name"]) for document in documents]
    assert len(names) == len(set(names)), f"duplicate kind/name in {names}"


def test_every_document_validates_against_the_kubernetes_schemas(documents: list[Manifest]) -> None:
    failures = []
    for document in [*documents, *load_documents(SECRET_EXAMPLE)]:
        for version in KUBERNETES_VERSIONS:
            label = f"{document['kind']}/{document['metadata']['name']} on {version}"
            try:
                kubernetes_validate.validate(document, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                failures.append(f"{label}: {'.'.join(map(str, error.path))}: {error.message}")
            except kubernetes_validate.SchemaNotFoundError as error:
                failures.append(f"{label}: {error.message}")
    assert failures == []


def test_schema_validation_rejects_a_misspelled_field(documents: list[Manifest]) -> None:
    deployment = copy.deepcopy(find(documents, "Deployment", API_DEPLOYMENT))
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError, match="livenesProbe"):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


# --- the API Deployment, Service, PDB and HPA -----------------------------------------------------------


def test_api_deployment_probes_and_resources(documents: list[Manifest], api_container: Manifest) -> None:
    assert find(documents, "Deployment", API_DEPLOYMENT)["spec"]["replicas"] == 3
    assert api_container["livenessProbe"]["httpGet"]["path"] == "/health"
    assert api_container["readinessProbe"]["httpGet"]["path"] == "/ready"
    port_names = {port["name"] for port in api_container["ports"]}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert api_container[probe]["httpGet"]["port"] in port_names
    resources = api_container["resources"]
    for resource in ("cpu", "memory"):
        assert quantity(resources["requests"][resource]) <= quantity(resources["limits"][resource])


def test_probe_and_metrics_paths_are_routes_the_app_serves(
    documents: list[Manifest], api_container: Manifest, served_get_paths: frozenset[str]
) -> None:
    probed = {
        api_container[probe]["httpGet"]["path"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe")
    }
    annotations = find(documents, "Service", "gpuquote-metrics")["metadata"]["annotations"]
    assert probed | {annotations["prometheus.io/path"]} <= served_get_paths


def test_service_pdb_and_hpa_select_the_api_pods(documents: list[Manifest], api_container: Manifest) -> None:
    deployment = find(documents, "Deployment", API_DEPLOYMENT)
    selector = deployment["spec"]["selector"]["matchLabels"]
    api_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= api_labels.items()

    service = find(documents, "Service", "gpuquote")
    assert service["spec"]["selector"].items() <= api_labels.items()
    other_pods = [pod_template(d) for d in documents if pod_template(d) is not None and d is not deployment]
    for template in other_pods:
        assert template is not None
        assert not service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    container_ports = {port["name"]: port["containerPort"] for port in api_container["ports"]}
    assert {port["targetPort"] for port in service["spec"]["ports"]} <= container_ports.keys()

    assert find(documents, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == selector

    hpa = find(documents, "HorizontalPodAutoscaler")["spec"]
    target = hpa["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", API_DEPLOYMENT)
    assert hpa["minReplicas"] <= deployment["spec"]["replicas"] <= hpa["maxReplicas"]
    resource_targets = [
        (metric["resource"]["name"], metric["resource"]["target"]["type"])
        for metric in hpa["metrics"]
        if metric["type"] == "Resource"
    ]
    assert resource_targets == [("cpu", "Utilization")]
    assert "cpu" in api_container["resources"]["requests"]  # what a CPU utilization target is a share of


def test_redis_url_reaches_the_bundled_redis_service(
    documents: list[Manifest], config_maps: dict[str, dict[str, str]]
) -> None:
    redis_services = [
        d
        for d in documents
        if d["kind"] == "Service" and d["metadata"]["labels"].get("app.kubernetes.io/component") == "redis"
    ]
    urls = {expand_env(c, config_maps)["GPUQUOTE_REDIS_URL"] for _, c in app_containers(documents)}
    assert len(urls) == 1, "the api and the refresh job must use the same Redis"
    url = urlsplit(urls.pop())
    assert url.scheme in {"redis", "rediss"}
    for service in redis_services:  # none once redis.yaml is dropped for a managed Redis
        assert url.hostname == service["metadata"]["name"]
        assert url.port in {port["port"] for port in service["spec"]["ports"]}


# --- commands, settings and the CronJob -----------------------------------------------------------------


def test_workloads_run_real_cli_commands(documents: list[Manifest], cli_problem: CliProblem) -> None:
    argvs = {c["name"]: [*c["command"], *c["args"]] for _, c in app_containers(documents)}
    assert sorted(argvs) == ["api", "refresh"]
    assert argvs["api"][:2] == ["gpuquote", "serve"]
    assert argvs["refresh"][:2] == ["gpuquote", "refresh"]
    assert [problem for argv in argvs.values() if (problem := cli_problem(argv))] == []


def test_cli_check_rejects_what_the_cli_would_reject(cli_problem: CliProblem) -> None:
    assert cli_problem(["gpuquote", "refresh"]) is None
    assert cli_problem(["gpuquote", "reload"]) is not None
    assert cli_problem(["gpuquote", "serve", "--bind", "0.0.0.0"]) is not None
    assert cli_problem(["python", "-m", "service"]) is not None


def test_api_listens_on_the_port_it_declares(api_container: Manifest) -> None:
    args = api_container["args"]
    assert args[args.index("--host") + 1] == "0.0.0.0"
    assert int(args[args.index("--port") + 1]) == api_container["ports"][0]["containerPort"]


def test_cronjob_refreshes_every_15_minutes_one_at_a_time(
    documents: list[Manifest], settings_data: dict[str, str]
) -> None:
    cronjob = find(documents, "CronJob")["spec"]
    assert cronjob["schedule"] == "*/15 * * * *"
    assert cronjob["concurrencyPolicy"] == "Forbid"
    job = cronjob["jobTemplate"]["spec"]
    assert job["template"]["spec"]["restartPolicy"] in {"Never", "OnFailure"}
    # Killed no later than its Redis refresh lock expires, so no second refresher starts under it.
    assert job["activeDeadlineSeconds"] <= float(settings_data["GPUQUOTE_REFRESH_LOCK_TTL_S"])


def test_a_stopping_pod_ends_inside_its_grace(
    documents: list[Manifest], settings_data: dict[str, str]
) -> None:
    # SIGTERM: requests in flight get SHUTDOWN_TIMEOUT_S, a half-sent body at most BODY_READ_TIMEOUT_S of
    # it; both end before Kubernetes kills the pod (terminationGracePeriodSeconds).
    grace_s = find(documents, "Deployment", API_DEPLOYMENT)["spec"]["template"]["spec"][
        "terminationGracePeriodSeconds"
    ]
    shutdown_s = float(settings_data["GPUQUOTE_SHUTDOWN_TIMEOUT_S"])
    assert float(settings_data["GPUQUOTE_BODY_READ_TIMEOUT_S"]) <= shutdown_s < grace_s


def unknown_settings(
    documents: list[Manifest], known_settings: frozenset[str], tokens: set[str]
) -> list[str]:
    """Every variable the manifests hand the service that it would not read, as ``where: NAME``.

    ``GPUQUOTE_*`` names (in any ConfigMap, and in any container's ``env``) must be ``Settings`` fields or
    vendor token variables; other names in the app containers' ``env`` must be helpers that a later entry
    references as ``$(NAME)`` (such as REDIS_PASSWORD for GPUQUOTE_REDIS_URL).
    """
    problems = []
    for document in documents:
        where = f"{document['kind']}/{document['metadata']['name']}"
        if document["kind"] == "ConfigMap":
            problems += [
                f"{where}: {key}"
                for key in document["data"]
                if key.startswith("GPUQUOTE_") and key not in known_settings
            ]
        for container in containers(document):
            entries = container.get("env", [])
            for index, entry in enumerate(entries):
                name = entry["name"]
                if name.startswith("GPUQUOTE_"):
                    if name not in known_settings | tokens:
                        problems.append(f"{where}/{container['name']}: {name}")
                elif split_image(container["image"])[0].endswith("gpuquote"):
                    later = " ".join(str(e.get("value", "")) for e in entries[index + 1 :])
                    if name not in env_references(later):
                        problems.append(f"{where}/{container['name']}: {name} (not a setting, never used)")
    return problems


def test_settings_are_ones_the_service_reads(
    documents: list[Manifest],
    settings_data: dict[str, str],
    config_maps: dict[str, dict[str, str]],
    known_settings: frozenset[str],
    settings_problem: Callable[[Mapping[str, str]], str | None],
) -> None:
    assert settings_data["GPUQUOTE_REFRESH_INTERVAL_S"] == "0"  # the CronJob refreshes
    assert int(settings_data["GPUQUOTE_RATE_LIMIT_PER_MINUTE"]) > 0
    assert unknown_settings(documents, known_settings, token_variables(documents)) == []
    for _, container in app_containers(documents):
        assert {ref["configMapRef"]["name"] for ref in container["envFrom"]} == {"gpuquote-settings"}
        assert settings_problem(expand_env(container, config_maps)) is None


@pytest.mark.parametrize("kind", ["ConfigMap", "Deployment", "CronJob"])
def test_settings_check_catches_a_variable_the_service_does_not_define(
    documents: list[Manifest], known_settings: frozenset[str], kind: str
) -> None:
    changed = copy.deepcopy(documents)
    name = "GPUQUOTE_REDIS_TIMEOUT_MS"  # plausible, and not a Settings field
    assert name not in known_settings
    target = next(d for d in changed if d["kind"] == kind and d["metadata"]["name"].startswith("gpuquote-"))
    if kind == "ConfigMap":
        target["data"][name] = "500"
    else:
        containers(target)[0]["env"].append({"name": name, "value": "500"})
    assert [problem for problem in unknown_settings(changed, known_settings, set()) if name in problem]


def test_settings_check_catches_an_unused_helper_variable(
    documents: list[Manifest], known_settings: frozenset[str]
) -> None:
    changed = copy.deepcopy(documents)
    container = containers(find(changed, "Deployment", API_DEPLOYMENT))[0]
    container["env"].append({"name": "REDIS_PASWORD", "value": "x"})
    assert unknown_settings(changed, known_settings, token_variables(changed)) == [
        "Deployment/gpuquote-api/api: REDIS_PASWORD (not a setting, never used)"
    ]


def test_every_gpuquote_name_in_the_deploy_files_is_a_setting(
    documents: list[Manifest], known_settings: frozenset[str]
) -> None:
    """Comments and docs included: a README or a commented-out line naming a setting must name a real one.

    ``GPUQUOTE_VENDOR_TOKEN_*`` is the convention for vendor token variables (``token_env``), not a setting.
    """
    mentioned: dict[str, set[str]] = {}
    for path in sorted((REPO / "deploy").rglob("*")):
        if path.is_file() and path.name != ".env":
            for name in re.findall(r"\bGPUQUOTE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")):
                mentioned.setdefault(name, set()).add(path.relative_to(REPO).as_posix())
    assert "GPUQUOTE_STORE_DEADLINE_S" in mentioned
    unknown = {
        name: sorted(paths)
        for name, paths in mentioned.items()
        if name not in known_settings and not name.startswith("GPUQUOTE_VENDOR_TOKEN_")
    }
    assert unknown == {}


# --- the Secret: referenced, never committed ------------------------------------------------------------


def secret_references(container: Manifest) -> Iterator[tuple[str, str | None]]:
    for entry in container.get("env", []):
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        if ref is not None:
            yield ref["name"], ref["key"]
    for source in container.get("envFrom", []):
        if "secretRef" in source:
            yield source["secretRef"]["name"], None


def test_secret_is_only_referenced(documents: list[Manifest], api_container: Manifest) -> None:
    assert [d["metadata"]["name"] for d in documents if d["kind"] == "Secret"] == []
    example = find(load_documents(SECRET_EXAMPLE), "Secret", SECRET_NAME)
    assert all("CHANGE-ME" in value for value in example["stringData"].values())
    references = {ref for _, c in app_containers(documents) for ref in secret_references(c)}
    assert {name for name, _ in references} == {SECRET_NAME}
    assert {key for _, key in references} <= example["stringData"].keys()
    admin = env_entry(api_container, "GPUQUOTE_ADMIN_API_KEYS")
    assert admin is not None
    assert admin["valueFrom"]["secretKeyRef"] == {"name": SECRET_NAME, "key": "admin-api-keys"}


def test_no_secret_values_in_plain_configuration(documents: list[Manifest]) -> None:
    for document in documents:
        if document["kind"] == "ConfigMap":
            assert [key for key in document["data"] if SENSITIVE_NAME.search(key)] == []
        for container in containers(document):
            for entry in container.get("env", []):
                if SENSITIVE_NAME.search(entry["name"]):
                    assert "value" not in entry, f"{entry['name']} must come from a secretKeyRef"
                    assert "secretKeyRef" in entry["valueFrom"]


# --- the vendors file -----------------------------------------------------------------------------------


def vendors_data(documents: list[Manifest]) -> dict[str, str]:
    data: dict[str, str] = find(documents, "ConfigMap", "gpuquote-vendors")["data"]
    return data


def test_vendors_file_is_mounted_where_the_setting_points(documents: list[Manifest]) -> None:
    for workload, container in app_containers(documents):
        setting = env_entry(container, "GPUQUOTE_VENDORS_FILE")
        assert setting is not None, f"{container['name']} does not set GPUQUOTE_VENDORS_FILE"
        path = Path(setting["value"])
        mount = next(m for m in container["volumeMounts"] if Path(m["mountPath"]) == path.parent)
        template = pod_template(workload)
        assert template is not None
        volume = next(v for v in template["spec"]["volumes"] if v["name"] == mount["name"])
        assert volume["configMap"]["name"] == "gpuquote-vendors"
        assert path.name in vendors_data(documents)


def test_vendor_tokens_reach_every_refresher(documents: list[Manifest]) -> None:
    example_keys = find(load_documents(SECRET_EXAMPLE), "Secret", SECRET_NAME)["stringData"].keys()
    tokens = token_variables(documents)
    assert tokens, "the example should show how a vendor token is wired"
    for _, container in app_containers(documents):
        for variable in tokens:
            entry = env_entry(container, variable)
            assert entry is not None, f"{container['name']} lacks {variable}"
            assert entry["valueFrom"]["secretKeyRef"]["name"] == SECRET_NAME
            assert entry["valueFrom"]["secretKeyRef"]["key"] in example_keys


async def test_example_vendors_file_loads_and_its_prices_parse(
    documents: list[Manifest], tmp_path: Path
) -> None:
    for key, body in vendors_data(documents).items():  # the ConfigMap as the pods see it
        (tmp_path / key).write_text(body, encoding="utf-8")
    vendors, base_dir = load_vendors_file(tmp_path / "vendors.toml")
    enabled = [vendor for vendor in vendors if vendor.enabled]
    assert enabled
    assert {vendor.format for vendor in enabled} <= ADAPTERS.keys()

    def no_network(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request to {request.url}")

    context = AdapterContext(base_dir=base_dir)
    async with httpx.AsyncClient(transport=httpx.MockTransport(no_network)) as client:
        for vendor in enabled:
            if vendor.path is None:
                continue  # an HTTP feed: not fetched offline
            result = await build_adapter(vendor, client=client, context=context).fetch()
            rows = json.loads((base_dir / vendor.path).read_text(encoding="utf-8"))["offers"]
            assert result.rejected == []
            assert len(result.offers) == len(rows)
            assert {offer.vendor for offer in result.offers} == {vendor.id}


# --- security -------------------------------------------------------------------------------------------


def dockerfile_uid() -> int:
    users = re.findall(r"^USER\s+(\S+)", (REPO / "deploy" / "Dockerfile").read_text(), re.MULTILINE)
    return int(users[-1].split(":")[0])


def test_pods_run_as_non_root_on_a_read_only_filesystem(documents: list[Manifest]) -> None:
    templates = [(d, t) for d in documents if (t := pod_template(d)) is not None]
    assert len(templates) >= 2
    for workload, template in templates:
        pod = template["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["automountServiceAccountToken"] is False
        for container in containers(workload):
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            assert "limits" in container["resources"]
    # The image's USER, so runAsNonRoot is checked against the UID the image was built for.
    for workload, _ in app_containers(documents):
        app_template = pod_template(workload)
        assert app_template is not None
        assert app_template["spec"]["securityContext"]["runAsUser"] == dockerfile_uid()


def test_app_image_is_one_pinned_image(documents: list[Manifest]) -> None:
    images = {container["image"] for _, container in app_containers(documents)}
    assert len(images) == 1
    (image,) = images
    assert image_pin_problem(image) is None
