"""Read-side routes: offers, their history, vendor freshness, the GPU catalog, named models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.exceptions import ValidationException
from litestar.params import FromPath, QueryParameter

from adapters.models import NAMED_MODELS
from schemas.api import GpuList, ListedOffer, OfferHistory, OfferPage, OfferSort, VendorList
from schemas.model import ModelList
from schemas.offer import PricingKind
from service.http.problems import problem_responses
from service.names import QUERY_PARAMETERS, NameQuery, resolve_names
from service.services import Services
from service.services.freshness import vendor_freshness
from service.services.offers import (
    OFFER_PAGE_DEFAULT,
    OFFER_PAGE_MAX,
    OfferFilter,
    find_offer,
    known_names,
    list_offers,
    listed_offer,
)

__all__ = ["CatalogController"]

_FILTER_DOC = "Repeat the parameter to match any of several values. Unknown parameters are a 400."
_SINGLE_OFFER_PARAMETERS = frozenset(
    {
        "spot",
        "min_cny_per_card_hour",
        "max_cny_per_card_hour",
        "min_gpu_memory_gb",
        "min_cards",
        "min_available_cards",
        "sort",
        "limit",
        "offset",
    }
)
_OFFER_PARAMETERS = frozenset({"gpu", "region", "city", "vendor", "pricing"}) | _SINGLE_OFFER_PARAMETERS
_SORT_DOC = (
    "Order: price (`cny_per_card_hour`), memory (`gpu_memory_gb`), cards (`max_cards`) or stock "
    "(`available_cards`), ascending; `-price` etc. descending. Ties by offer id; unknown stock last."
)


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
        description="Current offers from every vendor, normalized to one schema, filterable, sortable and "
        "paged. Each carries `cny_per_card_hour` (one price per card-hour across pricing models: a node-hour "
        "with its premiums over its cards, a bundle-hour over its cards, a prepaid period over its hours and "
        "cards), `max_cards` (the most cards one rental holds) and `stale` (fetched or observed longer ago "
        "than the price max age). Each offer is in the city of the data-centre zone its stock is in. "
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
        spot: Annotated[
            bool | None, QueryParameter(description="true: only spot (preemptible); false: no spot")
        ] = None,
        min_cny_per_card_hour: Annotated[
            float | None, QueryParameter(ge=0, description="Lowest `cny_per_card_hour` (CNY)")
        ] = None,
        max_cny_per_card_hour: Annotated[
            float | None, QueryParameter(gt=0, description="Highest `cny_per_card_hour` (CNY)")
        ] = None,
        min_gpu_memory_gb: Annotated[
            int | None, QueryParameter(ge=1, description="Least memory per card, GB")
        ] = None,
        min_cards: Annotated[
            int | None, QueryParameter(ge=1, description="Least `max_cards`: one rental holds this many")
        ] = None,
        min_available_cards: Annotated[
            int | None,
            QueryParameter(ge=0, description="Least stock; offers that publish no stock are left out"),
        ] = None,
        sort: Annotated[OfferSort | None, QueryParameter(description=_SORT_DOC)] = None,
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
            spot=spot,
            min_cny_per_card_hour=min_cny_per_card_hour,
            max_cny_per_card_hour=max_cny_per_card_hour,
            min_gpu_memory_gb=min_gpu_memory_gb,
            min_cards=min_cards,
            min_available_cards=min_available_cards,
            sort=sort,
        )
        return list_offers(
            snapshot,
            query,
            catalog=services.catalog,
            vendors=services.vendors,
            fields=QUERY_PARAMETERS,
            limit=limit,
            offset=offset,
            now=datetime.now(UTC),
            max_age_s=services.settings.price_max_age_s,
        )

    @get(
        "/offers/{offer_id:str}",
        operation_id="get_offer",
        responses=problem_responses(404, 503),
        summary="One offer",
        description="The current normalized offer with this id (`<vendor>:<sku>`), with the same "
        "`cny_per_card_hour`, `max_cards` and `stale` as `GET /offers`.",
    )
    async def get_offer(self, services: Services, offer_id: FromPath[str]) -> ListedOffer:
        offer = find_offer(await services.snapshots.current(), offer_id)
        return listed_offer(offer, now=datetime.now(UTC), max_age_s=services.settings.price_max_age_s)

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
        responses=problem_responses(400, 422, 503),
        summary="Vendor freshness",
        description="Each vendor's last success, last error, offer count, dropped rows, held-back prices "
        "and whether its prices are stale: never fetched, last success or any price it serves older than "
        "the price max age (a static feed's prices are as old as its `observed_at`). `oldest_price_at` and "
        "`oldest_price_age` (in words: `5.5 h`, `700 days`) tell how old its oldest price is, "
        "`stale_offers` how many are past the max age, `cities` where its offers are. " + _FILTER_DOC,
    )
    async def list_vendors(
        self,
        services: Services,
        request: Request[Any, Any, Any],
        vendor: Annotated[list[str] | None, QueryParameter(description="Only this vendor id")] = None,
    ) -> VendorList:
        _reject_unknown_parameters(request, frozenset({"vendor"}))
        snapshot = await services.snapshots.current()
        wanted = resolve_names(
            NameQuery(vendors=vendor or ()),
            known=known_names(snapshot, services.vendors),
            catalog=services.catalog,
            fields=QUERY_PARAMETERS,
        ).vendors
        return vendor_freshness(
            snapshot,
            services.vendors,
            now=datetime.now(UTC),
            max_age_s=services.settings.price_max_age_s,
            only=wanted,
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
