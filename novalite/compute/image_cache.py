"""Pre-caching images on this host by request (``POST /os-aggregates/{id}/images``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import context as nl_context

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager

LOG = logging.getLogger(__name__)

# What a host answers for each image, as Nova's compute does.
CACHED = 'cached'
EXISTING = 'existing'
UNSUPPORTED = 'unsupported'
ERROR = 'error'


def cache_images(mgr: ComputeManager, context: nl_context.RequestContext,
                 image_ids: list[str]) -> dict[str, str]:
    """Have the driver fetch each image into its cache.

    :returns: per image ``cached`` (downloaded now), ``existing`` (there already),
        ``unsupported`` (the driver has no image cache) or ``error`` (logged).
    """
    LOG.info('Caching %d image(s) by request', len(image_ids))
    results: dict[str, str] = {}
    for image_id in image_ids:
        try:
            results[image_id] = CACHED if mgr.driver.cache_image(context, image_id) \
                else EXISTING
        except NotImplementedError:
            LOG.warning('The virt driver does not pre-cache images; ignoring the request')
            results[image_id] = UNSUPPORTED
        except Exception as exc:
            LOG.error('Failed to cache image %s: %s', image_id, exc)
            results[image_id] = ERROR
    return results
