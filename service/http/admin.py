"""Admin routes, behind an API key (``X-API-Key``) compared in constant time and never logged."""

from __future__ import annotations

import hmac
from typing import Annotated

from litestar import Controller, post
from litestar.params import HeaderParameter, QueryParameter

from schemas.api import RefreshReport
from service.errors import Forbidden, Unauthorized
from service.http.problems import problem_responses
from service.services import Services

__all__ = ["AdminController", "check_admin_key"]


def check_admin_key(presented: str | None, accepted: tuple[str, ...]) -> None:
    """401 without a key, 403 with a wrong one. Every accepted key is compared, so timing tells nothing."""
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
