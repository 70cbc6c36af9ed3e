"""novalite's version, in the shape oslo.reports' package section reads (Nova's
``nova.version``)."""
from __future__ import annotations

import importlib.metadata

VENDOR = 'novalite'
PRODUCT = 'novalite (OpenStack Compute)'


def vendor_string() -> str:
    return VENDOR


def product_string() -> str:
    return PRODUCT


def version_string() -> str:
    """The installed distribution's version; ``unknown`` when run from a source tree
    that was never installed."""
    try:
        return importlib.metadata.version('novalite')
    except importlib.metadata.PackageNotFoundError:
        return 'unknown'


def version_string_with_package() -> str:
    return version_string()
