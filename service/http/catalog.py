"""Read-side routes: offers, their history, vendor freshness, the GPU catalog."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from schemas.api import GpuList, OfferHistory, OfferPage, VendorList
from schemas.offer import Offer, PricingKind
from service.http.problems import problem_responses
from service.names import QUERY_PARAMETERS
from service.services import Services
from service.services.offers import (
    OFFER_PAGE_DEFAULT,
    OFFER_PAGE_MAX,
    OfferFilter,
    find_offer,
    list_offers,
    vendor_freshness,
)

__all__ = ["CatalogController"]

_FILTER_DOC = "Repeat the parameter to match any of several values."


class CatalogController(Controller):
    tags = ["catalog"]  # noqa: RUF012 - litestar reads a plain list

    @get(
        "/offers",
        operation_id="list_offers",
        responses=problem_responses(400, 422, 503),
        summary="List normalized offers",
        description="Current offers from every vendor, normalized to one schema, filterable and paged. "
        + _FILTER_DOC,
    )
    async def list_offers(
        self,
        services: Services,
        gpu: Annotated[
            list[str] | None, QueryParameter(description="GPU id or vendor spelling, e.g. rtx4090")
        ] = None,
        region: Annotated[list[str] | None, QueryParameter(description="Region, e.g. jiangsu")] = None,
        vendor: Annotated[list[str] | None, QueryParameter(description="Vendor id")] = None,
        pricing: Annotated[list[PricingKind] | None, QueryParameter(description="Pricing model")] = None,
        limit: Annotated[
            int, QueryParameter(ge=1, le=OFFER_PAGE_MAX, description="Page size")
        ] = OFFER_PAGE_DEFAULT,
        offset: Annotated[int, QueryParameter(ge=0, description="Items to skip")] = 0,
    ) -> OfferPage:
        snapshot = await services.snapshots.current()
        query = OfferFilter(gpus=gpu or (), regions=region or (), vendors=vendor or (), pricing=pricing or ())
        return list_offers(
            snapshot,
            query,
            catalog=services.catalog,
            vendors=services.vendors,
            fields=QUERY_PARAMETERS,
            limit=limit,
            offset=offset,
        )

    @get(
        "/offers/{offer_id:str}",
        operation_id="get_offer",
        responses=problem_responses(404, 503),
        summary="One offer",
        description="The current normalized offer with this id (`<vendor>:<sku>`).",
    )
    async def get_offer(self, services: Services, offer_id: FromPath[str]) -> Offer:
        return find_offer(await services.snapshots.current(), offer_id)

    @get(
        "/offers/{offer_id:str}/history",
        operation_id="get_offer_history",
        responses=problem_responses(400, 404, 503),
        summary="An offer's price changes",
        description="Each price the offer had, oldest first: new, changed and removed entries.",
    )
    async def get_offer_history(
        self,
        services: Services,
        offer_id: FromPath[str],
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Newest entries to return")] = 100,
    ) -> OfferHistory:
        changes = await services.store.history(offer_id, limit=limit)
        if not changes:
            find_offer(await services.snapshots.current(), offer_id)
        return OfferHistory(offer_id=offer_id, changes=changes)

    @get(
        "/vendors",
        operation_id="list_vendors",
        responses=problem_responses(503),
        summary="Vendor freshness",
        description="Each vendor's last success, last error, offer count, dropped rows, held-back prices "
        "and whether its prices are stale.",
    )
    async def list_vendors(self, services: Services) -> VendorList:
        snapshot = await services.snapshots.current()
        return vendor_freshness(
            snapshot, services.vendors, now=datetime.now(UTC), max_age_s=services.settings.price_max_age_s
        )

    @get(
        "/gpus",
        operation_id="list_gpus",
        summary="GPU catalog",
        description="Canonical GPU ids with memory and a performance index relative to an RTX 4090.",
    )
    async def list_gpus(self, services: Services) -> GpuList:
        return GpuList(gpus=list(services.catalog.models.values()))
