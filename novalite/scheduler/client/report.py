"""The Placement client: resource providers, inventories, candidates and allocations."""
from __future__ import annotations

import copy
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import cachetools
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from novalite import exception, metrics, transient
from novalite.conf import CONF

if TYPE_CHECKING:
    import requests

    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

T = TypeVar('T')

# Placement 16 speaks up to 1.39; every call here is valid at that version.
PLACEMENT_VERSION = '1.39'
# How often a write that lost a generation race is refreshed and tried again.
GENERATION_RETRIES = 4

_INVENTORY_DEFAULTS = {'reserved': 0, 'min_unit': 1, 'step_size': 1, 'allocation_ratio': 1.0}
# Connection-level failures: Placement is down, unreachable or not configured.
_CONNECT_ERRORS = (ks_exc.ConnectionError, ks_exc.RequestTimeout, ks_exc.EndpointNotFound,
                   ks_exc.DiscoveryFailure, ks_exc.MissingAuthPlugin)


# Providers whose inventory a client remembers (a compute has one per node).
INVENTORY_CACHE_SIZE = 1000

CONNECT_RETRIES = 3
CONNECT_RETRY_DELAY = 0.2  # seconds


def _create_adapter() -> ks_adapter.Adapter:
    """A keystoneauth1 adapter from the ``[placement]`` options.

    For a keystone-less Placement: ``auth_type = admin_token``, ``token = admin`` and
    ``endpoint = http://host:port`` (Placement's ``noauth2`` strategy).
    """
    auth = ks_loading.load_auth_from_conf_options(CONF, 'placement')
    session = ks_loading.load_session_from_conf_options(CONF, 'placement', auth=auth)
    client = ks_loading.load_adapter_from_conf_options(CONF, 'placement', session=session,
                                                       auth=auth)
    client.additional_headers = {'accept': 'application/json'}
    # A connection Placement's server closed under load (a reset keep-alive) is tried
    # again rather than failing a build or a delete; set connect_retries to change it.
    if client.connect_retries is None:
        client.connect_retries = CONNECT_RETRIES
    if client.connect_retry_delay is None:
        client.connect_retry_delay = CONNECT_RETRY_DELAY
    return client


def _normalized(inventory: dict[str, dict]) -> dict[str, dict]:
    """Inventory records with Placement's defaults filled in, so that equal means equal."""
    result = {}
    for rc, record in inventory.items():
        full = dict(_INVENTORY_DEFAULTS, max_unit=record.get('total', 0))
        full.update({k: v for k, v in record.items() if k != 'resource_provider_generation'})
        full['allocation_ratio'] = float(full['allocation_ratio'])
        result[rc] = full
    return result


# Placement's words for a consumer generation conflict: "expected <stored> but got <sent>".
_STORED_GENERATION = re.compile(r'consumer generation conflict - expected (\d+) but got None')


def _error_code(resp: requests.Response) -> str | None:
    try:
        return resp.json()['errors'][0].get('code')
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _excerpt(resp: requests.Response) -> str:
    return ' '.join((resp.text or '').split())[:300]


def _is_concurrent_update(resp: requests.Response) -> bool:
    """Whether Placement refused a write because a generation it checks moved."""
    return resp.status_code == 409 and _error_code(resp) == 'placement.concurrent_update'


class _GenerationConflict(Exception):
    """A write lost a generation race; read again, then write again."""


def _is_generation_conflict(exc: BaseException) -> bool:
    return isinstance(exc, _GenerationConflict)


def _retrying_conflicts(what: str, attempt: Callable[[], T]) -> T:
    """``attempt()``, tried again at once while it raises ``_GenerationConflict``,
    GENERATION_RETRIES times in all (the attempt reads what it needs again itself).

    :raises _GenerationConflict: the last conflict, once the tries are spent.
    """
    return transient.call(what, attempt, max_retries=GENERATION_RETRIES - 1, max_pause=0,
                          retryable=_is_generation_conflict, quiet=True)


class SchedulerReportClient:
    """Talks to Placement for the scheduler, the conductor and the resource tracker.

    :param client: a keystoneauth1 adapter; built from ``[placement]`` on first use
        when not given.
    :raises PlacementAPIConnectFailure: from any method, when Placement cannot be
        reached.
    """

    def __init__(self, client: ks_adapter.Adapter | None = None) -> None:
        self._client = client
        self._lock = threading.Lock()
        # provider uuid -> (generation, normalized inventory) as last seen in Placement.
        self._inventory_cache: cachetools.LRUCache[str, tuple[int, dict[str, dict]]] = \
            cachetools.LRUCache(INVENTORY_CACHE_SIZE)

    # -- HTTP ------------------------------------------------------------------------

    @property
    def client(self) -> ks_adapter.Adapter:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = _create_adapter()
        return self._client

    def _endpoint(self) -> str:
        try:
            return self.client.get_endpoint() or '(no endpoint)'
        except Exception as exc:  # the endpoint lookup itself may be what fails
            return '(endpoint unknown: %s)' % exc

    def _request(self, method: str, url: str, context: RequestContext, json: Any = None,
                 version: str = PLACEMENT_VERSION) -> requests.Response:
        # The header as keystoneauth's ``microversion=`` would write it for Placement,
        # without its parsing of the version on every request (6 % of a scheduler's CPU).
        kwargs: dict[str, Any] = {
            'headers': {'OpenStack-API-Version': 'placement %s' % version},
            'raise_exc': False}
        if json is not None:
            kwargs['json'] = json
        global_id = getattr(context, 'global_id', None)
        if global_id:
            kwargs['global_request_id'] = global_id
        started = time.monotonic()
        try:
            resp = self.client.request(url, method, **kwargs)
        except _CONNECT_ERRORS as exc:
            metrics.observe_http('placement', method, None, time.monotonic() - started)
            text = str(exc)
            if 'Connection refused' in text:
                cause = 'connection refused'
            elif isinstance(exc, (ks_exc.ConnectTimeout, ks_exc.RequestTimeout)):
                cause = 'timed out'
            else:
                cause = '%s: %s' % (type(exc).__name__, text[:200])
            raise exception.PlacementAPIConnectFailure(
                reason='Placement could not be reached at %s (%s).'
                       % (self._endpoint(), cause)) from exc
        metrics.observe_http('placement', method, resp.status_code, time.monotonic() - started)
        return resp

    def _unexpected(self, method: str, url: str, resp: requests.Response
                    ) -> exception.ResourceProviderError:
        error = exception.PlacementAPIServerError if resp.status_code >= 500 else \
            exception.ResourceProviderError
        return error(
            reason='%s %s returned %s: %s' % (method, url, resp.status_code, _excerpt(resp)))

    def _get(self, url: str, context: RequestContext) -> dict:
        resp = self._request('GET', url, context)
        if resp.status_code != 200:
            raise self._unexpected('GET', url, resp)
        return resp.json()

    # -- scheduling ------------------------------------------------------------------

    def get_allocation_candidates(self, context: RequestContext, resources: dict[str, int],
                                  limit: int | None = None,
                                  required_traits: list[str] | None = None,
                                  forbidden_traits: list[str] | None = None,
                                  member_of: list[str] | None = None,
                                  ) -> tuple[list[dict], dict, str]:
        """``GET /allocation_candidates`` for one unnumbered request group.

        :param member_of: aggregate uuids; a provider must be in one of them.
        :returns: (allocation_requests, provider_summaries, microversion used).
        """
        query: list[tuple[str, str]] = [
            ('resources', ','.join('%s:%d' % (rc, n) for rc, n in sorted(resources.items())))]
        traits = sorted(required_traits or []) + ['!' + t for t in sorted(forbidden_traits or [])]
        if traits:
            query.append(('required', ','.join(traits)))
        if member_of:
            query.append(('member_of', 'in:' + ','.join(member_of)))
        if limit is not None:
            query.append(('limit', str(limit)))
        url = '/allocation_candidates?' + urllib.parse.urlencode(query)
        body = self._get(url, context)
        return body['allocation_requests'], body['provider_summaries'], PLACEMENT_VERSION

    def claim_resources(self, context: RequestContext, consumer_uuid: str, alloc_request: dict,
                        project_id: str, user_id: str,
                        allocation_request_version: str | None = None,
                        consumer_generation: int | None = None,
                        consumer_type: str = 'INSTANCE') -> bool:
        """Write ``alloc_request`` as the allocations of ``consumer_uuid``.

        A consumer generation conflict (the consumer was written meanwhile, e.g. by an
        earlier attempt of the same build) is retried with the current generation.

        :returns: False when Placement refuses for lack of capacity.
        :raises AllocationUpdateFailed: on any other refusal.
        """
        url = '/allocations/%s' % consumer_uuid
        payload = {'allocations': copy.deepcopy(alloc_request['allocations']),
                   'project_id': project_id, 'user_id': user_id,
                   'consumer_generation': consumer_generation,
                   'consumer_type': consumer_type}
        def attempt() -> bool:
            resp = self._request('PUT', url, context, json=payload)
            if resp.status_code == 204:
                return True
            if _is_concurrent_update(resp):
                payload['consumer_generation'] = self._get_consumer(
                    context, consumer_uuid)[1]
                if payload['consumer_generation'] is None:
                    # A consumer Placement kept without allocations (a write its database
                    # lost half-way) shows no generation; its refusal names it.
                    stored = _STORED_GENERATION.search(resp.text or '')
                    payload['consumer_generation'] = int(stored.group(1)) if stored else None
                raise _GenerationConflict(_excerpt(resp))
            if resp.status_code == 409:
                LOG.info('Placement refused the claim of consumer %s: %s',
                         consumer_uuid, _excerpt(resp))
                return False
            if resp.status_code >= 500:
                raise self._unexpected('PUT', url, resp)  # an outage, not a refusal
            raise exception.AllocationUpdateFailed(consumer_uuid=consumer_uuid,
                                                   error='%s %s' % (resp.status_code,
                                                                    _excerpt(resp)))

        try:
            return _retrying_conflicts('Claiming for consumer %s' % consumer_uuid, attempt)
        except _GenerationConflict:
            raise exception.AllocationConflict(
                consumer_uuid=consumer_uuid,
                error='consumer generation kept changing in %d attempts'
                      % GENERATION_RETRIES) from None

    def _get_consumer(self, context: RequestContext, consumer_uuid: str) -> tuple[dict, int | None]:
        body = self._get('/allocations/%s' % consumer_uuid, context)
        return body.get('allocations', {}), body.get('consumer_generation')

    def get_allocations_for_consumer(self, context: RequestContext, consumer_uuid: str) -> dict:
        """:returns: {provider uuid: {'resources': {class: amount}}} (empty if none)."""
        allocations = self._get_consumer(context, consumer_uuid)[0]
        return {rp: {'resources': a['resources']} for rp, a in allocations.items()}

    def delete_allocation_for_instance(self, context: RequestContext, consumer_uuid: str) -> bool:
        """:returns: True when allocations were deleted, False when there were none."""
        url = '/allocations/%s' % consumer_uuid
        resp = self._request('DELETE', url, context)
        if resp.status_code == 204:
            return True
        if resp.status_code == 404:
            return False
        raise self._unexpected('DELETE', url, resp)

    def get_allocations_for_resource_provider(self, context: RequestContext, rp_uuid: str) -> dict:
        """:returns: {consumer uuid: {class: amount}} of everything on the provider."""
        body = self._get('/resource_providers/%s/allocations' % rp_uuid, context)
        return {consumer: a['resources'] for consumer, a in body['allocations'].items()}

    # -- providers and inventory -----------------------------------------------------

    def ensure_resource_provider(self, context: RequestContext, uuid: str, name: str) -> int:
        """Create the provider unless it exists. :returns: its generation."""
        url = '/resource_providers/%s' % uuid
        resp = self._request('GET', url, context)
        if resp.status_code == 200:
            return resp.json()['generation']
        if resp.status_code != 404:
            raise self._unexpected('GET', url, resp)
        resp = self._request('POST', '/resource_providers', context,
                             json={'uuid': uuid, 'name': name})
        if resp.status_code == 200:
            LOG.info('Created resource provider %s (%s)', name, uuid)
            return resp.json()['generation']
        if resp.status_code == 409:
            # Either another thread created it first (fine) or the name is taken.
            again = self._request('GET', url, context)
            if again.status_code == 200:
                return again.json()['generation']
        raise exception.ResourceProviderError(
            reason='could not create resource provider %s (%s): %s %s'
                   % (name, uuid, resp.status_code, _excerpt(resp)))

    def _read_inventory(self, context: RequestContext, rp_uuid: str) -> tuple[int, dict[str, dict]]:
        body = self._get('/resource_providers/%s/inventories' % rp_uuid, context)
        seen = (body['resource_provider_generation'], _normalized(body['inventories']))
        with self._lock:
            self._inventory_cache[rp_uuid] = seen
        return seen

    def set_inventory_for_provider(self, context: RequestContext, rp_uuid: str,
                                   inventory: dict[str, dict]) -> None:
        """Make the provider's inventory ``inventory`` ({class: record}).

        Nothing is sent when the inventory equals what this client last saw.

        :raises ResourceProviderInventoryUpdateFailed: e.g. when lowering a total
            below what is allocated.
        """
        wanted = _normalized(inventory)
        with self._lock:
            cached = self._inventory_cache.get(rp_uuid)
        if cached is not None and cached[1] == wanted:
            return
        generation, current = cached or self._read_inventory(context, rp_uuid)
        url = '/resource_providers/%s/inventories' % rp_uuid

        def attempt() -> None:
            nonlocal generation, current
            if current == wanted:
                return
            resp = self._request('PUT', url, context, json={
                'resource_provider_generation': generation, 'inventories': wanted})
            if resp.status_code == 200:
                body = resp.json()
                with self._lock:
                    self._inventory_cache[rp_uuid] = (
                        body['resource_provider_generation'], _normalized(body['inventories']))
                return
            if _is_concurrent_update(resp):
                generation, current = self._read_inventory(context, rp_uuid)
                raise _GenerationConflict(_excerpt(resp))
            with self._lock:
                self._inventory_cache.pop(rp_uuid, None)
            raise exception.ResourceProviderInventoryUpdateFailed(
                uuid=rp_uuid, error='%s %s' % (resp.status_code, _excerpt(resp)))

        try:
            _retrying_conflicts('Setting the inventory of provider %s' % rp_uuid, attempt)
        except _GenerationConflict:
            raise exception.ResourceProviderInventoryUpdateFailed(
                uuid=rp_uuid, error='generation kept changing in %d attempts'
                % GENERATION_RETRIES) from None

    def get_provider_traits(self, context: RequestContext, rp_uuid: str) -> tuple[int, list[str]]:
        """:returns: (provider generation, trait names)."""
        body = self._get('/resource_providers/%s/traits' % rp_uuid, context)
        return body['resource_provider_generation'], sorted(body['traits'])

    def set_traits_for_provider(self, context: RequestContext, rp_uuid: str,
                                traits: list[str]) -> None:
        """Make the provider's traits exactly ``traits`` (standard or CUSTOM_ ones)."""
        url = '/resource_providers/%s/traits' % rp_uuid

        def attempt() -> None:
            generation, current = self.get_provider_traits(context, rp_uuid)
            if current == sorted(traits):
                return
            for name in traits:
                if name.startswith('CUSTOM_'):
                    self._request('PUT', '/traits/%s' % name, context)
            resp = self._request('PUT', url, context, json={
                'resource_provider_generation': generation, 'traits': sorted(traits)})
            if resp.status_code == 200:
                with self._lock:
                    # The provider's generation moved: the cached one is stale.
                    self._inventory_cache.pop(rp_uuid, None)
                return
            if resp.status_code == 409:
                raise _GenerationConflict(_excerpt(resp))
            raise self._unexpected('PUT', url, resp)

        try:
            _retrying_conflicts('Setting the traits of provider %s' % rp_uuid, attempt)
        except _GenerationConflict:
            raise exception.ResourceProviderError(
                reason='traits of provider %s: generation kept changing' % rp_uuid) from None

    def get_provider_usages_and_inventories(self, context: RequestContext,
                                            with_traits: bool = False) -> dict[str, dict]:
        """Every provider's inventory and usage, to explain why nothing fits.

        One request per provider and question: meant for failure paths only.

        :returns: {uuid: {'name', 'inventories': {class: record}, 'usages': {class: n},
            'traits': [names] (only with ``with_traits``)}}
        """
        providers = self._get('/resource_providers', context)['resource_providers']
        result = {}
        for rp in providers:
            base = '/resource_providers/%s' % rp['uuid']
            entry = {'name': rp['name'],
                     'inventories': self._get(base + '/inventories', context)['inventories'],
                     'usages': self._get(base + '/usages', context)['usages']}
            if with_traits:
                entry['traits'] = self._get(base + '/traits', context)['traits']
            result[rp['uuid']] = entry
        return result

    def delete_resource_provider(self, context: RequestContext, rp_uuid: str) -> None:
        """Delete the provider, best effort: failures are logged, except a provider
        that still has allocations (the caller must not forget it then).

        :raises ResourceProviderInUse: Placement answered 409
        """
        url = '/resource_providers/%s' % rp_uuid
        try:
            resp = self._request('DELETE', url, context)
        except exception.PlacementAPIConnectFailure as exc:
            LOG.warning('Could not delete resource provider %s: %s', rp_uuid, exc)
            return
        if resp.status_code == 409:
            raise exception.ResourceProviderInUse(uuid=rp_uuid, reason=_excerpt(resp))
        with self._lock:
            self._inventory_cache.pop(rp_uuid, None)
        if resp.status_code not in (204, 404):
            LOG.warning('Could not delete resource provider %s: %s %s',
                        rp_uuid, resp.status_code, _excerpt(resp))

    # -- moves (migration-based allocations) -------------------------------------------

    def _consumer_record(self, context: RequestContext, consumer_uuid: str) -> dict:
        """GET /allocations/{uuid}: allocations, generation, project, user and type."""
        return self._get('/allocations/%s' % consumer_uuid, context)

    def move_allocations(self, context: RequestContext, source_consumer_uuid: str,
                         target_consumer_uuid: str, target_type: str = 'MIGRATION'
                         ) -> bool:
        """Hand the source consumer's allocations to the target consumer in one
        ``POST /allocations``: the source is left with none, the target's own (if any)
        are replaced. That is how a move keeps the source host's resources while the
        instance claims the destination (Nova's migration-based allocations).

        :param target_type: Placement consumer type of the target (``MIGRATION`` or
            ``INSTANCE``)
        :returns: False when the source has nothing to move
        :raises AllocationMoveFailed: Placement refused, or the consumers kept
            changing
        """
        def attempt() -> bool:
            source = self._consumer_record(context, source_consumer_uuid)
            if not source.get('allocations'):
                LOG.info('Consumer %s has no allocations to move to %s',
                         source_consumer_uuid, target_consumer_uuid)
                return False
            target = self._consumer_record(context, target_consumer_uuid)
            project, user = source['project_id'], source['user_id']
            payload = {
                source_consumer_uuid: {
                    'allocations': {}, 'project_id': project, 'user_id': user,
                    'consumer_generation': source.get('consumer_generation'),
                    'consumer_type': source.get('consumer_type') or 'INSTANCE'},
                target_consumer_uuid: {
                    'allocations': {rp: {'resources': a['resources']}
                                    for rp, a in source['allocations'].items()},
                    'project_id': project, 'user_id': user,
                    'consumer_generation': target.get('consumer_generation'),
                    'consumer_type': target_type},
            }
            resp = self._request('POST', '/allocations', context, json=payload)
            if resp.status_code == 204:
                return True
            if _is_concurrent_update(resp):
                raise _GenerationConflict(_excerpt(resp))
            raise exception.AllocationMoveFailed(
                source_consumer=source_consumer_uuid, target_consumer=target_consumer_uuid,
                error='%s %s' % (resp.status_code, _excerpt(resp)))

        try:
            return _retrying_conflicts('Moving the allocations of %s to %s' % (
                source_consumer_uuid, target_consumer_uuid), attempt)
        except _GenerationConflict:
            raise exception.AllocationMoveFailed(
                source_consumer=source_consumer_uuid, target_consumer=target_consumer_uuid,
                error='consumer generations kept changing in %d attempts'
                      % GENERATION_RETRIES) from None

    def remove_provider_from_consumer(self, context: RequestContext, consumer_uuid: str,
                                      rp_uuid: str) -> bool:
        """Drop what ``consumer_uuid`` holds on provider ``rp_uuid``, keeping the rest
        (an evacuated instance's allocation on the host it left).

        :returns: False when it held nothing there
        """
        def attempt() -> bool:
            record = self._consumer_record(context, consumer_uuid)
            allocations = record.get('allocations') or {}
            if rp_uuid not in allocations:
                return False
            kept = {rp: {'resources': a['resources']} for rp, a in allocations.items()
                    if rp != rp_uuid}
            if not kept:
                return self.delete_allocation_for_instance(context, consumer_uuid)
            url = '/allocations/%s' % consumer_uuid
            resp = self._request('PUT', url, context, json={
                'allocations': kept, 'project_id': record['project_id'],
                'user_id': record['user_id'],
                'consumer_generation': record.get('consumer_generation'),
                'consumer_type': record.get('consumer_type') or 'INSTANCE'})
            if resp.status_code == 204:
                return True
            if _is_concurrent_update(resp):
                raise _GenerationConflict(_excerpt(resp))
            if resp.status_code >= 500:
                raise self._unexpected('PUT', url, resp)
            raise exception.AllocationUpdateFailed(
                consumer_uuid=consumer_uuid, error='%s %s' % (resp.status_code,
                                                               _excerpt(resp)))

        try:
            return _retrying_conflicts('Removing provider %s from consumer %s' % (
                rp_uuid, consumer_uuid), attempt)
        except _GenerationConflict:
            raise exception.AllocationConflict(
                consumer_uuid=consumer_uuid,
                error='consumer generation kept changing in %d attempts'
                      % GENERATION_RETRIES) from None

    # -- operator tools: audit, heal, aggregates (novalite-manage placement) ------------

    def get_resource_provider(self, context: RequestContext, rp_uuid: str) -> dict | None:
        """:returns: the provider (uuid, name, generation...), or None if Placement has
        no such provider."""
        url = '/resource_providers/%s' % rp_uuid
        resp = self._request('GET', url, context)
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise self._unexpected('GET', url, resp)
        return resp.json()

    def list_resource_providers(self, context: RequestContext) -> list[dict]:
        """Every provider Placement has (uuid, name, generation...)."""
        return self._get('/resource_providers', context)['resource_providers']

    def get_consumer(self, context: RequestContext, consumer_uuid: str) -> dict:
        """What Placement holds for ``consumer_uuid``: ``allocations``
        ({provider: {'resources': ...}}, empty when none), ``consumer_generation``,
        ``project_id``, ``user_id`` and ``consumer_type`` (the last four absent then)."""
        return self._consumer_record(context, consumer_uuid)

    def put_allocations(self, context: RequestContext, consumer_uuid: str,
                        allocations: dict[str, dict], project_id: str, user_id: str,
                        consumer_generation: int | None,
                        consumer_type: str = 'INSTANCE') -> bool:
        """Replace the consumer's allocations, provided it is still at
        ``consumer_generation`` (None: provided it has none).

        :returns: False when the consumer was written meanwhile (nothing done)
        :raises AllocationUpdateFailed: Placement refused (no room, unknown provider)
        """
        url = '/allocations/%s' % consumer_uuid
        resp = self._request('PUT', url, context, json={
            'allocations': allocations, 'project_id': project_id, 'user_id': user_id,
            'consumer_generation': consumer_generation, 'consumer_type': consumer_type})
        if resp.status_code == 204:
            return True
        if _is_concurrent_update(resp):
            return False
        if resp.status_code >= 500:
            raise self._unexpected('PUT', url, resp)
        raise exception.AllocationUpdateFailed(
            consumer_uuid=consumer_uuid, error='%s %s' % (resp.status_code, _excerpt(resp)))

    def delete_allocations_if_unchanged(self, context: RequestContext, consumer_uuid: str,
                                        record: dict) -> bool:
        """Remove all the consumer's allocations, provided it is still as ``record``
        (a ``get_consumer`` answer) saw it: a consumer written since is left alone.

        :returns: False when the consumer changed meanwhile (or had nothing)
        :raises AllocationUpdateFailed: Placement refused for another reason
        """
        if not record.get('allocations'):
            return False
        resp = self._request('POST', '/allocations', context, json={consumer_uuid: {
            'allocations': {}, 'project_id': record['project_id'],
            'user_id': record['user_id'],
            'consumer_generation': record.get('consumer_generation'),
            'consumer_type': record.get('consumer_type') or 'INSTANCE'}})
        if resp.status_code == 204:
            return True
        if _is_concurrent_update(resp):
            return False
        if resp.status_code >= 500:
            raise self._unexpected('POST', '/allocations', resp)
        raise exception.AllocationUpdateFailed(
            consumer_uuid=consumer_uuid, error='%s %s' % (resp.status_code, _excerpt(resp)))

    def get_provider_aggregates(self, context: RequestContext,
                                rp_uuid: str) -> tuple[int, list[str]]:
        """:returns: (provider generation, aggregate uuids)."""
        body = self._get('/resource_providers/%s/aggregates' % rp_uuid, context)
        return body['resource_provider_generation'], sorted(body['aggregates'])

    def add_provider_to_aggregate(self, context: RequestContext, rp_uuid: str,
                                  aggregate_uuid: str) -> bool:
        """Put the provider in ``aggregate_uuid`` too, keeping its other aggregates.

        :returns: False when it was in it already
        :raises ResourceProviderError: Placement refused, or the generation kept moving
        """
        return self._change_provider_aggregate(context, rp_uuid, aggregate_uuid, True)

    def remove_provider_from_aggregate(self, context: RequestContext, rp_uuid: str,
                                       aggregate_uuid: str) -> bool:
        """Take the provider out of ``aggregate_uuid``, keeping its other aggregates.

        :returns: False when it was not in it
        :raises ResourceProviderError: Placement refused, or the generation kept moving
        """
        return self._change_provider_aggregate(context, rp_uuid, aggregate_uuid, False)

    def _change_provider_aggregate(self, context: RequestContext, rp_uuid: str,
                                   aggregate_uuid: str, member: bool) -> bool:
        url = '/resource_providers/%s/aggregates' % rp_uuid

        def attempt() -> bool:
            generation, current = self.get_provider_aggregates(context, rp_uuid)
            if (aggregate_uuid in current) == member:
                return False
            wanted = current + [aggregate_uuid] if member else \
                [agg for agg in current if agg != aggregate_uuid]
            resp = self._request('PUT', url, context, json={
                'resource_provider_generation': generation, 'aggregates': sorted(wanted)})
            if resp.status_code == 200:
                with self._lock:
                    self._inventory_cache.pop(rp_uuid, None)
                return True
            if resp.status_code == 409:
                raise _GenerationConflict(_excerpt(resp))
            raise self._unexpected('PUT', url, resp)

        try:
            return _retrying_conflicts('%s provider %s %s aggregate %s' % (
                'Adding' if member else 'Removing', rp_uuid, 'to' if member else 'from',
                aggregate_uuid), attempt)
        except _GenerationConflict:
            raise exception.ResourceProviderError(
                reason='aggregates of provider %s: generation kept changing'
                       % rp_uuid) from None
