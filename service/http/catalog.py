"""Read-side routes: offers, their history, vendor freshness, the GPU catalog, named models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.exceptions import ValidationException
from litestar.params import FromPath, QueryParameter

from adapters.models import NAMED_MODELS
from schemas.api import GpuList, OfferHistory, OfferPage, VendorList
from schemas.model import ModelList
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

_FILTER_DOC = "Repeat the parameter to match any of several values. Unknown parameters are a 400."
_OFFER_PARAMETERS = frozenset({"gpu", "region", "city", "vendor", "pricing", "limit", "offset"})
_SINGLE_OFFER_PARAMETERS = frozenset({"limit", "offset"})


def _reject_unknown_parameters(
    request: Request[Any, Any, Any],
    known: frozenset[str] = frozenset(),
    *,
    single: frozenset[str] = frozenset(),
) -> None:
    """A misspelt filter (``?gpus=h800``) would otherwise be ignored and answer with every offer, and a
    ``single`` parameter given twice (``?limit=10&limit=20``) would silently take the last value."""
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        valid = f"valid: {', '.join(sorted(known))}" if known else "this route takes none"
        raise ValidationException(
            detail=f"unknown query parameter(s): {', '.join(unknown)}",
            extra=[
                {"key": name, "message": f"unknown query parameter; {valid}", "source": "query"}
                for name in unknown
            ],
        )
    repeated = sorted(name for name in single if len(request.query_params.getall(name, [])) > 1)
    if repeated:
        raise ValidationException(
            detail=f"query parameter(s) given twice: {', '.join(repeated)}",
            extra=[
                {"key": name, "message": "given twice: give it once", "source": "query"} for name in repeated
            ],
        )


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
        request: Request[Any, Any, Any],
        gpu: Annotated[
            list[str] | None, QueryParameter(description="GPU id or vendor spelling, e.g. rtx4090")
        ] = None,
        region: Annotated[
            list[str] | None, QueryParameter(description="Region, e.g. jiangsu or 江苏")
        ] = None,
        city: Annotated[list[str] | None, QueryParameter(description="City, e.g. suzhou or 苏州")] = None,
        vendor: Annotated[list[str] | None, QueryParameter(description="Vendor id")] = None,
        pricing: Annotated[list[PricingKind] | None, QueryParameter(description="Pricing model")] = None,
        limit: Annotated[
            int, QueryParameter(ge=1, le=OFFER_PAGE_MAX, description="Page size")
        ] = OFFER_PAGE_DEFAULT,
        offset: Annotated[int, QueryParameter(ge=0, description="Items to skip")] = 0,
    ) -> OfferPage:
        _reject_unknown_parameters(request, _OFFER_PARAMETERS, single=_SINGLE_OFFER_PARAMETERS)
        snapshot = await services.snapshots.current()
        query = OfferFilter(
            gpus=gpu or (),
            regions=region or (),
            cities=city or (),
            vendors=vendor or (),
            pricing=pricing or (),
        )
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
        responses=problem_responses(404, 422, 503),
        summary="An offer's price changes",
        description="Each price the offer had, oldest first: new, changed and removed entries.",
    )
    async def get_offer_history(
        self,
        services: Services,
        offer_id: FromPath[str],
        limit: Annotated[int, QueryParameter(ge=1, le=1000, description="Newest entries to return")] = 100,
    ) -> OfferHistory:
        changes = await services.history(offer_id, limit=limit)
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
        responses=problem_responses(400),
        summary="GPU catalog",
        description="Canonical GPU ids with memory, the peak performance index and the relative speed "
        "`{low, expected, high}` to an RTX 4090 with the sources of each end.",
    )
    async def list_gpus(self, services: Services, request: Request[Any, Any, Any]) -> GpuList:
        _reject_unknown_parameters(request)
        return GpuList(gpus=list(services.catalog.models.values()))

    @get(
        "/models",
        operation_id="list_models",
        responses=problem_responses(400),
        summary="Named models",
        description="Widely used open models by name, with their parameter counts (total, and active for "
        "mixture-of-experts models) from their model cards. `workload.model` in `POST /quote` takes these "
        "names; memory is sized on the total parameters.",
    )
    async def list_models(self, request: Request[Any, Any, Any]) -> ModelList:
        _reject_unknown_parameters(request)
        return ModelList(models=list(NAMED_MODELS))
