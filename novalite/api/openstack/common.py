"""Helpers every controller and view shares: server status, pagination, links."""
from __future__ import annotations

import datetime
import urllib.parse
from typing import TYPE_CHECKING

import webob.exc
from oslo_log import log as logging

from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import wsgi
    from novalite.compute.api import API as ComputeAPI
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

# The API status of a server, by vm_state then task_state ('default': any other).
_STATE_MAP: dict[str, dict[str | None, str]] = {
    'active': {
        'default': 'ACTIVE',
        'rebooting': 'REBOOT', 'reboot_pending': 'REBOOT', 'reboot_started': 'REBOOT',
        'rebooting_hard': 'HARD_REBOOT', 'reboot_pending_hard': 'HARD_REBOOT',
        'reboot_started_hard': 'HARD_REBOOT',
        'updating_password': 'PASSWORD',
        'rebuilding': 'REBUILD', 'rebuild_block_device_mapping': 'REBUILD',
        'rebuild_spawning': 'REBUILD',
        'migrating': 'MIGRATING',
        'resize_prep': 'RESIZE', 'resize_migrating': 'RESIZE', 'resize_migrated': 'RESIZE',
        'resize_finish': 'RESIZE',
    },
    'building': {'default': 'BUILD'},
    'stopped': {
        'default': 'SHUTOFF',
        'resize_prep': 'RESIZE', 'resize_migrating': 'RESIZE', 'resize_migrated': 'RESIZE',
        'resize_finish': 'RESIZE',
        'rebuilding': 'REBUILD', 'rebuild_block_device_mapping': 'REBUILD',
        'rebuild_spawning': 'REBUILD',
    },
    'resized': {'default': 'VERIFY_RESIZE', 'resize_reverting': 'REVERT_RESIZE'},
    'paused': {'default': 'PAUSED', 'migrating': 'MIGRATING'},
    'suspended': {'default': 'SUSPENDED'},
    'rescued': {'default': 'RESCUE'},
    'error': {
        'default': 'ERROR',
        'rebuilding': 'REBUILD', 'rebuild_block_device_mapping': 'REBUILD',
        'rebuild_spawning': 'REBUILD',
    },
    'deleted': {'default': 'DELETED'},
    'soft-delete': {'default': 'SOFT_DELETED'},
    'shelved': {'default': 'SHELVED'},
    'shelved_offloaded': {'default': 'SHELVED_OFFLOADED'},
}


def status_from_state(vm_state: str | None, task_state: str | None = None) -> str:
    """The API status (BUILD, ACTIVE, ERROR...) of a server in these states."""
    task_map = _STATE_MAP.get(vm_state or '', {'default': 'UNKNOWN'})
    status = task_map.get(task_state or 'default', task_map['default'])
    if status == 'UNKNOWN':
        LOG.error('status is UNKNOWN from vm_state=%s task_state=%s', vm_state, task_state)
    return status


def task_and_vm_state_from_status(statuses: list[str]) -> tuple[list[str], list[str]]:
    """The vm_states and task_states that show as any of ``statuses``.

    The task states may contain 'default', meaning "any task state".
    """
    wanted = {s.upper() for s in statuses}
    vm_states: set[str] = set()
    task_states: set[str] = set()
    for vm_state, task_map in _STATE_MAP.items():
        for task_state, status in task_map.items():
            if status in wanted:
                vm_states.add(vm_state)
                task_states.add(task_state or 'default')
    return sorted(vm_states), sorted(task_states)


def get_limit_and_marker(req: wsgi.Request) -> tuple[int, str | None]:
    """``limit`` (capped by ``[api] max_limit``) and ``marker`` of a list request."""
    params = req.GET
    max_limit = CONF.api.max_limit
    limit = max_limit
    if 'limit' in params:
        try:
            limit = int(params['limit'])
        except ValueError as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='limit param must be an integer') from exc
        if limit < 0:
            raise webob.exc.HTTPBadRequest(explanation='limit param must be positive')
        limit = min(limit, max_limit)
    return limit, params.get('marker')


def get_sort_params(req: wsgi.Request, default_key: str = 'created_at', default_dir: str = 'desc'
                    ) -> tuple[list[str], list[str]]:
    """Sort keys and directions from repeated ``sort_key``/``sort_dir`` parameters.

    Keys without a direction take the last direction given (or the default).

    :raises HTTPBadRequest: a direction other than ``asc`` or ``desc`` (Nova's message),
        or more directions than keys
    """
    keys = [k.strip() for k in req.GET.getall('sort_key')] or [default_key]
    dirs = [d.strip() for d in req.GET.getall('sort_dir')] or [default_dir]
    if any(d not in ('asc', 'desc') for d in dirs):
        raise webob.exc.HTTPBadRequest(
            explanation="Unknown sort direction, must be 'desc' or 'asc'")
    if len(dirs) > len(keys):
        raise webob.exc.HTTPBadRequest(
            explanation='Sort direction size exceeds sort key size')
    dirs += [dirs[-1]] * (len(keys) - len(dirs))
    return keys, dirs


def get_id_from_href(href: str | int) -> str:
    """The id in a reference that is an id or a URL ending with one."""
    href = str(href)
    path = urllib.parse.urlsplit(href).path
    return path.rstrip('/').split('/')[-1] if '/' in path else path


def isotime(value: datetime.datetime | None) -> str | None:
    """``2024-01-31T12:00:00Z``, the timestamp format of the API views."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')


class ViewBuilder:
    """Base of the views: links to a resource and to the next page of a collection."""

    _collection_name = ''

    @staticmethod
    def _project_id(req: wsgi.Request) -> str:
        # Links carry the project id only when the client put it in its URL.
        context = req.environ.get('novalite.context')
        project_id = getattr(context, 'project_id', None)
        if project_id and '/%s/' % project_id in req.path + '/':
            return project_id
        return ''

    def _prefix(self, req: wsgi.Request, bookmark: bool = False) -> str:
        # The same for every link of one response: worked out once per request (a list
        # of a hundred servers has three hundred links).
        prefixes = req.environ.setdefault('novalite.link_prefixes', {})
        prefix = prefixes.get(bookmark)
        if prefix is None:
            url = req.application_url.rstrip('/')
            if bookmark and url.endswith('/v2.1'):
                url = url[:-len('/v2.1')]
            project_id = self._project_id(req)
            prefix = prefixes[bookmark] = '%s/%s' % (url, project_id) if project_id else url
        return prefix

    def _get_href_link(self, req: wsgi.Request, identifier: str,
                       collection: str | None = None) -> str:
        return '%s/%s/%s' % (self._prefix(req), collection or self._collection_name,
                             identifier)

    def _get_bookmark_link(self, req: wsgi.Request, identifier: str,
                           collection: str | None = None) -> str:
        return '%s/%s/%s' % (self._prefix(req, bookmark=True),
                             collection or self._collection_name, identifier)

    def _get_links(self, req: wsgi.Request, identifier: str, collection: str | None = None
                   ) -> list[dict]:
        return [{'rel': 'self', 'href': self._get_href_link(req, identifier, collection)},
                {'rel': 'bookmark',
                 'href': self._get_bookmark_link(req, identifier, collection)}]

    def _get_collection_links(self, req: wsgi.Request, items: list, collection_name: str,
                              id_key: str = 'uuid') -> list[dict]:
        """A ``next`` link when the page is full: the client may ask for more."""
        limit, _marker = get_limit_and_marker(req)
        if not limit or len(items) != limit:
            return []
        last = items[-1]
        last_id = last[id_key] if isinstance(last, dict) else getattr(last, id_key)
        params = req.GET.copy()
        params['marker'] = last_id
        href = '%s/%s?%s' % (self._prefix(req), collection_name,
                             urllib.parse.urlencode(list(params.items())))
        return [{'rel': 'next', 'href': href}]


def get_instance(compute_api: ComputeAPI, context: RequestContext, instance_id: str,
                 expected_attrs: list | None = None) -> objects.Instance:
    """The server ``instance_id`` as the caller may see it.

    Servers of other projects do not exist for non-administrators: 404, not 403, so
    that their ids cannot be probed.
    """
    from novalite import exception
    instance = compute_api.get(context, instance_id, expected_attrs=expected_attrs)
    if not context.is_admin and instance.project_id != context.project_id:
        raise exception.InstanceNotFound(instance_id=instance_id)
    return instance


def instance_target(instance: objects.Instance) -> dict:
    """The policy target of a server: its project and user."""
    return {'project_id': instance.project_id, 'user_id': instance.user_id}


class ComputeAPIUser:
    """A controller that calls the compute API, built on first use (it makes RPC
    clients, which need ``rpc.init()``); tests pass a double instead."""

    def __init__(self, compute_api: ComputeAPI | None = None) -> None:
        super().__init__()
        self._compute_api = compute_api

    @property
    def compute_api(self) -> ComputeAPI:
        if self._compute_api is None:
            from novalite.compute import api as compute_api
            self._compute_api = compute_api.API()
        return self._compute_api
