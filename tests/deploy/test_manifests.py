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
from typing import Any
from urllib.parse import urlsplit

import httpx
import kubernetes_validate  # type: ignore[import-untyped]
import msgspec
import pytest
import yaml

from adapters import ADAPTERS, AdapterContext, build_adapter
from adapters.vendors_file import load_vendors_file
from schemas.vendor import VendorsFile

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
SECRET_EXAMPLE = K8S / "secret.example.yaml"
# The oldest Kubernetes these manifests support, and the newest whose schemas the package bundles.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
API_DEPLOYMENT = "gpuquote-api"
SECRET_NAME = "gpuquote-secrets"
SENSITIVE_NAME = re.compile(r"KEY|TOKEN|PASSWORD|SECRET", re.IGNORECASE)

Manifest = dict[str, Any]
CliProblem = Callable[[Sequence[str]], str | None]


# --- rendering -----------------------------------------------------------------------------------------


def load_documents(path: Path) -> list[Manifest]:
    with path.open(encoding="utf-8") as file:
        return [document for document in yaml.safe_load_all(file) if document]


def split_image(image: str) -> tuple[str, str]:
    """``host:5000/team/app:1.2`` → (``host:5000/team/app``, ``:1.2``); a digest stays ``@sha256:...``."""
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, "@" + digest
    colon = image.rfind(":")
    if colon > image.rfind("/"):
        return image[:colon], image[colon:]
    return image, ""


def pod_template(document: Manifest) -> Manifest | None:
    if document["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}:
        template: Manifest = document["spec"]["template"]
        return template
    if document["kind"] == "CronJob":
        job_template: Manifest = document["spec"]["jobTemplate"]["spec"]["template"]
        return job_template
    return None


def containers(document: Manifest) -> list[Manifest]:
    template = pod_template(document)
    if template is None:
        return []
    return [*template["spec"].get("initContainers", []), *template["spec"]["containers"]]


def render_kustomization(directory: Path) -> list[Manifest]:
    """``kustomize build`` for the subset this repository uses: ``resources`` files and ``images``.

    Any other kustomize feature fails here instead of being silently skipped.
    """
    kustomization = load_documents(directory / "kustomization.yaml")[0]
    unsupported = set(kustomization) - {"apiVersion", "kind", "resources", "images"}
    assert not unsupported, f"kustomization.yaml uses {sorted(unsupported)}: extend render_kustomization"
    documents: list[Manifest] = []
    for entry in kustomization["resources"]:
        path = directory / entry
        assert path.is_file(), f"kustomization.yaml lists {entry!r}, which is not a file in {directory}"
        documents.extend(load_documents(path))
    for rule in kustomization.get("images", []):
        for container in (c for document in documents for c in containers(document)):
            name, reference = split_image(container["image"])
            if name != rule["name"]:
                continue
            if "digest" in rule:
                reference = "@" + rule["digest"]
            elif "newTag" in rule:
                reference = ":" + str(rule["newTag"])
            container["image"] = rule.get("newName", name) + reference
    return documents


def find(documents: list[Manifest], kind: str, name: str | None = None) -> Manifest:
    matches = [
        document
        for document in documents
        if document["kind"] == kind and name in (None, document["metadata"]["name"])
    ]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def app_containers(documents: list[Manifest]) -> Iterator[tuple[Manifest, Manifest]]:
    """(workload, container) for every container running the gpuquote image."""
    for document in documents:
        for container in containers(document):
            if split_image(container["image"])[0].rsplit("/", 1)[-1] == "gpuquote":
                yield document, container


def env_entry(container: Manifest, name: str) -> Manifest | None:
    return next((entry for entry in container.get("env", []) if entry["name"] == name), None)


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
    annotations = find(documents, "Deployment", API_DEPLOYMENT)["spec"]["template"]["metadata"]["annotations"]
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
    documents: list[Manifest], settings_data: dict[str, str]
) -> None:
    redis_services = [
        d
        for d in documents
        if d["kind"] == "Service" and d["metadata"]["labels"].get("app.kubernetes.io/component") == "redis"
    ]
    url = urlsplit(settings_data["GPUQUOTE_REDIS_URL"])
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


def test_settings_are_ones_the_service_reads(
    documents: list[Manifest],
    settings_data: dict[str, str],
    known_settings: frozenset[str],
    settings_problem: Callable[[Mapping[str, str]], str | None],
) -> None:
    assert settings_data.keys() <= known_settings
    assert settings_data["GPUQUOTE_REFRESH_INTERVAL_S"] == "0"  # the CronJob refreshes
    assert int(settings_data["GPUQUOTE_RATE_LIMIT_PER_MINUTE"]) > 0
    vendors = msgspec.toml.decode(vendors_data(documents)["vendors.toml"], type=VendorsFile).vendors
    token_variables = {vendor.token_env for vendor in vendors if vendor.token_env}
    for _, container in app_containers(documents):
        assert {ref["configMapRef"]["name"] for ref in container["envFrom"]} == {"gpuquote-settings"}
        direct = {entry["name"] for entry in container.get("env", [])}
        assert direct <= known_settings | token_variables
        environ = settings_data | {e["name"]: e.get("value", "secret") for e in container.get("env", [])}
        assert settings_problem(environ) is None


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
    vendors = msgspec.toml.decode(vendors_data(documents)["vendors.toml"], type=VendorsFile).vendors
    example_keys = find(load_documents(SECRET_EXAMPLE), "Secret", SECRET_NAME)["stringData"].keys()
    token_variables = {vendor.token_env for vendor in vendors if vendor.token_env}
    assert token_variables, "the example should show how a vendor token is wired"
    for _, container in app_containers(documents):
        for variable in token_variables:
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
    assert split_image(image)[1] not in {"", ":latest"}
