"""What the commands that load the service exit 2 for: configuration (the settings, the vendors file, a
refused input) or the store; 1 stays "a vendor failed" for schedulers to tell apart."""

from __future__ import annotations

from adapters.vendors_file import VendorsFileError
from service.errors import GpuquoteError
from service.settings import SettingsError
from service.store.base import StoreUnavailable

__all__ = ["EXIT_2_ERRORS"]

EXIT_2_ERRORS: tuple[type[Exception], ...] = (
    SettingsError,
    VendorsFileError,
    GpuquoteError,
    StoreUnavailable,
)
