"""Remote consoles through the REST API on the fake driver: every route and microversion,
policies, 409 states, console tokens (shown to admins, expiring, gone with their server,
redeemed once) and the fake guest's console listener behind a token."""
from __future__ import annotations

import socket
import uuid
from urllib import parse

import pytest
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.conf import CONF
from novalite.console import auth
from novalite.virt import fake
from tests.functional import test_response_schemas as rs
from tests.functional.stack import Stack

OWNER, OTHER, ADMIN = 'alice:proj-a', 'bob:proj-b', 'admin:admin'
# The console URLs the stack's configuration gives ([vnc] and [serial_console] defaults).
NOVNC_BASE = CONF.vnc.novncproxy_base_url
SERIAL_BASE = CONF.serial_console.base_url


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    stack = Stack(str(tmp_path_factory.mktemp('stack')),
                  overrides={('serial_console', 'enabled'): True})
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope='module')
def server(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'fk.console', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return _boot(stack, resp.json()['flavor']['id'])


def _boot(stack, flavor_id):
    resp = stack.request('POST', '/servers', token=OWNER, json={'server': {
        'name': 'console-vm', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none'}}, version='2.37')
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    stack.wait_for_status(server_id, ('ACTIVE',))
    return server_id


def _console(stack, server_id, protocol='vnc', console_type='novnc', token=OWNER,
             version='2.6', code=200):
    resp = stack.request('POST', '/servers/%s/remote-consoles' % server_id, token=token,
                         version=version, json={'remote_console': {
                             'protocol': protocol, 'type': console_type}})
    assert resp.status_code == code, resp.text
    return resp.json()


def _action(stack, server_id, key, console_type, version='2.1', code=200, token=OWNER):
    resp = stack.request('POST', '/servers/%s/action' % server_id, token=token,
                         version=version, json={key: {'type': console_type}})
    assert resp.status_code == code, resp.text
    return resp.json()


def _token_of(url):
    query = parse.parse_qs(parse.urlparse(url).query)
    if 'path' in query:  # noVNC's: ?path=?token=...
        query = parse.parse_qs(parse.urlparse(query['path'][0]).query)
    return query['token'][0]


def _show_token(stack, token, token_user=ADMIN, version='2.31', code=200):
    resp = stack.request('GET', '/os-console-auth-tokens/%s' % token, token=token_user,
                         version=version)
    assert resp.status_code == code, resp.text
    return resp.json()


def _read_banner(port, expected):
    with socket.create_connection(('127.0.0.1', port), timeout=10) as sock:
        got = b''
        while len(got) < len(expected):
            chunk = sock.recv(1024)
            if not chunk:
                break
            got += chunk
        assert got == expected
        sock.sendall(b'hello')
        echoed = b''
        while len(echoed) < 5:
            chunk = sock.recv(1024)
            if not chunk:
                break
            echoed += chunk
        assert echoed == b'hello'


def test_novnc_url_token_shown_to_admins_and_console_answering(stack, server):
    body = _console(stack, server)['remote_console']
    assert (body['protocol'], body['type']) == ('vnc', 'novnc')
    assert body['url'].startswith(NOVNC_BASE + '?path=%3Ftoken%3D')
    token = _token_of(body['url'])
    shown = _show_token(stack, token)['console']
    assert shown['instance_uuid'] == server and shown['host'] == '127.0.0.1'
    assert shown['internal_access_path'] is None and set(shown) == {
        'instance_uuid', 'host', 'port', 'internal_access_path'}
    _read_banner(shown['port'], fake.VNC_BANNER)
    # Reading a token does not use it up; members may not read it; before 2.31 only
    # RDP's tokens were shown (gone with Hyper-V): 400.
    _show_token(stack, token)
    _show_token(stack, token, token_user=OWNER, code=403)
    _show_token(stack, token, version='2.30', code=400)
    _show_token(stack, 'not-a-token', code=404)
    # 2.99 refuses unknown query parameters, as Nova 34.
    resp = stack.request('GET', '/os-console-auth-tokens/%s?x=1' % token, version='2.99')
    assert resp.status_code == 400, resp.text


def test_serial_url_and_console(stack, server):
    body = _console(stack, server, 'serial', 'serial')['remote_console']
    assert body['url'].startswith(SERIAL_BASE + '?token=')
    shown = _show_token(stack, _token_of(body['url']))['console']
    _read_banner(shown['port'], fake.SERIAL_BANNER)


def test_a_token_is_redeemed_once(stack, server):
    token = _token_of(_console(stack, server)['remote_console']['url'])
    info = auth.redeem(nl_context.get_admin_context(), token)
    assert (info.instance_uuid, info.console_type, info.host) == (
        server, 'novnc', '127.0.0.1')
    with pytest.raises(exception.InvalidToken):
        auth.redeem(nl_context.get_admin_context(), token)
    _show_token(stack, token, code=404)


def test_an_expired_token_is_refused(stack, server):
    token = _token_of(_console(stack, server)['remote_console']['url'])
    timeutils.set_time_override()
    try:
        timeutils.advance_time_seconds(600)  # [consoleauth] token_ttl
        _show_token(stack, token, code=404)
        with pytest.raises(exception.InvalidToken):
            auth.redeem(nl_context.get_admin_context(), token)
    finally:
        timeutils.clear_time_override()


def test_legacy_actions_until_2_5(stack, server):
    for key, kind, base in (('os-getVNCConsole', 'novnc', NOVNC_BASE),
                            ('os-getSerialConsole', 'serial', SERIAL_BASE)):
        body = _action(stack, server, key, kind, version='2.5')['console']
        assert body['type'] == kind and body['url'].startswith(base), body
        _action(stack, server, key, kind, version='2.6', code=404)
    resp = _action(stack, server, 'os-getVNCConsole', 'xvpvnc', code=400)
    assert 'Invalid console type xvpvnc' in str(resp)
    resp = _action(stack, server, 'os-getSPICEConsole', 'spice-html5', code=400)
    assert 'Unavailable console type spice-html5.' in str(resp)
    _action(stack, server, 'os-getRDPConsole', 'rdp-html5', code=400)
    _action(stack, server, 'os-getSerialConsole', 'novnc', code=400)  # schema


def test_remote_consoles_microversions_and_unavailable_types(stack, server):
    _console(stack, server, version='2.5', code=404)
    for protocol, kind, version in (('spice', 'spice-html5', '2.6'),
                                    ('mks', 'webmks', '2.8'),
                                    ('spice', 'spice-direct', '2.99')):
        resp = _console(stack, server, protocol, kind, version=version, code=400)
        assert resp['badRequest']['message'] == 'Unavailable console type %s.' % kind
    resp = _console(stack, server, 'rdp', 'rdp-html5', code=400)
    assert resp['badRequest']['message'] == 'Unavailable console type rdp.'
    # Types a microversion does not know yet fail its schema.
    _console(stack, server, 'mks', 'webmks', version='2.7', code=400)
    _console(stack, server, 'spice', 'spice-direct', version='2.98', code=400)
    # A protocol with another protocol's type: the host says invalid.
    resp = _console(stack, server, 'vnc', 'serial', code=400)
    assert resp['badRequest']['message'] == 'Invalid console type serial'


def test_policy_other_projects_and_admins(stack, server):
    _console(stack, server, token=OTHER, code=404)
    _action(stack, server, 'os-getVNCConsole', 'novnc', token=OTHER, code=404)
    _console(stack, server, token=ADMIN)


def test_stopped_server_answers_409_and_deleted_server_drops_its_tokens(stack, server):
    flavor = stack.request('GET', '/flavors/detail').json()['flavors'][0]['id']
    doomed = _boot(stack, flavor)
    token = _token_of(_console(stack, doomed)['remote_console']['url'])
    port = _show_token(stack, token)['console']['port']
    resp = stack.request('POST', '/servers/%s/action' % doomed, token=OWNER,
                         json={'os-stop': None})
    assert resp.status_code == 202, resp.text
    stack.wait_for_status(doomed, ('SHUTOFF',))
    resp = _console(stack, doomed, code=409)
    assert "while it is in vm_state stopped" in resp['conflictingRequest']['message']
    _action(stack, doomed, 'os-getVNCConsole', 'novnc', code=409)
    # The guest's console closed with its power.
    with pytest.raises(OSError):
        socket.create_connection(('127.0.0.1', port), timeout=5).close()
    assert stack.request('DELETE', '/servers/%s' % doomed, token=OWNER).status_code == 204
    stack.wait_for_deleted(doomed)
    _show_token(stack, token, code=404)
    with pytest.raises(exception.InvalidToken):
        auth.redeem(nl_context.get_admin_context(), token)


@pytest.mark.parametrize('version', ['2.1', '2.6', '2.8', '2.99', rs.LATEST])
def test_responses_match_tempests_schemas(stack, server, version):
    """Nova's response schemas as tempest publishes them (tests/functional/
    test_response_schemas.py's rules: the newest schema at or below the version)."""
    if version == '2.1':
        for key, kind in (('os-getVNCConsole', 'novnc'), ('os-getSerialConsole', 'serial')):
            rs.check(stack, 'POST', '/servers/%s/action' % server, 'servers',
                     'get_vnc_console', version, {key: {'type': kind}}, token=OWNER)
        return
    for protocol, kind in (('vnc', 'novnc'), ('serial', 'serial')):
        body = rs.check(stack, 'POST', '/servers/%s/remote-consoles' % server, 'servers',
                        'get_remote_consoles', version,
                        {'remote_console': {'protocol': protocol, 'type': kind}},
                        token=OWNER)
    if version in ('2.99', rs.LATEST):
        rs.check(stack, 'GET', '/os-console-auth-tokens/%s'
                 % _token_of(body['remote_console']['url']), 'servers',
                 'console_auth_tokens', version)


def test_consoles_turned_off_answer_unavailable(stack, server):
    for group, protocol, kind in (('vnc', 'vnc', 'novnc'),
                                  ('serial_console', 'serial', 'serial')):
        CONF.set_override('enabled', False, group=group)
        try:
            resp = _console(stack, server, protocol, kind, code=400)
        finally:
            CONF.clear_override('enabled', group=group)
        assert resp['badRequest']['message'] == 'Unavailable console type %s.' % kind


def test_expired_tokens_are_purged_by_the_hosts_periodic_task(stack, server):
    token = _token_of(_console(stack, server)['remote_console']['url'])
    host = stack.request('GET', '/servers/%s' % server).json()['server'][
        'OS-EXT-SRV-ATTR:host']
    manager = stack.computes[host].manager
    timeutils.set_time_override()
    try:
        timeutils.advance_time_seconds(600)
        manager._cleanup_expired_console_auth_tokens(nl_context.get_admin_context())
    finally:
        timeutils.clear_time_override()
    # Back in its lifetime, the token would show again had the task left its row.
    _show_token(stack, token, code=404)


def test_the_fake_guests_console_needs_a_running_guest(stack, server):
    host = stack.request('GET', '/servers/%s' % server).json()['server'][
        'OS-EXT-SRV-ATTR:host']
    driver = stack.computes[host].manager.driver
    ctxt = nl_context.get_admin_context()
    instance = objects.Instance(uuid=server)
    port = driver.get_vnc_console(ctxt, instance).port
    assert driver.get_vnc_console(ctxt, instance).port == port  # one listener per guest
    driver.pause(instance)
    try:
        assert driver.get_serial_console(ctxt, instance).port != port
    finally:
        driver.unpause(instance)
    driver.power_off(instance)
    try:
        with pytest.raises(exception.ConsoleNotAvailable):
            driver.get_vnc_console(ctxt, instance)
    finally:
        driver.power_on(ctxt, instance)
    with pytest.raises(exception.InstanceNotFound):
        driver.get_vnc_console(ctxt, objects.Instance(uuid=str(uuid.uuid4())))


def test_a_migrated_server_drops_its_tokens(stack, server):
    """A token names the old host's console: once the server moves it is refused."""
    flavor = stack.request('GET', '/flavors/detail').json()['flavors'][0]['id']
    moving = _boot(stack, flavor)
    token = _token_of(_console(stack, moving)['remote_console']['url'])
    _show_token(stack, token)
    resp = stack.request('POST', '/servers/%s/action' % moving, token=ADMIN,
                         json={'migrate': None})
    assert resp.status_code == 202, resp.text
    stack.wait_for_status(moving, ('VERIFY_RESIZE',))
    _show_token(stack, token, code=404)
    with pytest.raises(exception.InvalidToken):
        auth.redeem(nl_context.get_admin_context(), token)
    assert stack.request('DELETE', '/servers/%s' % moving, token=OWNER).status_code == 204
    stack.wait_for_deleted(moving)


def test_a_shelved_offloaded_server_drops_its_tokens(stack, server):
    flavor = stack.request('GET', '/flavors/detail').json()['flavors'][0]['id']
    shelved = _boot(stack, flavor)
    token = _token_of(_console(stack, shelved)['remote_console']['url'])
    resp = stack.request('POST', '/servers/%s/action' % shelved, token=OWNER,
                         json={'shelve': None})
    assert resp.status_code == 202, resp.text
    stack.wait_for_status(shelved, ('SHELVED_OFFLOADED',))
    _show_token(stack, token, code=404)
    assert stack.request('DELETE', '/servers/%s' % shelved, token=OWNER).status_code == 204
    stack.wait_for_deleted(shelved)
