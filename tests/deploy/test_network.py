"""Who can reach what: the NetworkPolicies evaluated against the pods the kustomization runs, the Ingress
routed path by path, and /metrics kept to the internal metrics Service.
"""

from __future__ import annotations

import copy

import pytest

from tests.deploy.manifests import (
    K8S,
    External,
    Manifest,
    Pod,
    PolicySet,
    containers,
    find,
    ingress_backend,
    pod_template,
    render_kustomization,
    selects,
)

NAMESPACE = "gpuquote"  # any: the policies name no namespace of their own
INGRESS_CONTROLLER = Pod("ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"})
PROMETHEUS = Pod("monitoring", {"app.kubernetes.io/name": "prometheus"})
KUBE_DNS = Pod("kube-system", {"k8s-app": "kube-dns"})
STRANGER = Pod(NAMESPACE, {"app": "debug-shell"})  # another pod in the same namespace
ELSEWHERE = Pod("default", {"app.kubernetes.io/name": "gpuquote", "app.kubernetes.io/component": "api"})
VENDOR = External("203.0.113.10")  # a public address (TEST-NET-3)
HTTP, REDIS = 8000, 6379

PUBLIC_PREFIXES = ("/quote", "/offers", "/vendors", "/gpus", "/models", "/health", "/schema", "/static")


@pytest.fixture(scope="module")
def documents() -> list[Manifest]:
    return render_kustomization(K8S)


@pytest.fixture(scope="module")
def policies(documents: list[Manifest]) -> PolicySet:
    return PolicySet(NAMESPACE, tuple(d for d in documents if d["kind"] == "NetworkPolicy"))


def workload_pod(documents: list[Manifest], component: str) -> Pod:
    """The pod a workload runs, with its labels and named container ports."""
    (workload,) = [
        d
        for d in documents
        if (t := pod_template(d)) is not None
        and t["metadata"]["labels"].get("app.kubernetes.io/component") == component
    ]
    template = pod_template(workload)
    assert template is not None
    ports = {p["name"]: p["containerPort"] for c in containers(workload) for p in c.get("ports", [])}
    return Pod(NAMESPACE, template["metadata"]["labels"], ports)


@pytest.fixture(scope="module")
def api(documents: list[Manifest]) -> Pod:
    return workload_pod(documents, "api")


@pytest.fixture(scope="module")
def refresh(documents: list[Manifest]) -> Pod:
    return workload_pod(documents, "refresh")


@pytest.fixture(scope="module")
def redis(documents: list[Manifest]) -> Pod:
    return workload_pod(documents, "redis")


# --- NetworkPolicies ------------------------------------------------------------------------------------


def test_every_pod_is_isolated_both_ways(documents: list[Manifest], policies: PolicySet) -> None:
    """A new workload without its own policy fails here rather than running wide open."""
    templates = [t for d in documents if (t := pod_template(d)) is not None]
    assert len(templates) == 3
    for template in templates:
        pod = Pod(NAMESPACE, template["metadata"]["labels"])
        for direction in ("Ingress", "Egress"):
            assert policies.isolating(pod, direction), f"{pod.labels} has no {direction} policy"


def test_api_pods_accept_the_http_port_from_the_ingress_controller_and_prometheus_only(
    policies: PolicySet, api: Pod, refresh: Pod, redis: Pod
) -> None:
    assert api.ports == {"http": HTTP}
    assert policies.allows(INGRESS_CONTROLLER, api, HTTP)
    assert policies.allows(PROMETHEUS, api, HTTP)
    assert not policies.allows(INGRESS_CONTROLLER, api, 9000)
    assert not policies.allows(INGRESS_CONTROLLER, api, HTTP, "UDP")
    for caller in (STRANGER, ELSEWHERE, refresh, redis, Pod("monitoring-evil", {})):
        assert not policies.allows(caller, api, HTTP), caller


def test_refresh_pods_accept_nothing(policies: PolicySet, refresh: Pod, api: Pod) -> None:
    for caller in (INGRESS_CONTROLLER, PROMETHEUS, STRANGER, api):
        assert not policies.allows(caller, refresh, HTTP)


def test_redis_accepts_the_gpuquote_pods_only(
    policies: PolicySet, redis: Pod, api: Pod, refresh: Pod
) -> None:
    assert redis.ports == {"redis": REDIS}
    assert policies.allows(api, redis, REDIS)
    assert policies.allows(refresh, redis, REDIS)
    assert not policies.allows(api, redis, 6380)
    # Not another pod of the namespace, not a look-alike in another namespace, not the controllers.
    for caller in (STRANGER, ELSEWHERE, INGRESS_CONTROLLER, PROMETHEUS):
        assert not policies.allows(caller, redis, REDIS), caller


def test_redis_opens_no_connections(policies: PolicySet, redis: Pod, api: Pod) -> None:
    assert not policies.allows(redis, VENDOR, 443)
    assert not policies.allows(redis, KUBE_DNS, 53, "UDP")
    assert not policies.allows(redis, api, HTTP)


@pytest.mark.parametrize("component", ["api", "refresh"])
def test_app_pods_reach_redis_dns_and_vendors_over_https_only(
    documents: list[Manifest], policies: PolicySet, redis: Pod, component: str
) -> None:
    pod = workload_pod(documents, component)
    assert policies.allows(pod, redis, REDIS)
    assert policies.allows(pod, KUBE_DNS, 53, "UDP")
    assert policies.allows(pod, KUBE_DNS, 53, "TCP")
    assert policies.allows(pod, VENDOR, 443)
    assert policies.allows(pod, External("2001:db8::1"), 443)
    assert not policies.allows(pod, VENDOR, 80)  # vendor feeds are HTTPS
    assert not policies.allows(pod, VENDOR, 53, "UDP")  # DNS goes to the cluster's resolver only
    assert not policies.allows(pod, Pod("kube-system", {"k8s-app": "other"}), 53, "UDP")
    # Not the cloud metadata endpoints (AWS/GCP/Azure, Alibaba Cloud) nor private networks.
    # Also through IPv4-mapped and NAT64 IPv6 forms of the metadata address, and special-use ranges.
    blocked = ("169.254.169.254", "100.100.100.200", "10.1.2.3", "192.168.0.10", "fd00::1", "0.0.0.1",
               "192.0.0.10", "198.18.0.1", "127.0.0.1", "::1", "::ffff:169.254.169.254",
               "64:ff9b::a9fe:a9fe")  # fmt: skip
    for address in blocked:
        assert not policies.allows(pod, External(address), 443), address
    # Nor other pods of the namespace, nor the api pods (a refresh never calls the api).
    assert not policies.allows(pod, STRANGER, HTTP)
    assert not policies.allows(pod, workload_pod(documents, "api"), HTTP)


def test_policy_ports_name_ports_the_selected_pods_declare(
    documents: list[Manifest], policies: PolicySet
) -> None:
    pods = [workload_pod(documents, c) for c in ("api", "refresh", "redis")]
    for policy in policies.policies:
        named = {
            port["port"]
            for rule in policy["spec"].get("ingress", [])
            for port in rule.get("ports", [])
            if isinstance(port["port"], str)
        }
        selected = [pod for pod in pods if selects(policy["spec"]["podSelector"], pod.labels)]
        assert selected, f"{policy['metadata']['name']} selects no pod"
        for pod in selected:
            assert named <= pod.ports.keys()


def test_policy_evaluation_notices_an_open_rule(documents: list[Manifest], redis: Pod) -> None:
    """The model is not vacuous: an ingress rule without `from` opens Redis to every pod."""
    changed = copy.deepcopy([d for d in documents if d["kind"] == "NetworkPolicy"])
    redis_policy = next(p for p in changed if p["metadata"]["name"] == "gpuquote-redis")
    del redis_policy["spec"]["ingress"][0]["from"]
    assert PolicySet(NAMESPACE, tuple(changed)).allows(ELSEWHERE, redis, REDIS)


# --- the Ingress and /metrics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/quote",
        "/offers",
        "/offers/js-suzhou-ref:4090/history",
        "/vendors",
        "/gpus",
        "/models",
        "/health",
        "/schema",
        "/schema/openapi.json",
        "/static/explorer.js",
    ],
)
def test_ingress_routes_the_public_paths(documents: list[Manifest], path: str) -> None:
    backend = ingress_backend(find(documents, "Ingress"), path)
    assert backend == {"service": {"name": "gpuquote", "port": {"name": "http"}}}


@pytest.mark.parametrize(
    "path",
    ["/metrics", "/metrics/", "/admin/refresh", "/admin", "/ready", "/quotes", "/healthz", "/index.html"],
)
def test_ingress_does_not_route_operator_paths(documents: list[Manifest], path: str) -> None:
    assert ingress_backend(find(documents, "Ingress"), path) is None


def test_ingress_lists_only_public_prefixes(documents: list[Manifest]) -> None:
    ingress = find(documents, "Ingress")
    entries = [(e["path"], e["pathType"]) for rule in ingress["spec"]["rules"] for e in rule["http"]["paths"]]
    assert ("/", "Exact") in entries  # a "/" Prefix would route everything, /metrics included
    assert {path for path, _ in entries} == {"/", *PUBLIC_PREFIXES}
    assert ingress["spec"].get("defaultBackend") is None


def test_ingress_backend_is_the_public_service_port(documents: list[Manifest]) -> None:
    service = find(documents, "Service", "gpuquote")
    port_names = {port["name"] for port in service["spec"]["ports"]}
    for rule in find(documents, "Ingress")["spec"]["rules"]:
        for entry in rule["http"]["paths"]:
            assert entry["backend"]["service"]["name"] == "gpuquote"
            assert entry["backend"]["service"]["port"]["name"] in port_names


def test_ingress_controller_is_the_one_the_policy_admits(
    documents: list[Manifest], policies: PolicySet
) -> None:
    ingress_class = find(documents, "Ingress")["spec"]["ingressClassName"]
    assert ingress_class == "nginx"
    assert INGRESS_CONTROLLER.namespace == "ingress-nginx"


def test_every_app_route_is_either_public_or_internal(
    documents: list[Manifest], served_paths: frozenset[str]
) -> None:
    """A new route must be placed: routed by the Ingress, or on the internal list here."""
    ingress = find(documents, "Ingress")
    internal = {"/metrics", "/ready"}
    assert internal <= served_paths
    for path in served_paths:
        routed = ingress_backend(ingress, path.replace("{", "x").replace("}", "x")) is not None
        is_internal = path in internal or path == "/admin" or path.startswith("/admin/")
        assert routed != is_internal, f"{path}: {'routed' if routed else 'not routed'} by the Ingress"


def test_nothing_is_exposed_outside_the_cluster_but_the_ingress(documents: list[Manifest]) -> None:
    for service in (d for d in documents if d["kind"] == "Service"):
        assert service["spec"].get("type", "ClusterIP") == "ClusterIP", service["metadata"]["name"]
        assert "externalIPs" not in service["spec"]
    for workload in documents:
        template = pod_template(workload)
        if template is not None:
            assert not template["spec"].get("hostNetwork", False)
            assert all("hostPort" not in p for c in containers(workload) for p in c.get("ports", []))


def test_prometheus_scrapes_the_metrics_service_not_the_public_one(
    documents: list[Manifest], served_get_paths: frozenset[str]
) -> None:
    public = find(documents, "Service", "gpuquote")
    assert not any(key.startswith("prometheus.io/") for key in public["metadata"].get("annotations", {}))
    assert public["metadata"]["labels"]["app.kubernetes.io/component"] != "metrics"

    metrics = find(documents, "Service", "gpuquote-metrics")
    assert metrics["spec"]["type"] == "ClusterIP"
    assert metrics["metadata"]["labels"]["app.kubernetes.io/component"] == "metrics"  # ServiceMonitor key
    assert metrics["spec"]["selector"] == public["spec"]["selector"]  # the api pods, all of them
    annotations = metrics["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert annotations["prometheus.io/path"] in served_get_paths
    api = find(documents, "Deployment", "gpuquote-api")
    container_ports = {p["name"]: p["containerPort"] for c in containers(api) for p in c["ports"]}
    (port,) = metrics["spec"]["ports"]
    assert container_ports[port["targetPort"]] == int(annotations["prometheus.io/port"])
    # Scraped once: through the Service, not also by pod annotations.
    pod_annotations = api["spec"]["template"]["metadata"].get("annotations", {})
    assert not any(key.startswith("prometheus.io/") for key in pod_annotations)
