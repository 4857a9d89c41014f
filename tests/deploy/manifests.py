"""Offline models of what the deployment files mean: a kustomize render, Kubernetes env expansion, image
references, label selectors, NetworkPolicy and Ingress path matching, compose interpolation.

Shared by the tests in this folder; small enough to read, strict enough that an unsupported construct fails
instead of being skipped.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
SECRET_EXAMPLE = K8S / "secret.example.yaml"
SECRET_NAME = "gpuquote-secrets"
API_DEPLOYMENT = "gpuquote-api"

Manifest = dict[str, Any]


# --- rendering -----------------------------------------------------------------------------------------


def load_documents(path: Path) -> list[Manifest]:
    with path.open(encoding="utf-8") as file:
        return [document for document in yaml.safe_load_all(file) if document]


@dataclass(frozen=True)
class ImageRef:
    """``registry:5000/team/app:1.2.3@sha256:...`` taken apart."""

    repository: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, image: str) -> ImageRef:
        rest, _, digest = image.partition("@")
        colon = rest.rfind(":")
        if colon > rest.rfind("/"):
            return cls(rest[:colon], rest[colon + 1 :], digest or None)
        return cls(rest, None, digest or None)

    def __str__(self) -> str:
        tag = f":{self.tag}" if self.tag else ""
        digest = f"@{self.digest}" if self.digest else ""
        return f"{self.repository}{tag}{digest}"


def split_image(image: str) -> tuple[str, str]:
    """``host:5000/team/app:1.2@sha256:..`` → (``host:5000/team/app``, ``:1.2@sha256:..``)."""
    ref = ImageRef.parse(image)
    return ref.repository, image[len(ref.repository) :]


# An exact release: major.minor.patch, optionally followed by a variant (-alpine3.21, -slim-bookworm).
EXACT_RELEASE_TAG = re.compile(r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def image_pin_problem(image: str) -> str | None:
    """Why an image reference is not pinned to one release, or None.

    A tag is required and must name an exact release (``7.4.2-alpine3.21``, not ``7-alpine``, ``3.11-slim``
    or ``latest``); a digest may follow it and must then be a full ``sha256:`` digest.
    """
    ref = ImageRef.parse(image)
    if ref.tag is None:
        return f"{image}: no tag (an implicit :latest)"
    if not EXACT_RELEASE_TAG.fullmatch(ref.tag):
        return f"{image}: tag {ref.tag!r} floats; use an exact release such as 1.2.3 or 1.2.3-alpine3.21"
    if ref.digest is not None and not DIGEST.fullmatch(ref.digest):
        return f"{image}: digest {ref.digest!r} is not sha256:<64 hex digits>"
    return None


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
            ref = ImageRef.parse(container["image"])
            if ref.repository != rule["name"]:
                continue
            tag = str(rule["newTag"]) if "newTag" in rule else ref.tag
            digest = rule.get("digest", ref.digest if "newTag" not in rule else None)
            container["image"] = str(ImageRef(rule.get("newName", ref.repository), tag, digest))
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


def secret_stand_in(key: str) -> str:
    """What a test puts where a Secret's value would be: recognisable, and URL-safe like a real one."""
    return f"from-secret-{key}"


_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def expand_env(container: Manifest, config_maps: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The environment Kubernetes gives a container: ``envFrom`` ConfigMaps, then ``env`` in order.

    ``$(NAME)`` expands only to a variable defined before it (an unknown reference stays as written, as in
    Kubernetes) and ``$$`` is a literal ``$``. Secret values are ``secret_stand_in(key)``.
    """
    environ: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            environ.update(config_maps[source["configMapRef"]["name"]])
    for entry in container.get("env", []):
        if "value" in entry:
            defined = dict(environ)

            def replace(match: re.Match[str], defined: dict[str, str] = defined) -> str:
                if match[0] == "$$":
                    return "$"
                return defined.get(match[1], match[0])

            environ[entry["name"]] = _REFERENCE.sub(replace, str(entry["value"]))
        else:
            ref = entry["valueFrom"]["secretKeyRef"]
            environ[entry["name"]] = secret_stand_in(ref["key"])
    return environ


def env_references(value: str) -> set[str]:
    return {match[1] for match in _REFERENCE.finditer(value) if match[1]}


# --- label selectors, NetworkPolicy, Ingress -----------------------------------------------------------


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector (``matchLabels``, ``matchExpressions``); ``{}`` selects everything."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if operator == "In":
            matched = present and labels[key] in values
        elif operator == "NotIn":
            matched = not present or labels[key] not in values
        elif operator == "Exists":
            matched = present
        elif operator == "DoesNotExist":
            matched = not present
        else:
            raise AssertionError(f"unknown selector operator {operator!r}")
        if not matched:
            return False
    return True


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: Mapping[str, str]
    ports: Mapping[str, int] = field(default_factory=dict)  # named container ports


@dataclass(frozen=True)
class External:
    ip: str


Peer = Pod | External


def namespace_labels(name: str) -> dict[str, str]:
    return {"kubernetes.io/metadata.name": name}


@dataclass(frozen=True)
class PolicySet:
    """The NetworkPolicies of one namespace, evaluated as the Kubernetes API defines them.

    A connection is allowed when the source may send it (no Egress policy selects the source, or one
    allows it) and the destination may accept it (likewise for Ingress). Pods match ``ipBlock`` never
    (the API leaves that to the plugin; the tests do not rely on it).
    """

    namespace: str
    policies: tuple[Manifest, ...]

    def allows(self, source: Peer, destination: Peer, port: int, protocol: str = "TCP") -> bool:
        return self._side(source, destination, port, protocol, "Egress") and self._side(
            destination, source, port, protocol, "Ingress"
        )

    def isolating(self, pod: Pod, direction: str) -> list[Manifest]:
        if pod.namespace != self.namespace:
            return []
        return [
            policy
            for policy in self.policies
            if direction in _policy_types(policy) and selects(policy["spec"]["podSelector"], pod.labels)
        ]

    def _side(self, subject: Peer, other: Peer, port: int, protocol: str, direction: str) -> bool:
        if isinstance(subject, External):
            return True
        policies = self.isolating(subject, direction)
        if not policies:
            return True
        # Named ports are the destination pod's: the subject's on ingress, the other peer's on egress.
        destination = subject if direction == "Ingress" else other
        named = destination.ports if isinstance(destination, Pod) else {}
        key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        return any(
            _peers_match(rule.get(peers_key), other, self.namespace)
            and _ports_match(rule.get("ports"), port, protocol, named)
            for policy in policies
            for rule in policy["spec"].get(key, []) or []
        )


def _policy_types(policy: Manifest) -> list[str]:
    spec = policy["spec"]
    if "policyTypes" in spec:
        types: list[str] = spec["policyTypes"]
        return types
    return ["Ingress", *(["Egress"] if "egress" in spec else [])]


def _peers_match(peers: list[Manifest] | None, other: Peer, namespace: str) -> bool:
    if not peers:
        return True
    for peer in peers:
        if "ipBlock" in peer:
            if isinstance(other, External) and _in_block(other.ip, peer["ipBlock"]):
                return True
            continue
        if not isinstance(other, Pod):
            continue
        if "namespaceSelector" in peer:
            namespace_ok = selects(peer["namespaceSelector"], namespace_labels(other.namespace))
        else:
            namespace_ok = other.namespace == namespace
        if namespace_ok and selects(peer.get("podSelector", {}), other.labels):
            return True
    return False


def _in_block(ip: str, block: Manifest) -> bool:
    address = ipaddress.ip_address(ip)
    network = ipaddress.ip_network(block["cidr"])
    if address.version != network.version or address not in network:
        return False
    return not any(
        address in ipaddress.ip_network(excluded)
        for excluded in block.get("except", [])
        if ipaddress.ip_network(excluded).version == address.version
    )


def _ports_match(ports: list[Manifest] | None, port: int, protocol: str, named: Mapping[str, int]) -> bool:
    if not ports:
        return True
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        declared: int | str | None = entry.get("port")
        if declared is None:
            return True
        if isinstance(declared, str):
            if named.get(declared) == port:
                return True
        elif declared <= port <= int(entry.get("endPort", declared)):
            return True
    return False


def ingress_backend(ingress: Manifest, path: str) -> Manifest | None:
    """The backend an Ingress sends ``path`` to, by the API's rules: Exact, then the longest Prefix.

    Prefix matches whole ``/``-separated elements: ``/quote`` matches ``/quote`` and ``/quote/x``, not
    ``/quotes``. ``ImplementationSpecific`` is refused: its meaning depends on the controller.
    """
    best: tuple[int, Manifest] | None = None
    for rule in ingress["spec"]["rules"]:
        for entry in rule["http"]["paths"]:
            kind, pattern = entry["pathType"], entry["path"]
            assert kind in {"Exact", "Prefix"}, f"{pattern}: pathType {kind} has no portable meaning"
            if kind == "Exact":
                if path == pattern:
                    return dict(entry["backend"])
                continue
            elements = [part for part in pattern.split("/") if part]
            requested = [part for part in path.split("/") if part]
            if requested[: len(elements)] == elements and (best is None or len(elements) > best[0]):
                best = (len(elements), entry["backend"])
    return None if best is None else dict(best[1])


# --- compose --------------------------------------------------------------------------------------------

_COMPOSE_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z0-9_]+)(?:(:-|:\?)([^}]*))?\}")


def compose_interpolate(value: str, environ: Mapping[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR:?error}`` and ``$$`` against ``environ``."""

    def replace(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        name, operator, argument = match[1], match[2], match[3]
        value = environ.get(name, "")
        if value:
            return value
        if operator == ":-":
            return str(argument)
        if operator == ":?":
            raise ValueError(f"compose refuses to start: {argument}")
        return ""

    return _COMPOSE_VARIABLE.sub(replace, value)


def compose_file() -> Manifest:
    with COMPOSE.open(encoding="utf-8") as file:
        document: Manifest = yaml.safe_load(file)
    return document
