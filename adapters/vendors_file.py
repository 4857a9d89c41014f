"""Loading the vendors file (TOML). Paths inside it are relative to the file itself.

A vendor's ``path`` must lead, once symlinks are resolved, to the vendors file's folder or below it: the
feed file is served back as prices, so ``/proc/self/environ``, ``../../etc/passwd`` or a symlink out of the
folder must not be readable through it. The rule is checked when the file is loaded and again when the feed
is read (a symlink can change in between).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from schemas.vendor import VendorConfig, VendorsFile

__all__ = ["VendorsFileError", "feed_file_path", "load_vendors_file"]


class VendorsFileError(ValueError):
    """The vendors file is missing, not TOML, or not a valid vendors list."""


def feed_file_path(folder: Path, path: str) -> Path:
    """Where a vendor's ``path`` leads, symlinks resolved; ``ValueError`` when that is outside ``folder``."""
    root = folder.resolve()
    try:
        target = (root / path).resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop, before Python 3.13
        raise ValueError(f"path {path!r} cannot be resolved ({error.__class__.__name__})") from None
    if not target.is_relative_to(root):
        raise ValueError(
            f"path {path!r} leads outside {root}; a feed file must be in the vendors file's folder "
            "or below it, after following symlinks"
        )
    return target


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
        if vendor.url is not None and vendor.token_env is not None and urlsplit(vendor.url).username:
            # httpx would send the URL's user:password as Basic auth in place of the bearer token.
            raise VendorsFileError(
                f"invalid vendors file {path}: vendor {vendor.id!r} has both credentials in its url and "
                "token_env; use one"
            )
        if vendor.path is not None:
            try:
                feed_file_path(path.parent, vendor.path)
            except ValueError as error:
                raise VendorsFileError(
                    f"invalid vendors file {path}: vendor {vendor.id!r}: {error}"
                ) from None
        seen.add(vendor.id)
    return parsed.vendors, path.parent
