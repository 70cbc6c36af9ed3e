"""Who may see and change what: each resource and verb for a member of the owning
project, a reader of it and a member of another project (issue 20, "Isolation").

As Nova: what a project may not see answers 404, exactly as an unknown id would (so ids
cannot be probed); what the policy refuses answers 403; a reader changes nothing.
noauth2 gives every user ``member`` and ``reader`` (Keystone's implied roles), so the
reader here is the user ``reader``, whom the module's policy does not count as a member.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from novalite import policy
from tests.functional.stack import Stack

VERSION = '2.90'
MEMBER, READER, OTHER = 'ann:pa', 'reader:pa', 'bob:pb'
ACTORS = {'member': MEMBER, 'reader': READER, 'other': OTHER}
# A member is a member unless the user is ``reader``; nothing else changes.
READER_POLICY = {'project_member_api':
                 'role:member and project_id:%(project_id)s and not user_id:reader'}
NOWHERE = str(uuid.uuid4())


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    made = Stack(str(tmp_path_factory.mktemp('isolation')))
    made.start()
    policy.reset()
    policy.init(rules=READER_POLICY)
    try:
        yield made
    finally:
        policy.reset()
        made.stop()


# -- what project pa owns ------------------------------------------------------------------

def _ok(resp, *codes: int) -> dict:
    assert resp.status_code in (codes or (200,)), resp.text
    return resp.json() if resp.content else {}


def _boot(stack: Stack, flavor: str, token: str = MEMBER, **extra) -> str:
    body = {'server': {'name': 'iso', 'imageRef': stack.image['id'], 'flavorRef': flavor,
                       'networks': 'none', 'metadata': {'k': 'v'}, 'tags': ['t']}, **extra}
    server = _ok(stack.request('POST', '/servers', token=token, version=VERSION, json=body),
                 202)['server']
    shown = stack.wait_for_status(server['id'], ('ACTIVE', 'ERROR'), token=token)
    assert shown['status'] == 'ACTIVE', shown.get('fault')
    return server['id']


def _group(stack: Stack, policy_name: str = 'anti-affinity') -> str:
    return _ok(stack.request('POST', '/os-server-groups', token=MEMBER, version=VERSION,
                             json={'server_group': {'name': 'iso', 'policy': policy_name}})
               )['server_group']['id']


def _keypair(stack: Stack) -> str:
    name = 'kp-%s' % uuid.uuid4().hex[:8]
    _ok(stack.request('POST', '/os-keypairs', token=MEMBER, version=VERSION,
                      json={'keypair': {'name': name}}), 200, 201)
    return name


@pytest.fixture(scope='module')
def owned(stack) -> dict:
    """pa's server (with metadata ``k`` and tag ``t``), server group, key pair and
    private flavor (extra spec ``k``), a public flavor and an aggregate; by
    placeholder name."""
    _ok(stack.request('PUT', '/os-quota-sets/pa', json={'quota_set': {
        'instances': -1, 'cores': -1, 'ram': -1}}))
    flavor = _ok(stack.request('POST', '/flavors', json={'flavor': {
        'name': 'p1.iso', 'ram': 64, 'vcpus': 1, 'disk': 1,
        'os-flavor-access:is_public': False}}))['flavor']['id']
    _ok(stack.request('POST', '/flavors/%s/action' % flavor,
                      json={'addTenantAccess': {'tenant': 'pa'}}))
    _ok(stack.request('POST', '/flavors/%s/os-extra_specs' % flavor,
                      json={'extra_specs': {'k': 'v'}}))
    public = _ok(stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.iso', 'ram': 64, 'vcpus': 1, 'disk': 1}}))['flavor']['id']
    server = _boot(stack, flavor)
    actions = _ok(stack.request('GET', '/servers/%s/os-instance-actions' % server,
                                token=MEMBER))['instanceActions']
    aggregate = _ok(stack.request('POST', '/os-aggregates', json={
        'aggregate': {'name': 'iso'}}))['aggregate']['id']
    return {'server': server, 'group': _group(stack), 'keypair': _keypair(stack),
            'flavor': flavor, 'public_flavor': public, 'aggregate': aggregate,
            'request_id': actions[0]['request_id'], 'nowhere': NOWHERE,
            'image': stack.image['id']}


# The member's cell of a verb that destroys gets a resource of its own (the reader's and
# the other project's, refused, leave the shared one as it was).
FRESH: dict[str, Callable[[Stack, dict], str]] = {
    'server': lambda stack, owned: _boot(stack, owned['flavor']),
    'group': lambda stack, owned: _group(stack),
    'keypair': lambda stack, owned: _keypair(stack),
}


# -- the matrix --------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One verb on one resource: ``expect`` maps actor → status (absent: not asked)."""

    name: str
    method: str
    path: str
    expect: dict[str, int]
    body: dict | None = None
    fresh: str | None = None
    version: str = VERSION
    check: Callable[[Stack, dict, str], None] | None = field(default=None, compare=False)


def _see(member: int = 200) -> dict[str, int]:
    """Project data: the project reads it, another project does not know it exists."""
    return {'member': member, 'reader': member, 'other': 404}


def _change(member: int) -> dict[str, int]:
    """A change to project data: the reader is refused, another project gets 404."""
    return {'member': member, 'reader': 403, 'other': 404}


def _admin() -> dict[str, int]:
    return {'member': 403, 'reader': 403, 'other': 403}


def _own(member: int = 200) -> dict[str, int]:
    """A project-id in the path: the policy answers (there is nothing to hide)."""
    return {'member': member, 'reader': member, 'other': 403}


S = '/servers/{server}'
ACTION = S + '/action'
ROWS = [
    # servers and their actions
    Row('server show', 'GET', S, _see()),
    Row('server list of all projects', 'GET', '/servers/detail?all_tenants=1', _admin()),
    Row('server create', 'POST', '/servers', {'reader': 403},
        {'server': {'name': 'r', 'imageRef': '{image}', 'flavorRef': '{public_flavor}',
                    'networks': 'none'}}),
    Row('server update', 'PUT', S, _change(200), {'server': {'name': 'renamed'}}),
    Row('server delete', 'DELETE', S, _change(204), fresh='server'),
    Row('server unlock', 'POST', ACTION, _change(202), {'unlock': None}),
    Row('server stop', 'POST', ACTION, _change(202), {'os-stop': None}, fresh='server'),
    Row('server reboot', 'POST', ACTION, _change(202), {'reboot': {'type': 'SOFT'}},
        fresh='server'),
    Row('server migrate', 'POST', ACTION, {'member': 403, 'reader': 403, 'other': 404},
        {'migrate': None}),
    Row('server reset state', 'POST', ACTION, {'member': 403, 'reader': 403, 'other': 404},
        {'os-resetState': {'state': 'error'}}),
    Row('server console output', 'POST', ACTION, {'reader': 403, 'other': 404},
        {'os-getConsoleOutput': {}}),
    # sub-resources
    Row('metadata index', 'GET', S + '/metadata', _see()),
    Row('metadata show', 'GET', S + '/metadata/k', _see()),
    Row('metadata set', 'PUT', S + '/metadata/k', _change(200), {'meta': {'k': 'w'}}),
    Row('metadata update', 'POST', S + '/metadata', _change(200), {'metadata': {'j': 'v'}}),
    Row('metadata replace', 'PUT', S + '/metadata', _change(200), {'metadata': {'k': 'v'}}),
    Row('metadata delete', 'DELETE', S + '/metadata/k', _change(204), fresh='server'),
    Row('tags index', 'GET', S + '/tags', _see()),
    Row('tag show', 'GET', S + '/tags/t', _see(204)),
    Row('tag add', 'PUT', S + '/tags/u', _change(201)),
    Row('tags replace', 'PUT', S + '/tags', _change(200), {'tags': ['t']}),
    Row('tag delete', 'DELETE', S + '/tags/t', _change(204), fresh='server'),
    Row('tags delete all', 'DELETE', S + '/tags', _change(204), fresh='server'),
    Row('ips', 'GET', S + '/ips', _see()),
    Row('interfaces', 'GET', S + '/os-interface', _see()),
    Row('password show', 'GET', S + '/os-server-password', _see()),
    Row('password clear', 'DELETE', S + '/os-server-password', _change(204)),
    Row('topology', 'GET', S + '/topology', _see()),
    Row('server migrations', 'GET', S + '/migrations',
        {'member': 403, 'reader': 403, 'other': 404}),
    Row('server security groups', 'GET', S + '/os-security-groups', {'other': 404}),
    Row('volume attachments', 'GET', S + '/os-volume_attachments', _see()),
    Row('volume attach', 'POST', S + '/os-volume_attachments', {'reader': 403, 'other': 404},
        {'volumeAttachment': {'volumeId': NOWHERE}}),
    Row('diagnostics', 'GET', S + '/diagnostics', {'member': 403, 'reader': 403,
                                                    'other': 404}),
    Row('instance actions', 'GET', S + '/os-instance-actions', _see()),
    Row('instance action', 'GET', S + '/os-instance-actions/{request_id}', _see()),
    # server groups (I1 is its own test below)
    Row('group show', 'GET', '/os-server-groups/{group}', _see()),
    Row('group delete', 'DELETE', '/os-server-groups/{group}', _change(204), fresh='group'),
    Row('group create', 'POST', '/os-server-groups', {'member': 200, 'reader': 403},
        {'server_group': {'name': 'g', 'policy': 'affinity'}}),
    Row('unknown group show', 'GET', '/os-server-groups/{nowhere}', _see(404)),
    Row('group list of all projects', 'GET', '/os-server-groups?all_projects=True',
        _admin()),
    # flavors: a private flavor shared with pa
    Row('private flavor show', 'GET', '/flavors/{flavor}', _see()),
    Row('extra specs index', 'GET', '/flavors/{flavor}/os-extra_specs', _see()),
    Row('extra spec show', 'GET', '/flavors/{flavor}/os-extra_specs/k', _see()),
    Row('extra specs create', 'POST', '/flavors/{flavor}/os-extra_specs', _admin(),
        {'extra_specs': {'j': 'v'}}),
    Row('extra spec update', 'PUT', '/flavors/{flavor}/os-extra_specs/k', _admin(),
        {'k': 'w'}),
    Row('extra spec delete', 'DELETE', '/flavors/{flavor}/os-extra_specs/k', _admin()),
    Row('flavor access list', 'GET', '/flavors/{flavor}/os-flavor-access', _admin()),
    Row('flavor access add', 'POST', '/flavors/{flavor}/action', _admin(),
        {'addTenantAccess': {'tenant': 'pb'}}),
    Row('flavor update', 'PUT', '/flavors/{flavor}', _admin(),
        {'flavor': {'description': 'x'}}),
    Row('flavor delete', 'DELETE', '/flavors/{flavor}', _admin()),
    # key pairs belong to a user: another user's name is unknown, ?user_id is for admins
    Row('keypair show', 'GET', '/os-keypairs/{keypair}',
        {'member': 200, 'reader': 404, 'other': 404}),
    Row('keypair show by user', 'GET', '/os-keypairs/{keypair}?user_id=ann',
        {'member': 200, 'reader': 403, 'other': 403}),
    Row('keypair list by user', 'GET', '/os-keypairs?user_id=ann',
        {'member': 200, 'reader': 403, 'other': 403}),
    Row('keypair delete', 'DELETE', '/os-keypairs/{keypair}',
        {'member': 204, 'reader': 404, 'other': 404}, fresh='keypair'),
    Row('keypair delete by user', 'DELETE', '/os-keypairs/{keypair}?user_id=ann',
        {'reader': 403, 'other': 403}, fresh='keypair'),
    Row('keypair create for user', 'POST', '/os-keypairs', {'reader': 403, 'other': 403},
        {'keypair': {'name': 'theirs', 'user_id': 'ann'}}),
    # As in Nova, a key pair is its user's own whatever the role: a reader keeps theirs.
    Row('keypair create', 'POST', '/os-keypairs', {'reader': 201},
        {'keypair': {'name': 'readers'}}),
    # aggregates are the administrator's
    Row('aggregate list', 'GET', '/os-aggregates', _admin()),
    Row('aggregate show', 'GET', '/os-aggregates/{aggregate}', _admin()),
    Row('aggregate update', 'PUT', '/os-aggregates/{aggregate}', _admin(),
        {'aggregate': {'name': 'x'}}),
    Row('aggregate delete', 'DELETE', '/os-aggregates/{aggregate}', _admin()),
    Row('aggregate add host', 'POST', '/os-aggregates/{aggregate}/action', _admin(),
        {'add_host': {'host': 'host1'}}),
    Row('aggregate create', 'POST', '/os-aggregates', _admin(), {'aggregate': {'name': 'y'}}),
    # per-project figures: pa's, asked by name
    Row('usage of a tenant', 'GET', '/os-simple-tenant-usage/pa', _own()),
    Row('usage of all tenants', 'GET', '/os-simple-tenant-usage', _admin()),
    Row('quota show', 'GET', '/os-quota-sets/pa', _own()),
    Row('quota detail', 'GET', '/os-quota-sets/pa/detail', _own()),
    Row('quota update', 'PUT', '/os-quota-sets/pa', _admin(),
        {'quota_set': {'instances': 99}}),
    Row('quota revert', 'DELETE', '/os-quota-sets/pa', _admin()),
    Row('limits of a tenant', 'GET', '/limits?tenant_id=pa', _admin()),
    Row('external events', 'POST', '/os-server-external-events', _admin(),
        {'events': [{'name': 'network-changed', 'server_uuid': '{server}'}]}),
]
# Every server action: the action's own policy refuses the reader (admin-only ones
# refuse the member too, shown above for a few); another project's server is unknown.
ACTION_BODIES: dict[str, object] = {
    'reboot': {'type': 'HARD'}, 'os-stop': None, 'os-start': None,
    'os-getConsoleOutput': {}, 'pause': None, 'unpause': None, 'suspend': None,
    'resume': None, 'lock': None, 'unlock': None, 'rescue': None, 'unrescue': None,
    'os-resetState': {'state': 'active'}, 'changePassword': {'adminPass': 'pw'},
    'trigger_crash_dump': None, 'restore': None, 'forceDelete': None,
    'rebuild': {'imageRef': '{image}'}, 'createImage': {'name': 'snap'},
    'createBackup': {'name': 'bak', 'backup_type': 'daily', 'rotation': 1},
    'shelve': None, 'shelveOffload': None, 'unshelve': None,
    'resize': {'flavorRef': '{public_flavor}'}, 'confirmResize': None,
    'revertResize': None, 'migrate': None,
    'os-migrateLive': {'host': None, 'block_migration': 'auto'}, 'evacuate': {},
    'addSecurityGroup': {'name': 'default'}, 'removeSecurityGroup': {'name': 'default'},
}
# Removed in 2.44 (the network proxies).
OLD_ACTION_BODIES: dict[str, object] = {
    'addFixedIp': {'networkId': NOWHERE}, 'removeFixedIp': {'address': '10.0.0.9'},
    'addFloatingIp': {'address': '172.24.4.9'}, 'removeFloatingIp': {'address': '172.24.4.9'},
}
ROWS += [Row('action %s' % key, 'POST', ACTION, {'reader': 403, 'other': 404}, {key: body})
         for key, body in ACTION_BODIES.items()]
ROWS += [Row('action %s' % key, 'POST', ACTION, {'reader': 403, 'other': 404}, {key: body},
             version='2.43') for key, body in OLD_ACTION_BODIES.items()]
# Sub-resources by id, and their changes: another project's server is unknown first.
ROWS += [
    Row('ip of a network', 'GET', S + '/ips/private', {'other': 404}),
    Row('interface show', 'GET', S + '/os-interface/{nowhere}', {'other': 404}),
    Row('interface attach', 'POST', S + '/os-interface', {'reader': 403, 'other': 404},
        {'interfaceAttachment': {'net_id': NOWHERE}}),
    Row('interface detach', 'DELETE', S + '/os-interface/{nowhere}',
        {'reader': 403, 'other': 404}),
    Row('server migration show', 'GET', S + '/migrations/1', {'other': 404}),
    Row('volume attachment show', 'GET', S + '/os-volume_attachments/{nowhere}',
        {'other': 404}),
    Row('volume attachment swap', 'PUT', S + '/os-volume_attachments/{nowhere}',
        {'reader': 403, 'other': 404}, {'volumeAttachment': {'volumeId': NOWHERE}}),
    Row('volume detach', 'DELETE', S + '/os-volume_attachments/{nowhere}',
        {'reader': 403, 'other': 404}),
    Row('shares', 'GET', S + '/shares', {'other': 404}, version='2.97'),
    Row('share show', 'GET', S + '/shares/{nowhere}', {'other': 404}, version='2.97'),
    Row('share attach', 'POST', S + '/shares', {'reader': 403, 'other': 404},
        {'share': {'share_id': NOWHERE}}, version='2.97'),
    Row('share detach', 'DELETE', S + '/shares/{nowhere}', {'reader': 403, 'other': 404},
        version='2.97'),
]
# The administrator's APIs: refused by policy before anything is looked up.
ROWS += [Row('admin %s %s' % (method, path), method, path, _admin(), body)
         for method, path, body in [
             ('GET', '/os-hypervisors', None), ('GET', '/os-hypervisors/detail', None),
             ('GET', '/os-hypervisors/1', None), ('GET', '/os-hypervisors/{nowhere}', None),
             ('GET', '/os-migrations', None), ('GET', '/os-services', None),
             ('PUT', '/os-services/{nowhere}', {'status': 'disabled'}),
             ('DELETE', '/os-services/{nowhere}', None),
             ('GET', '/os-availability-zone/detail', None),
             ('GET', '/os-instance_usage_audit_log', None),
             ('GET', '/os-quota-class-sets/default', None),
             ('PUT', '/os-quota-class-sets/default', {'quota_class_set': {'instances': 1}}),
             ('GET', '/os-aggregates/{nowhere}', None),
             ('POST', '/flavors', {'flavor': {'name': 'x', 'ram': 64, 'vcpus': 1,
                                              'disk': 1}}),
             ('POST', '/os-aggregates/{aggregate}/images', {'cache': [{'id': NOWHERE}]}),
         ]]
CELLS = [(row, actor) for row in ROWS for actor in ACTORS if actor in row.expect]


def _fill(value: object, ids: dict) -> object:
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


@pytest.mark.parametrize(('row', 'actor'), CELLS,
                         ids=['%s-%s' % (row.name.replace(' ', '_'), actor)
                              for row, actor in CELLS])
def test_matrix(stack, owned, row, actor, request):
    ids = dict(owned)
    if row.fresh and actor == 'member':
        ids[row.fresh] = FRESH[row.fresh](stack, owned)
        if row.fresh == 'server':
            request.addfinalizer(lambda: stack.request('DELETE', '/servers/%s' % ids['server']))
    kwargs = {} if row.body is None else {'json': _fill(row.body, ids)}
    resp = stack.request(row.method, _fill(row.path, ids), token=ACTORS[actor],
                         version=row.version, **kwargs)
    expected = row.expect[actor]
    assert resp.status_code == expected, resp.text
    if expected >= 400:
        # Nova's fault format: one key naming the fault, with its code.
        (fault,) = resp.json().values()
        assert fault['code'] == expected


# -- what a list shows, and the group hint ---------------------------------------------------

@pytest.mark.parametrize(('path', 'key', 'placeholder', 'attr'), [
    ('/servers', 'servers', 'server', 'id'),
    # A non-administrator's project filters are ignored, as Nova: their own servers.
    ('/servers/detail?project_id=pa', 'servers', 'server', 'id'),
    ('/servers/detail?tenant_id=pa', 'servers', 'server', 'id'),
    ('/flavors', 'flavors', 'flavor', 'id'),
    ('/flavors/detail?is_public=none', 'flavors', 'flavor', 'id'),
    ('/os-server-groups', 'server_groups', 'group', 'id'),
    ('/os-keypairs', 'keypairs', 'keypair', 'name'),
])
def test_lists_show_only_what_the_caller_may_see(stack, owned, path, key, placeholder, attr):
    def listed(token):
        items = _ok(stack.request('GET', path, token=token, version=VERSION))[key]
        # Key pairs come wrapped: {"keypair": {...}}.
        return {(item.get('keypair') or item)[attr] for item in items}
    assert owned[placeholder] in listed(MEMBER)
    assert owned[placeholder] not in listed(OTHER)


def test_another_projects_group_hint_is_refused_as_an_unknown_group(stack, owned):
    """I1: bob (project pb) booted into ann's anti-affinity group: his server became a
    member, and ann's next boot found no host. Now the hint names no group for him."""
    group = _group(stack)
    hint = {'os:scheduler_hints': {'group': group}}

    def boot(token, hints):
        body = {'server': {'name': 'hint', 'imageRef': stack.image['id'],
                           'flavorRef': owned['public_flavor'], 'networks': 'none'},
                **hints}
        return stack.request('POST', '/servers', token=token, version=VERSION, json=body)

    refused = boot(OTHER, hint)
    unknown = boot(OTHER, {'os:scheduler_hints': {'group': NOWHERE}})
    assert refused.status_code == unknown.status_code == 400, refused.text
    # Nova's message, the same but for the uuid.
    assert refused.json()['badRequest']['message'] == (
        'Instance group %s could not be found.' % group)
    assert unknown.json()['badRequest']['message'] == (
        'Instance group %s could not be found.' % NOWHERE)
    assert boot(READER, hint).status_code == 403
    shown = _ok(stack.request('GET', '/os-server-groups/%s' % group, token=MEMBER))
    assert shown['server_group']['members'] == []

    # ann's two servers still spread over the two hosts.
    booted = [_boot(stack, owned['public_flavor'], **hint) for _ in range(2)]
    shown = _ok(stack.request('GET', '/os-server-groups/%s' % group, token=MEMBER))
    assert sorted(shown['server_group']['members']) == sorted(booted)
    for server in booted:
        stack.request('DELETE', '/servers/%s' % server)


def test_another_users_key_pair_and_private_flavor_are_unknown_to_a_boot(stack, owned):
    """bob names ann's key pair, or pa's private flavor (on create and resize): each
    answers as a name nobody used."""
    def boot(**server):
        body = {'server': {'name': 'theirs', 'imageRef': stack.image['id'],
                           'flavorRef': owned['public_flavor'], 'networks': 'none',
                           **server}}
        return stack.request('POST', '/servers', token=OTHER, version=VERSION, json=body)

    assert boot(key_name=owned['keypair']).status_code == 400
    assert boot(key_name='kp-nobody').status_code == 400
    assert boot(flavorRef=owned['flavor']).status_code == 400
    assert boot(flavorRef='nowhere').status_code == 400
    server = _boot(stack, owned['public_flavor'], token=OTHER)
    try:
        for flavor in (owned['flavor'], 'nowhere'):
            resp = stack.request('POST', '/servers/%s/action' % server, token=OTHER,
                                 json={'resize': {'flavorRef': flavor}})
            assert resp.status_code == 400, resp.text
    finally:
        stack.request('DELETE', '/servers/%s' % server)


def test_another_projects_deleted_servers_stay_unknown(stack, owned):
    """The filters that reach deleted servers (``deleted``, ``changes-since``) give a
    non-administrator their own project's only; the action log of a server is read
    through that server, so bob's server does not show ann's requests."""
    gone = _boot(stack, owned['public_flavor'])
    _ok(stack.request('DELETE', '/servers/%s' % gone, token=MEMBER), 204)
    stack.wait_for_deleted(gone, token=MEMBER)
    since = '/servers/detail?changes-since=2000-01-01T00:00:00Z'

    def listed(token, path):
        return {s['id'] for s in _ok(stack.request('GET', path, token=token,
                                                   version=VERSION))['servers']}
    assert gone in listed(MEMBER, since)
    for path in (since, since + '&deleted=true', '/servers/detail?deleted=true',
                 since + '&project_id=pa', '/servers/detail?uuid=%s' % gone):
        assert gone not in listed(OTHER, path), path
    assert stack.request('GET', '/servers/%s' % gone, token=OTHER).status_code == 404

    theirs = _boot(stack, owned['public_flavor'], token=OTHER)
    try:
        resp = stack.request('GET', '/servers/%s/os-instance-actions/%s'
                             % (theirs, owned['request_id']), token=OTHER)
        assert resp.status_code == 404, resp.text
    finally:
        stack.request('DELETE', '/servers/%s' % theirs)
