"""Swapping a server's volume for another on its host (os-volume_attachments PUT with a
new volumeId, admins only): filled in by the swap-volume work of issue 22."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import objects
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager


def swap_volume(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                old_volume_id: str, new_volume_id: str, new_attachment_id: str) -> None:
    raise NotImplementedError('swap_volume')
