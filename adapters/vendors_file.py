"""Loading the vendors file (TOML). Paths inside it are relative to the file itself."""

from __future__ import annotations

from pathlib import Path

import msgspec

from schemas.vendor import VendorConfig, VendorsFile

__all__ = ["VendorsFileError", "load_vendors_file"]


class VendorsFileError(ValueError):
    """The vendors file is missing, not TOML, or not a valid vendors list."""


def load_vendors_file(path: Path) -> tuple[list[VendorConfig], Path]:
    """The enabled and disabled vendors in file order, and the folder their relative paths start from."""
    try:
        body = path.read_bytes()
    except OSError as error:
        raise VendorsFileError(f"cannot read vendors file {path}: {error.strerror}") from error
    try:
        parsed = msgspec.toml.decode(body, type=VendorsFile)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise VendorsFileError(f"invalid vendors file {path}: {error}") from error
    seen: set[str] = set()
    for vendor in parsed.vendors:
        if vendor.id in seen:
            raise VendorsFileError(f"invalid vendors file {path}: vendor id {vendor.id!r} appears twice")
        if vendor.path is None and vendor.url is None:
            raise VendorsFileError(
                f"invalid vendors file {path}: vendor {vendor.id!r} has neither path nor url"
            )
        seen.add(vendor.id)
    return parsed.vendors, path.parent
