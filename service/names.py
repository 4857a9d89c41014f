"""One resolver for the names callers filter offers by: GPUs, regions, cities and vendors.

``GET /offers``, ``POST /quote`` (and the ``quote`` tool, which decodes the same body) and the
``list_offers`` and ``vendor_status`` tools all resolve their filters here, so a name one surface accepts
every surface accepts, meaning the same offers, and a name one refuses every one refuses with the same
reason. The rules:

- **Case and spaces.** Names match case-insensitively, surrounding spaces ignored: ``" Jiangsu "`` is
  ``jiangsu``, ``JS-SUZHOU-REF`` is ``js-suzhou-ref``. Places may also be written in Chinese (``江苏``,
  ``苏州市``). What comes back is always the canonical id, spelled as the data spells it.
- **GPUs** come from the GPU catalog: a canonical id, or any vendor spelling its normalizer places
  (``"RTX 4090"`` → ``rtx4090``). A name that fits several models is ambiguous, and the reason names them
  (``a100``: ``a100-80g`` (80 GB) or ``a100-40g`` (40 GB)); a name that fits none lists the catalog's ids.
- **Regions, cities and vendors** come from one source, ``KnownNames``: the configured vendors, the
  vendors the store holds a status for, and the snapshot's offers, so a city any offer is in is known (a
  Suzhou vendor's zone in Nanjing makes ``nanjing`` a city). An unknown name lists the valid ones. The
  Chinese names and the region of each city are ``adapters.places``'s.
  While none of a kind is known (nothing configured, nothing loaded) names are taken as written, so the
  answer is an empty result saying nothing is loaded rather than a refusal.
- **Field names.** An error names the field the way the caller wrote it on that surface: the query
  parameter on ``GET /offers`` and ``GET /vendors`` and the argument of the ``list_offers`` and
  ``vendor_status`` tools, which take the same names (``gpu``, ``region``, ``city``, ``vendor``:
  ``QUERY_PARAMETERS``; the tools' earlier plural names when the caller used those); the body field on
  ``POST /quote`` and the ``quote`` tool (``gpus``, ``regions``, ``cities``, ``vendors``:
  ``BODY_FIELDS``). Each caller passes its own ``FieldNames``.

Every refusal is an ``InvalidRequest`` (422) carrying that field name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from adapters.gpus import GpuCatalog, UnknownGpuName
from adapters.places import PLACE_ALIASES, PLACE_NAMES_ZH
from schemas.offer import Offer
from schemas.vendor import VendorConfig, VendorStatus
from service.errors import InvalidRequest

__all__ = [
    "BODY_FIELDS",
    "PLACE_ALIASES",
    "PLACE_NAMES_ZH",
    "QUERY_PARAMETERS",
    "FieldNames",
    "KnownNames",
    "NameQuery",
    "ResolvedNames",
    "gpu_display_name",
    "place_display_name",
    "resolve_gpu",
    "resolve_names",
    "resolve_place",
]


@dataclass(frozen=True, slots=True)
class FieldNames:
    """What each filter is called on one surface, for the field an error names."""

    gpus: str
    regions: str
    cities: str
    vendors: str


QUERY_PARAMETERS = FieldNames(gpus="gpu", regions="region", cities="city", vendors="vendor")
BODY_FIELDS = FieldNames(gpus="gpus", regions="regions", cities="cities", vendors="vendors")


def place_display_name(place: str, lang: str) -> str:
    """A region or city id as prose writes it: ``Suzhou`` in English, 苏州 in Chinese (the id when unknown)."""
    if lang == "zh" and place in PLACE_NAMES_ZH:
        return PLACE_NAMES_ZH[place]
    # A place without a Chinese name is written as English writes it, in Chinese prose too.
    return " ".join(word.capitalize() for word in place.split("-"))


_GPU_NAME_NOISE = ("NVIDIA ", "GeForce ", "Tesla ", " SXM", " PCIe", " PCIE")


def gpu_display_name(gpu_id: str, catalog: GpuCatalog) -> str:
    """The GPU as people say it: ``RTX 4090``, ``H800``, ``A100 80G`` (the memory only where the family comes
    in several sizes); the id for a model the catalog lacks."""
    if gpu_id not in catalog:
        return gpu_id
    model = catalog.get(gpu_id)
    name = model.name
    for noise in _GPU_NAME_NOISE:
        name = name.replace(noise, " " if noise.startswith(" ") else "")
    name = " ".join(name.split()).removesuffix(f" {model.memory_gb}GB")
    family = gpu_id.split("-", 1)[0]
    sizes = {other.memory_gb for other in catalog.models.values() if other.id.split("-", 1)[0] == family}
    return f"{name} {model.memory_gb}G" if len(sizes) > 1 else name


@dataclass(frozen=True, slots=True)
class NameQuery:
    """Names as a caller sent them; each is an any-of list, empty for no filter."""

    gpus: Sequence[str] = ()
    regions: Sequence[str] = ()
    cities: Sequence[str] = ()
    vendors: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class ResolvedNames:
    """Canonical ids per filter; ``None`` where the caller gave no filter."""

    gpus: frozenset[str] | None = None
    regions: frozenset[str] | None = None
    cities: frozenset[str] | None = None
    vendors: frozenset[str] | None = None

    def admits(self, offer: Offer) -> bool:
        """Whether ``offer`` passes every given filter."""
        return (
            (self.gpus is None or offer.gpu in self.gpus)
            and (self.regions is None or offer.region in self.regions)
            and (self.cities is None or offer.city in self.cities)
            and (self.vendors is None or offer.vendor in self.vendors)
        )


class KnownNames:
    """The region, city and vendor names the service knows: the configured vendors, the vendors the store
    holds a status for, and the snapshot's offers.

    Each kind is worked out the first time a filter of that kind asks, since it scans the offers.
    """

    def __init__(
        self,
        *,
        vendors: Iterable[VendorConfig] = (),
        statuses: Iterable[VendorStatus] = (),
        offers: Sequence[Offer] = (),
    ) -> None:
        self._places = (
            *((vendor.id, vendor.region, vendor.city) for vendor in vendors),
            *((status.vendor, status.region, status.city) for status in statuses),
        )
        self._offers = offers

    def _collect(self, position: int, of_offer: Callable[[Offer], str]) -> frozenset[str]:
        names = {place[position] for place in self._places} | {of_offer(offer) for offer in self._offers}
        names.discard("")  # a status written before its vendor's region or city was known
        return frozenset(names)

    @functools.cached_property
    def vendors(self) -> frozenset[str]:
        return self._collect(0, lambda offer: offer.vendor)

    @functools.cached_property
    def regions(self) -> frozenset[str]:
        return self._collect(1, lambda offer: offer.region)

    @functools.cached_property
    def cities(self) -> frozenset[str]:
        return self._collect(2, lambda offer: offer.city)


def _key(name: str) -> str:
    return name.strip().casefold()


def _candidates(name: str, catalog: GpuCatalog) -> list[str]:
    """The catalog models ``name`` could mean once a memory size is added to it, in catalog order."""
    found: set[str] = set()
    for memory_gb in sorted({model.memory_gb for model in catalog.models.values()}):
        try:
            found.add(catalog.normalize(f"{name} {memory_gb}GB"))
        except UnknownGpuName:
            continue
    return [gpu_id for gpu_id in catalog.models if gpu_id in found]


def resolve_gpu(name: str, catalog: GpuCatalog, *, field: str) -> str:
    """The canonical id for the GPU ``name``; ``InvalidRequest`` on ``field`` when it is not exactly one."""
    try:
        return catalog.normalize(name)
    except UnknownGpuName as error:
        candidates = _candidates(name, catalog)
        if len(candidates) > 1:
            models = " or ".join(f"{gpu_id} ({catalog.get(gpu_id).memory_gb} GB)" for gpu_id in candidates)
            raise InvalidRequest(field, f"ambiguous GPU {name!r}: could be {models}") from None
        valid = ", ".join(sorted(catalog.models))
        raise InvalidRequest(field, f"unknown GPU {name!r}: {error.reason}; valid: {valid}") from None


def _place_key(name: str) -> str:
    key = _key(name)
    return PLACE_ALIASES.get(key.removesuffix("省").removesuffix("市"), key)


def resolve_place(name: str, known: Iterable[str]) -> str:
    """Any city, as an id: a ``known`` one as the data spells it, a Chinese name of a major city as its
    pinyin id (上海 → ``shanghai``), any other name as given, lowercased. For where data lives, which
    need not be a city with offers."""
    by_key = {_key(place): place for place in sorted(known, reverse=True)}
    return by_key.get(_key(name)) or by_key.get(_place_key(name)) or _place_key(name)


def _resolve_known(
    values: Sequence[str], known: Callable[[], frozenset[str]], *, field: str, what: str
) -> frozenset[str] | None:
    if not values:
        return None
    valid = sorted(known())
    if not valid:
        # Nothing configured or loaded yet: no name can be judged, and an empty answer says why.
        return frozenset(_place_key(value) for value in values)
    by_key = {_key(name): name for name in reversed(valid)}  # the first spelling wins a case clash
    chosen: set[str] = set()
    unknown: list[str] = []
    for value in values:
        canonical = by_key.get(_key(value)) or by_key.get(_place_key(value))
        if canonical is None:
            unknown.append(value)
        else:
            chosen.add(canonical)
    if unknown:
        listed = ", ".join(map(repr, dict.fromkeys(unknown)))
        raise InvalidRequest(field, f"unknown {what} {listed}; valid: {', '.join(valid)}")
    return frozenset(chosen)


def resolve_names(
    query: NameQuery, *, known: KnownNames, catalog: GpuCatalog, fields: FieldNames
) -> ResolvedNames:
    """Each filter's names as canonical ids, or ``InvalidRequest`` naming the surface's field."""
    gpus = frozenset(resolve_gpu(name, catalog, field=fields.gpus) for name in query.gpus)
    return ResolvedNames(
        gpus=gpus or None,
        regions=_resolve_known(query.regions, lambda: known.regions, field=fields.regions, what="region"),
        cities=_resolve_known(query.cities, lambda: known.cities, field=fields.cities, what="city"),
        vendors=_resolve_known(query.vendors, lambda: known.vendors, field=fields.vendors, what="vendor"),
    )
