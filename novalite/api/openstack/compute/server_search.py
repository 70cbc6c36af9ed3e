"""The search options of a server list request: which filters a caller may use, and how.

Non-administrators may use a fixed set of filters (wider from 2.83); others are dropped
silently, as Nova does. The result is the ``search_opts`` of the compute API's
``get_all``, or None when nothing can match (then the list is empty).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc
from oslo_utils import strutils, timeutils

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common
from novalite.api.openstack.compute.schemas.servers import JOINED_TABLE_PARAMS
from novalite.policies import servers as srv_policies

if TYPE_CHECKING:
    from novalite.api.openstack import wsgi

SERVERS = srv_policies.SERVERS

# Filters anyone may use, by the microversion that opened them.
_USER_FILTERS = (('2.1', ('reservation_id', 'name', 'status', 'image', 'flavor', 'ip',
                          'ip6', 'changes-since', 'all_tenants')),
                 ('2.26', ('tags', 'tags-any', 'not-tags', 'not-tags-any')),
                 ('2.66', ('changes-before',)),
                 ('2.73', ('locked',)),
                 ('2.83', ('availability_zone', 'config_drive', 'key_name', 'created_at',
                           'launched_at', 'terminated_at', 'power_state', 'task_state',
                           'vm_state', 'progress', 'user_id')))
# Query names that are aliases of the database's.
_ALIASES = {'display_name': 'name', 'display_description': 'description',
            'image_ref': 'image', 'tenant_id': 'project_id'}
# Passed to the database query as they are (exact or regex match there).
_DIRECT = ('name', 'description', 'reservation_id', 'user_id', 'availability_zone',
           'key_name', 'host', 'node', 'uuid', 'hostname', 'kernel_id', 'ramdisk_id',
           'launch_index', 'power_state', 'locked_by', 'root_device_name', 'config_drive',
           'access_ip_v4', 'access_ip_v6', 'progress', 'vm_state', 'task_state')
# 'vm_state' and 'task_state' given directly are single values; status gives lists.
_TAG_FILTERS = ('tags', 'tags-any', 'not-tags', 'not-tags-any')


def _allowed(req: wsgi.Request) -> set[str] | None:
    """The filters this caller may use; None means all (administrators)."""
    context = req.context
    if context.can(SERVERS % 'allow_all_filters',
                   {'project_id': context.project_id, 'user_id': context.user_id},
                   fatal=False):
        return None
    return {name for version, names in _USER_FILTERS if avr.is_supported(req, version)
            for name in names}


def _params(req: wsgi.Request) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for key, values in req.GET.dict_of_lists().items():
        params.setdefault(_ALIASES.get(key, key), []).extend(values)
    return params


def search_options(req: wsgi.Request, is_detail: bool) -> dict | None:
    """The compute API's ``search_opts`` from the query; None when nothing can match."""
    params = _params(req)
    allowed = _allowed(req)
    if allowed is not None:
        params = {k: v for k, v in params.items()
                  if k in allowed or k in ('limit', 'marker', 'sort_key', 'sort_dir',
                                           'project_id')}
    for key in params:
        if key in JOINED_TABLE_PARAMS or key.startswith('_'):
            raise webob.exc.HTTPBadRequest(explanation='Invalid filter field: %s.' % key)
    opts: dict[str, Any] = {k: params[k][-1] for k in _DIRECT if k in params}
    for key in ('power_state', 'progress', 'launch_index'):
        if key in opts:
            if not opts[key].isdigit():
                return None
            opts[key] = int(opts[key])
    if 'ip' in params or 'ip6' in params:
        # novalite has no Neutron client yet: no server has an address to match.
        return None
    if not _add_status(req, params.get('status'), opts):
        return None
    if 'deleted' in params and allowed is None:
        opts['deleted'] = strutils.bool_from_string(params['deleted'][-1], default=False)
    if params.get('image'):
        opts['image_ref'] = common.get_id_from_href(params['image'][-1])
    if params.get('flavor'):
        opts['flavor'] = common.get_id_from_href(params['flavor'][-1])
    for key in _TAG_FILTERS:
        if params.get(key):
            opts[key] = [t.strip() for t in params[key][-1].split(',') if t.strip()]
    if 'locked' in params:
        opts['locked'] = _locked(params['locked'][-1])
    _add_time_filters(params, opts)
    _add_project(req, params, opts, is_detail)
    return opts


def _add_status(req: wsgi.Request, statuses: list[str] | None, opts: dict) -> bool:
    """Turn ``status`` into vm/task states; False when no server can have it."""
    if not statuses:
        return True
    vm_states, task_states = common.task_and_vm_state_from_status(statuses)
    if not vm_states:
        if avr.is_supported(req, '2.38'):
            raise webob.exc.HTTPBadRequest(explanation='Invalid status value')
        return False
    opts['vm_state'] = vm_states
    # 'default' means any task state: no task_state filter then.
    if 'default' not in task_states:
        opts['task_state'] = task_states
    if vm_states == ['deleted']:
        if not req.context.is_admin:
            raise webob.exc.HTTPForbidden(
                explanation='Only administrators may list deleted instances')
        opts['deleted'] = True
    return True


def _locked(value: str) -> bool:
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation="Unrecognized value '%s' for locked filter" % value) from exc


def _add_time_filters(params: dict, opts: dict) -> None:
    for key in ('changes-since', 'changes-before'):
        if key in params:
            try:
                opts[key] = timeutils.parse_isotime(params[key][-1])
            except ValueError as exc:
                raise webob.exc.HTTPBadRequest(
                    explanation='Invalid filter field: %s.' % key) from exc
    since, before = opts.get('changes-since'), opts.get('changes-before')
    if since and before and since > before:
        raise webob.exc.HTTPBadRequest(
            explanation='The value of changes-since must be less than or equal to '
                        'changes-before.')


def _add_project(req: wsgi.Request, params: dict, opts: dict, is_detail: bool) -> None:
    context = req.context
    if is_all_tenants(params):
        policy = 'detail:get_all_tenants' if is_detail else 'index:get_all_tenants'
        context.can(SERVERS % policy, {'project_id': context.project_id,
                                       'user_id': context.user_id})
        if params.get('project_id'):
            opts['project_id'] = params['project_id'][-1]
    elif context.project_id:
        # Without all_tenants a project filter can only name the caller's own project.
        opts['project_id'] = context.project_id
    else:
        opts['user_id'] = context.user_id


def is_all_tenants(params: dict) -> bool:
    if 'all_tenants' not in params:
        return False
    value = params['all_tenants'][-1]
    if not value:
        return True
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            explanation="Invalid value '%s' for all_tenants" % value) from exc
