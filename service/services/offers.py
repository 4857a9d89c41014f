"""Read-side queries over the snapshot: offers filtered, sorted and paged, one offer, the names filters use.

``GET /offers`` and the MCP ``list_offers`` tool both call ``list_offers`` with an ``OfferFilter`` built from
parameters of the same names, so the two answer alike and refuse alike. Every listed offer is a
``ListedOffer``: the stored offer plus its price per card-hour across pricing models
(``cny_per_card_hour``), the most cards one rental holds (``max_cards``) and ``stale`` by the quote
engine's rule (``service.services.freshness``).

Sorting (``sort``): ``price``, ``memory``, ``cards``, ``stock``, ascending, or with a leading ``-``
descending; ties by offer id, so pages do not shuffle. An offer with unknown stock sorts after every
known stock either way; a cluster with no most nodes holds the most cards. Numeric filters keep the
offers that are known to pass: ``min_available_cards`` leaves out offers whose stock the vendor does not
publish, and the price filters compare the rounded price shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from adapters import GpuCatalog
from schemas.api import ListedOffer, OfferPage, OfferSort
from schemas.offer import (
    Offer,
    PricingKind,
    max_cards_per_rental,
    normalized_cny_per_card_hour,
    pricing_kind,
)
from schemas.vendor import VendorConfig
from service.errors import InvalidRequest, NotFound
from service.names import FieldNames, KnownNames, NameQuery, resolve_names
from service.quote import Snapshot
from service.services.freshness import is_stale, vendor_freshness

__all__ = [
    "OFFER_PAGE_DEFAULT",
    "OFFER_PAGE_MAX",
    "OfferFilter",
    "find_offer",
    "known_names",
    "list_offers",
    "listed_offer",
    "vendor_freshness",
]


# One page size for every surface that lists offers (``GET /offers``, the ``list_offers`` tool).
OFFER_PAGE_DEFAULT = 100
OFFER_PAGE_MAX = 1000


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Which offers to list and in which order; each name filter is an any-of list of names as the caller
    wrote them, each other filter ``None`` when not given."""

    gpus: Sequence[str] = ()
    regions: Sequence[str] = ()
    cities: Sequence[str] = ()
    vendors: Sequence[str] = ()
    pricing: Sequence[PricingKind] = ()
    spot: bool | None = None
    min_cny_per_card_hour: float | None = None
    max_cny_per_card_hour: float | None = None
    min_gpu_memory_gb: int | None = None
    min_cards: int | None = None
    min_available_cards: int | None = None
    sort: OfferSort | None = None


@dataclass(frozen=True, slots=True)
class _Row:
    """An offer with the figures filters and sorting read, worked out once."""

    offer: Offer
    cny_per_card_hour: float  # unrounded, for the order
    shown_cny_per_card_hour: float
    max_cards: int | None


# A millionth of a fen absorbs binary noise (1.005 * 100 is 100.49999999999999): the quote engine's rule.
_FEN_TOLERANCE = 1e-6


def _fen(amount_cny: float) -> float:
    """Half-up to 0.01 CNY, as every amount in a response is (amounts here are positive)."""
    return math.floor(amount_cny * 100 + 0.5 + _FEN_TOLERANCE) / 100


def _row(offer: Offer) -> _Row:
    price = normalized_cny_per_card_hour(offer.pricing)
    return _Row(offer, price, _fen(price), max_cards_per_rental(offer.pricing))


class _RowCache:
    """The rows of the last snapshot listed: a snapshot never changes, and is replaced only when the
    store's version moves, so its figures are worked out once rather than per request (2,000 offers:
    about 2 ms each time)."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._rows: tuple[_Row, ...] = ()

    def rows(self, snapshot: Snapshot) -> tuple[_Row, ...]:
        if snapshot is not self._snapshot:
            self._rows = tuple(_row(offer) for offer in snapshot.offers)
            self._snapshot = snapshot
        return self._rows


_ROWS = _RowCache()


def listed_offer(offer: Offer, *, now: datetime, max_age_s: float) -> ListedOffer:
    """The offer as the read routes show it."""
    row = _row(offer)
    return _listed(row, now, max_age_s)


def _listed(row: _Row, now: datetime, max_age_s: float) -> ListedOffer:
    return ListedOffer(
        **msgspec.structs.asdict(row.offer),
        cny_per_card_hour=row.shown_cny_per_card_hour,
        max_cards=row.max_cards,
        stale=is_stale(row.offer.fetched_at, now, max_age_s),
    )


def _passes(row: _Row, query: OfferFilter, kinds: set[str]) -> bool:
    offer = row.offer
    price = row.shown_cny_per_card_hour
    return (
        (not kinds or pricing_kind(offer.pricing) in kinds)
        and (query.spot is None or offer.spot is query.spot)
        and (query.min_cny_per_card_hour is None or price >= query.min_cny_per_card_hour)
        and (query.max_cny_per_card_hour is None or price <= query.max_cny_per_card_hour)
        and (query.min_gpu_memory_gb is None or offer.gpu_memory_gb >= query.min_gpu_memory_gb)
        and (query.min_cards is None or row.max_cards is None or row.max_cards >= query.min_cards)
        and (
            query.min_available_cards is None
            or (offer.available_cards is not None and offer.available_cards >= query.min_available_cards)
        )
    )


SortKey = tuple[float, float, str]

_SORT_VALUES: dict[str, Callable[[_Row], float | None]] = {
    "price": lambda row: row.cny_per_card_hour,
    "memory": lambda row: float(row.offer.gpu_memory_gb),
    "cards": lambda row: math.inf if row.max_cards is None else float(row.max_cards),
    "stock": lambda row: None if row.offer.available_cards is None else float(row.offer.available_cards),
}


def _sort_key(sort: OfferSort) -> Callable[[_Row], SortKey]:
    descending = sort.startswith("-")
    value_of = _SORT_VALUES[sort.removeprefix("-")]

    def key(row: _Row) -> SortKey:
        value = value_of(row)
        if value is None:  # unknown: after every known value, whichever the direction
            return (1.0, 0.0, row.offer.id)
        return (0.0, -value if descending else value, row.offer.id)

    return key


def _check_price_range(query: OfferFilter) -> None:
    low, high = query.min_cny_per_card_hour, query.max_cny_per_card_hour
    if low is not None and high is not None and low > high:
        raise InvalidRequest(
            "min_cny_per_card_hour", f"must be at most max_cny_per_card_hour ({high:g}), got {low:g}"
        )


def known_names(snapshot: Snapshot, vendors: Sequence[VendorConfig]) -> KnownNames:
    """The names filters may use: the configured vendors, the stored statuses, the snapshot's offers."""
    return KnownNames(vendors=vendors, statuses=snapshot.statuses.values(), offers=snapshot.offers)


def list_offers(
    snapshot: Snapshot,
    query: OfferFilter,
    *,
    catalog: GpuCatalog,
    vendors: Sequence[VendorConfig],
    fields: FieldNames,
    limit: int,
    offset: int,
    now: datetime,
    max_age_s: float,
) -> OfferPage:
    """One page of the snapshot's offers matching every given filter, in the asked order.

    Names resolve by ``service.names``; ``fields`` are the caller's names for the filters, for errors.
    """
    _check_price_range(query)
    names = resolve_names(
        NameQuery(gpus=query.gpus, regions=query.regions, cities=query.cities, vendors=query.vendors),
        known=known_names(snapshot, vendors),
        catalog=catalog,
        fields=fields,
    )
    kinds: set[str] = set(query.pricing)
    rows = [row for row in _ROWS.rows(snapshot) if names.admits(row.offer) and _passes(row, query, kinds)]
    if query.sort is not None:
        rows.sort(key=_sort_key(query.sort))
    return OfferPage(
        items=[_listed(row, now, max_age_s) for row in rows[offset : offset + limit]],
        total=len(rows),
        limit=limit,
        offset=offset,
        snapshot_version=snapshot.version,
        price_max_age_s=max_age_s,
    )


def find_offer(snapshot: Snapshot, offer_id: str) -> Offer:
    try:
        return snapshot.offers_by_id[offer_id]
    except KeyError:
        raise NotFound(f"no offer {offer_id!r}", field="offer_id") from None
