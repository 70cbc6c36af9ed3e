"""novalite's Cinder client (``novalite.volume.cinder``) against the real Cinder on Ceph
of the volume stack, behind Keystone, configured exactly as the stack's daemons are
(``[cinder]`` finds Cinder in the catalog as the ``nova`` service user, ``[service_user]``
sends that user's token beside the caller's).

As alice (her own token, the API's way: keystonemiddleware's plugin): a volume is made
and becomes ``available``; an attachment made with a host connector carries rbd
``connection_info``; completed, the volume is ``in-use``; its delete (which Cinder allows
a service without asking the compute API) makes it ``available``; a snapshot and a
volume made from it; deletes. An admin context without a token is served by the service
user. With Cinder's API stopped, a call ends in ``CinderConnectionFailed``.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from novalite import context as nl_context
from novalite import exception
from novalite.conf import CONF
from novalite.volume import cinder as cinder_api
from novalite.volume import client
from tests.devstack import session
from tests.devstack.harness import Stack
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.harness.keystone import USERS

STACK = harness_cinder.VOLUME_STACK
SERVER = '5b0d8e57-3f7c-4a53-9e1d-1f2a3b4c5d6e'
CONNECTOR = {'platform': 'x86_64', 'os_type': 'linux', 'ip': '127.0.0.1',
             'host': 'hostA', 'multipath': False, 'do_local_attach': False}
WAIT = 120.0


@pytest.fixture(scope='module', autouse=True)
def _volumes_possible() -> None:
    harness_cinder.require_volumes()


@contextlib.contextmanager
def _override(sections: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """This process's options set as ``sections`` say, for one test."""
    set_here: list[tuple[str, str]] = []
    for group, options in sections.items():
        CONF.register_opts(ks_loading.get_auth_plugin_conf_options('password'), group=group)
        for name, value in options.items():
            CONF.set_override(name, value, group=group)
            set_here.append((name, group))
    client.reset()
    try:
        yield
    finally:
        for name, group in set_here:
            CONF.clear_override(name, group=group)
        client.reset()


@pytest.fixture
def configured(volume_stack: Stack) -> Iterator[Stack]:
    """This process's ``[cinder]`` and ``[service_user]``: the daemons' own."""
    assert volume_stack.cinder is not None
    with _override(volume_stack.cinder.daemon_conf()):
        yield volume_stack


@pytest.fixture(scope='module')
def noauth_cinder(volume_stack: Stack,
                  tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[harness_cinder.CinderEnvironment]:
    """A keystone-less Cinder (``auth_strategy = noauth``) on a Ceph of its own, beside
    the stack (whose Cinder is behind Keystone), as novalite-all runs it."""
    env = harness_cinder.CinderEnvironment(str(tmp_path_factory.mktemp('noauth-cinder')),
                                           session.PREFIX + 'noauth')
    try:
        env.launch()
        env.wait_started()
        yield env
    finally:
        errors = env.stop()
        assert not errors and not env.leftovers(), (errors, env.leftovers())


def _alice(stack: Stack) -> nl_context.RequestContext:
    """alice's request context as the API has it: her token, and its plugin (with her
    catalog) from keystonemiddleware."""
    assert stack.keystone is not None
    password, project, _role = USERS['alice']
    plugin = v3.Password(auth_url=stack.keystone.auth_url, username='alice',
                         password=password, project_name=project,
                         user_domain_id='default', project_domain_id='default')
    session = ks_session.Session(auth=plugin)
    return nl_context.RequestContext(
        user_id=plugin.get_user_id(session), project_id=plugin.get_project_id(session),
        roles=['member'], auth_token=plugin.get_token(session), user_auth_plugin=plugin,
        overwrite=False)


def _snapshot_status(api: cinder_api.API, ctx: nl_context.RequestContext,
                     snapshot_id: str) -> str | None:
    status: str = api.get_snapshot(ctx, snapshot_id)['status']
    return status if status != 'creating' else None


def test_volume_attachment_and_snapshot_lifecycle(configured: Stack) -> None:
    api = cinder_api.API()
    ctx = _alice(configured)
    created = api.create(ctx, 1, 'nl-client-v1', 'made by the client test')
    volume = api.wait_for_status(ctx, created['id'], {'available'}, timeout=WAIT)
    assert volume['size'] == 1 and volume['bootable'] == 'false'
    assert volume['os-vol-tenant-attr:tenant_id'] == ctx.project_id
    assert configured.cinder is not None
    assert 'volume-%s' % volume['id'] in configured.cinder.ceph.rbd('ls', 'volumes').split()

    attachment = api.attachment_create(ctx, volume['id'], SERVER, CONNECTOR, '/dev/vdb')
    info = attachment['connection_info']
    assert info['driver_volume_type'] == 'rbd'
    assert info['data']['name'] == 'volumes/volume-%s' % volume['id']
    assert info['data']['auth_username'] == 'cinder'
    assert info['data']['secret_uuid'] == configured.cinder.secret_uuid
    assert attachment['attach_mode'] == 'rw'
    api.attachment_complete(ctx, attachment['id'])
    attached = api.get(ctx, volume['id'])
    assert attached['status'] == 'in-use'
    assert [(a['attachment_id'], a['server_id'], a['device'])
            for a in attached['attachments']] == [(attachment['id'], SERVER, '/dev/vdb')]
    with pytest.raises(exception.InvalidVolume):
        api.delete(ctx, volume['id'])

    # Cinder lets a caller with the service role (our service token) delete an
    # attachment with connection_info without asking the compute API first.
    api.attachment_delete(ctx, attachment['id'])
    assert api.get(ctx, volume['id'])['status'] == 'available'
    with pytest.raises(exception.VolumeAttachmentNotFound):
        api.attachment_get(ctx, attachment['id'])

    snapshot = api.create_snapshot(ctx, volume['id'], 'nl-client-s1', None)
    assert Stack.wait_for(lambda: _snapshot_status(api, ctx, snapshot['id']), WAIT,
                          'snapshot %s' % snapshot['id']) == 'available'
    clone = api.create(ctx, 1, 'nl-client-clone', None, snapshot=snapshot['id'])
    clone = api.wait_for_status(ctx, clone['id'], {'available'}, timeout=WAIT)
    assert clone['snapshot_id'] == snapshot['id']
    assert {v['id'] for v in api.get_all(ctx)} >= {volume['id'], clone['id']}

    api.delete(ctx, clone['id'])
    Stack.wait_for(lambda: clone['id'] not in {v['id'] for v in api.get_all(ctx)}, WAIT,
                   'the clone to go')
    api.delete_snapshot(ctx, snapshot['id'])
    Stack.wait_for(lambda: snapshot['id'] not in {s['id'] for s in api.get_all_snapshots(ctx)},
                   WAIT, 'the snapshot to go')
    api.delete(ctx, volume['id'])
    Stack.wait_for(lambda: volume['id'] not in {v['id'] for v in api.get_all(ctx)}, WAIT,
                   'the volume to go')
    with pytest.raises(exception.VolumeNotFound):
        api.get(ctx, volume['id'])


def test_an_admin_context_without_a_token_calls_as_the_service_user(
        configured: Stack) -> None:
    api = cinder_api.API()
    ctx = _alice(configured)
    volume = api.create(ctx, 1, 'nl-client-admin', None)
    try:
        seen = api.get(nl_context.get_admin_context(), volume['id'])
        assert seen['id'] == volume['id']
        assert seen['os-vol-tenant-attr:tenant_id'] == ctx.project_id
    finally:
        api.wait_for_status(ctx, volume['id'], {'available', 'error'}, timeout=WAIT)
        api.delete(ctx, volume['id'])


def _api_answers(stack: Stack) -> Any:
    assert stack.cinder is not None
    return stack.cinder.services_up()


def test_a_stopped_cinder_api_is_cinder_connection_failed(configured: Stack) -> None:
    assert configured.cinder is not None
    cinder_process = configured.cinder.processes['cinder-api']
    ctx = _alice(configured)
    api = cinder_api.API()
    api.get_all(ctx)  # the version document is known: the failure is the call's own
    CONF.set_override('http_retries', 1, group='cinder')
    cinder_process.stop()
    try:
        with pytest.raises(exception.CinderConnectionFailed, match='volume service'):
            api.get_all(ctx)
    finally:
        CONF.set_override('http_retries', 3, group='cinder')
        cinder_process.start()
        Stack.wait_for(lambda: _api_answers(configured), WAIT, "Cinder's API back")
    assert isinstance(api.get_all(ctx), list)


def test_list_filters_reach_cinder(configured: Stack) -> None:
    api = cinder_api.API()
    ctx = _alice(configured)
    assert api.attachment_get_all(ctx, instance_id=SERVER) == []
    assert api.get_all_snapshots(ctx, {'volume_id': SERVER}) == []
    assert api.get_all(ctx, {'status': 'available', 'name': 'nl-client-none'}) == []


def test_keystone_less_cinder_takes_the_callers_project_and_the_service_role(
        noauth_cinder: harness_cinder.CinderEnvironment) -> None:
    """The caller's ``user:project`` makes the volume the caller's project's; the
    ``X-Service-Roles: service`` header lets Cinder delete an attachment that has
    connection_info without asking the compute API (it has no catalog to find it)."""
    sections = noauth_cinder.daemon_conf()
    assert 'auth_type' not in sections['cinder'] and 'service_user' not in sections
    with _override({'cinder': sections['cinder'],
                    'service_user': {'send_service_user_token': False}}):
        api = cinder_api.API()
        ctx = nl_context.RequestContext(user_id='carol', project_id='gamma',
                                        roles=['member'], overwrite=False)
        volume = api.create(ctx, 1, 'nl-client-noauth', None)
        volume = api.wait_for_status(ctx, volume['id'], {'available'}, timeout=WAIT)
        assert volume['os-vol-tenant-attr:tenant_id'] == 'gamma'
        assert volume['user_id'] == 'carol'
        attachment = api.attachment_create(ctx, volume['id'], SERVER, CONNECTOR, '/dev/vdb')
        assert attachment['connection_info']['driver_volume_type'] == 'rbd'
        api.attachment_complete(ctx, attachment['id'])
        assert api.get(ctx, volume['id'])['status'] == 'in-use'
        api.attachment_delete(ctx, attachment['id'])
        assert api.get(ctx, volume['id'])['status'] == 'available'
        api.delete(ctx, volume['id'])
        Stack.wait_for(lambda: volume['id'] not in {v['id'] for v in api.get_all(ctx)},
                       WAIT, 'the volume to go')
