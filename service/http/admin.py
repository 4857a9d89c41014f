"""Admin routes, behind an API key (``X-API-Key``) compared in constant time and never logged."""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, get, post
from litestar.params import HeaderParameter, QueryParameter

from schemas.api import RefreshReport, VendorList
from service.errors import AdminDisabled, Forbidden, Unauthorized
from service.http.problems import problem_responses
from service.services import Services
from service.services.freshness import vendor_freshness

__all__ = ["AdminController", "check_admin_key"]


def check_admin_key(presented: str | None, accepted: tuple[str, ...]) -> None:
    """403 "admin is disabled" while no key is configured (no key could open it, so none is asked for);
    else 401 without a key, 403 with a wrong one. Every accepted key is compared, so timing tells nothing."""
    if not accepted:
        raise AdminDisabled(
            "admin is disabled: no admin API key is configured (set GPUQUOTE_ADMIN_API_KEYS to enable it)"
        )
    if not presented:
        raise Unauthorized("send an admin API key in the X-API-Key header", field="X-API-Key")
    matched = False
    for key in accepted:
        matched |= hmac.compare_digest(presented.encode(), key.encode())
    if not matched:
        raise Forbidden("the API key is not an admin key", field="X-API-Key")


class AdminController(Controller):
    path = "/admin"
    tags = ["admin"]  # noqa: RUF012 - litestar reads a plain list

    @post(
        "/refresh",
        operation_id="refresh_prices",
        responses=problem_responses(400, 401, 403, 409, 422, 503),
        summary="Refresh vendor prices",
        description="Fetch every enabled vendor (or one, with `?vendor=ID`) now. Needs an admin key in "
        "`X-API-Key`. A vendor that fails keeps its previous offers; 409 if a refresh is already running.",
        status_code=200,
    )
    async def refresh(
        self,
        services: Services,
        api_key: Annotated[
            str | None, HeaderParameter(name="X-API-Key", description="An admin API key")
        ] = None,
        vendor: Annotated[str | None, QueryParameter(description="Refresh only this vendor")] = None,
    ) -> RefreshReport:
        check_admin_key(api_key, services.settings.admin_api_keys)
        return await services.refresher.refresh(vendor)

    @get(
        "/vendors",
        operation_id="list_vendors_admin",
        responses=problem_responses(401, 403, 503),
        summary="Vendor freshness with error details",
        description="`GET /vendors` plus each vendor's last error in full (`last_error`), which the public "
        "route leaves out because it can name the feed's hosts and paths. Needs an admin key in `X-API-Key`.",
    )
    async def vendors(
        self,
        services: Services,
        api_key: Annotated[
            str | None, HeaderParameter(name="X-API-Key", description="An admin API key")
        ] = None,
    ) -> VendorList:
        check_admin_key(api_key, services.settings.admin_api_keys)
        return vendor_freshness(
            await services.snapshots.current(),
            services.vendors,
            now=datetime.now(UTC),
            max_age_s=services.settings.price_max_age_s,
            error_detail=True,
        )
