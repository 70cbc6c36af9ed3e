"""Schemas of the image metadata proxy: the shapes of the server metadata API."""
from __future__ import annotations

from novalite.api.openstack.compute.schemas.server_metadata import (  # noqa: F401
    create,
    update,
    update_all,
)
