"""The fuzzer's application, its callers and the seed data its ids point at.

The requests go in process to the API's paste application, loaded as it is deployed but
with Keystone's token check left out: ``keystonecontext`` then builds each request's
context from the identity headers the fuzzer sends, as after ``authtoken``, so callers
can be an administrator, members of two projects and a project's reader (noauth2 gives
every user the member role). A few hundred more go through the stack's HTTP server,
which runs noauth2.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from typing import Any

import webob
from paste import deploy

from novalite.api.openstack import loader
from novalite.conf import CONF
from tests.functional.fuzz.strategies import Caller
from tests.functional.stack import Stack

PROJECT_A = 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'
PROJECT_B = 'b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1'
ADMIN = Caller('admin', 'admin', 'adadadadadadadadadadadadadadadad',
               ('admin', 'member', 'reader'))
MEMBER_A = Caller('member-a', 'alice', PROJECT_A, ('member', 'reader'))
READER_A = Caller('reader-a', 'rita', PROJECT_A, ('reader',))
MEMBER_B = Caller('member-b', 'bob', PROJECT_B, ('member', 'reader'))
CALLERS = (ADMIN, MEMBER_A, READER_A, MEMBER_B)


@dataclasses.dataclass
class Seed:
    """Ids that exist: by the path segment before a placeholder, and by body key."""

    ids: dict[str, list[str]]
    hints: dict[str, list]


def keystone_app(tmp_dir: str) -> Callable:
    """The deployed pipeline with ``keystonecontext`` but without ``authtoken``."""
    with open(loader.find_paste_config()) as paste:
        text = paste.read()
    trusting = text.replace('authtoken keystonecontext', 'keystonecontext')
    assert trusting != text, 'api-paste.ini has no "authtoken keystonecontext" any more'
    path = os.path.join(tmp_dir, 'fuzz-api-paste.ini')
    with open(path, 'w') as paste:
        paste.write(trusting)
    CONF.set_override('auth_strategy', 'keystone', group='api')
    try:
        return deploy.loadapp('config:%s' % path, name='osapi_compute')
    finally:
        CONF.clear_override('auth_strategy', group='api')


def call(app: Callable, caller: Caller, method: str, path: str, body: Any = None,
         version: str = '2.1') -> tuple[int, Any]:
    """A well-formed request (for seeding): the status and the decoded JSON body."""
    headers = dict(caller.headers(), **{'OpenStack-API-Version': 'compute %s' % version})
    req = webob.Request.blank('/v2.1' + path, method=method, headers=headers)
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    resp = req.get_response(app)
    return resp.status_int, (resp.json if resp.body else None)


def _ok(result: tuple[int, Any]) -> Any:
    status, body = result
    assert status < 300, (status, body)
    return body


def seed(app: Callable, stack: Stack) -> Seed:
    """Flavors, keypairs, an aggregate, server groups and a server per project."""
    flavor = _ok(call(app, ADMIN, 'POST', '/flavors', {'flavor': {
        'name': 'fz.small', 'ram': 128, 'vcpus': 1, 'disk': 1}}))['flavor']['id']
    private = _ok(call(app, ADMIN, 'POST', '/flavors', {'flavor': {
        'name': 'fz.private', 'ram': 128, 'vcpus': 1, 'disk': 1,
        'os-flavor-access:is_public': False}}))['flavor']['id']
    _ok(call(app, ADMIN, 'POST', '/flavors/%s/action' % private,
             {'addTenantAccess': {'tenant': PROJECT_A}}))
    _ok(call(app, ADMIN, 'POST', '/flavors/%s/os-extra_specs' % flavor,
             {'extra_specs': {'hw:cpu_policy': 'shared'}}))
    keypairs = [_ok(call(app, who, 'POST', '/os-keypairs', {'keypair': {'name': 'kp-' + who.name}})
                    )['keypair']['name'] for who in (MEMBER_A, MEMBER_B)]
    aggregate = _ok(call(app, ADMIN, 'POST', '/os-aggregates', {'aggregate': {
        'name': 'fz-agg', 'availability_zone': 'fz-zone'}}))['aggregate']['id']
    _ok(call(app, ADMIN, 'POST', '/os-aggregates/%s/action' % aggregate,
             {'set_metadata': {'metadata': {'fz': 'yes'}}}))
    groups = [_ok(call(app, who, 'POST', '/os-server-groups', {'server_group': {
        'name': 'g-' + who.name, 'policies': ['anti-affinity']}}))['server_group']['id']
        for who in (MEMBER_A, MEMBER_B)]
    servers = []
    for who in (MEMBER_A, MEMBER_B):
        server = _ok(call(app, who, 'POST', '/servers', {'server': {
            'name': 'fz-' + who.name, 'imageRef': stack.image['id'], 'flavorRef': flavor,
            'networks': 'none', 'metadata': {'role': 'seed'}}}, version='2.37'))
        servers.append(server['server']['id'])
    for server_id in servers:
        stack.wait_for_status(server_id, ('ACTIVE',))
        _ok(call(app, ADMIN, 'PUT', '/servers/%s/tags/seed' % server_id, version='2.26'))
    hypervisors = [h['id'] for h in _ok(call(app, ADMIN, 'GET', '/os-hypervisors',
                                             version='2.53'))['hypervisors']]
    services = [s['id'] for s in _ok(call(app, ADMIN, 'GET', '/os-services',
                                          version='2.53'))['services']]
    actions = [a['request_id'] for a in _ok(call(
        app, MEMBER_A, 'GET', '/servers/%s/os-instance-actions' % servers[0]))[
        'instanceActions']]
    projects = [PROJECT_A, PROJECT_B, ADMIN.project_id]
    ids = {'servers': servers, 'os-volumes_boot': servers, 'flavors': [flavor, private],
           'os-extra_specs': ['hw:cpu_policy'], 'images': [stack.image['id']],
           'metadata': ['role'], 'tags': ['seed'], 'os-keypairs': keypairs,
           'os-aggregates': [str(aggregate)], 'os-server-groups': groups,
           'os-hypervisors': hypervisors + ['host1'], 'os-services': services,
           'os-hosts': ['host1', 'host2'], 'os-quota-sets': projects,
           'os-quota-class-sets': ['default'], 'os-simple-tenant-usage': projects,
           'os-instance-actions': actions, 'ips': ['private'],
           'os-instance_usage_audit_log': ['2024-01-01 00:00:00']}
    hints = {'imageRef': [stack.image['id']], 'image_id': [stack.image['id']],
             'flavorRef': [flavor, private], 'group': groups, 'host': ['host1', 'host2'],
             'tenant': [PROJECT_A, PROJECT_B], 'project_id': [PROJECT_A],
             'key_name': keypairs, 'server_uuid': servers, 'availability_zone': ['fz-zone'],
             'networks': ['none', 'auto']}
    return Seed(ids, hints)
