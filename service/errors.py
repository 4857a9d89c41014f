"""Domain errors, each carrying its HTTP status; mapped to problem details in one place (``service.http``).

Exceptions::

    GpuquoteError
    ├── InvalidRequest        422  a field a caller sent is wrong (names the field and the reason)
    ├── NotFound              404  an offer or vendor id that does not exist
    ├── Unauthorized          401  an admin route called without an API key
    ├── Forbidden             403  an admin route called with a wrong API key
    │   └── AdminDisabled     403  an admin route called while no admin key is configured
    ├── RefreshBusy           409  another refresher holds the lock
    └── StoreUnreachable      503  the price store cannot be read and no snapshot is held
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AdminDisabled",
    "Forbidden",
    "GpuquoteError",
    "InvalidRequest",
    "NotFound",
    "RefreshBusy",
    "StoreUnreachable",
    "Unauthorized",
]


class GpuquoteError(Exception):
    status_code: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class InvalidRequest(GpuquoteError):
    status_code = 422
    title = "Invalid request"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}", field=field)
        self.reason = reason


class NotFound(GpuquoteError):
    status_code = 404
    title = "Not found"


class Unauthorized(GpuquoteError):
    status_code = 401
    title = "API key required"


class Forbidden(GpuquoteError):
    status_code = 403
    title = "API key not accepted"


class AdminDisabled(Forbidden):
    """No key can open an admin route: none is configured (``GPUQUOTE_ADMIN_API_KEYS``)."""

    title = "Admin is disabled"


class RefreshBusy(GpuquoteError):
    status_code = 409
    title = "Refresh already running"


class StoreUnreachable(GpuquoteError):
    status_code = 503
    title = "Price store unreachable"
