"""Pre-caching images on the hosts of an aggregate (``POST /os-aggregates/{id}/images``).

The conductor asks each compute host of the aggregate in turn (a call: the host
answers once it has the images), skipping hosts whose service is down, and logs what
came of it: how many images were cached, already there, unsupported by the driver or
failed, and how many hosts were skipped. Hosts are asked one after the other, as Nova
does with its default ``[image_cache] precache_concurrency`` of 1.
"""
from __future__ import annotations

import collections
from typing import Protocol

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.availability_zones import COMPUTE_BINARY
from novalite.compute import image_cache
from novalite.servicegroup import api as servicegroup_api

LOG = logging.getLogger(__name__)
SKIPPED = 'skipped'


class CachingComputeAPI(Protocol):
    def cache_images(self, context: nl_context.RequestContext, host: str,
                     image_ids: list[str]) -> dict[str, str]: ...


class Deps(Protocol):
    @property
    def compute_rpcapi(self) -> CachingComputeAPI: ...


def cache_images(deps: Deps, context: nl_context.RequestContext,
                 aggregate: objects.Aggregate,
                 image_ids: list[str]) -> dict[str, dict[str, str]]:
    """:returns: per host, what it answered for each image (``skipped`` for every image
    of a host that is down, unmapped or not a compute host)"""
    watch = timeutils.StopWatch()
    watch.start()
    LOG.info('Pre-caching image(s) %s on the %d host(s) of aggregate %s',
             ','.join(image_ids), len(aggregate.hosts), aggregate.id)
    results: dict[str, dict[str, str]] = {}
    servicegroup = servicegroup_api.API()
    for host in aggregate.hosts:
        results[host] = _cache_on_host(deps, context, servicegroup, host, image_ids)
    _log_summary(image_ids, results, watch.elapsed())
    return results


def _cache_on_host(deps: Deps, context: nl_context.RequestContext,
                   servicegroup: servicegroup_api.API, host: str,
                   image_ids: list[str]) -> dict[str, str]:
    skipped = dict.fromkeys(image_ids, SKIPPED)
    try:
        cell = objects.HostMapping.get_by_host(context, host).cell_mapping
    except exception.HostMappingNotFound:
        LOG.warning('Not pre-caching on %s: it is mapped to no cell', host)
        return skipped
    with nl_context.target_cell(context, cell) as cctxt:
        service = objects.Service.get_by_host_and_binary(cctxt, host, COMPUTE_BINARY)
        if service is None or not servicegroup.service_is_up(service):
            LOG.info('Skipping the image pre-cache request to compute %s: it is not up',
                     host)
            return skipped
        try:
            return deps.compute_rpcapi.cache_images(cctxt, host, image_ids)
        except Exception as exc:
            LOG.warning('Compute %s failed the image pre-cache request: %s', host, exc)
            return dict.fromkeys(image_ids, image_cache.ERROR)


def _log_summary(image_ids: list[str], results: dict[str, dict[str, str]],
                 elapsed: float) -> None:
    totals: collections.Counter[str] = collections.Counter()
    failures: collections.Counter[str] = collections.Counter()
    skipped_hosts = 0
    for answers in results.values():
        if answers and set(answers.values()) == {SKIPPED}:
            skipped_hosts += 1
            continue
        for image_id, status in answers.items():
            totals[status] += 1
            if status == image_cache.ERROR:
                failures[image_id] += 1
    LOG.info('Image pre-cache operation for image(s) %s completed in %.2f seconds; '
             '%d cached, %d existing, %d errors, %d unsupported, %d skipped (down) hosts',
             ','.join(image_ids), elapsed, totals[image_cache.CACHED],
             totals[image_cache.EXISTING], totals[image_cache.ERROR],
             totals[image_cache.UNSUPPORTED], skipped_hosts)
    for image_id, count in failures.items():
        LOG.warning('Image pre-cache operation for image %s failed %d times',
                    image_id, count)
