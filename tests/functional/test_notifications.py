"""Versioned notifications of the boot, power actions, delete and a failed build, sent
through oslo.messaging's ``test`` notifier driver (which keeps what it is given)."""
from __future__ import annotations

import time

import pytest
from oslo_messaging.notify import _impl_test

from novalite.conf import CONF
from tests.functional import notifier

VERSION = '2.47'


@pytest.fixture(scope='module')
def notified(stack):
    """The stack's notifier, on the ``test`` driver for this module."""
    with notifier.kept():
        yield


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.notify', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _events(server_id):
    return [(message['event_type'], priority, message['publisher_id'],
             message['payload'])
            for _ctx, message, priority, _retry in list(_impl_test.NOTIFICATIONS)
            if message['payload']['nova_object.data']['uuid'] == server_id]


def _wait_events(server_id, wanted, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = [e[0] for e in _events(server_id)]
        if all(name in names for name in wanted):
            return _events(server_id)
        time.sleep(0.05)
    raise AssertionError('missing %s in %s' % (wanted, [e[0] for e in _events(server_id)]))


def _boot(stack, flavor_id):
    resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
        'name': 'notify-vm', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


def _action(stack, server_id, body, status):
    resp = stack.request('POST', '/servers/%s/action' % server_id, json=body,
                         version=VERSION)
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(server_id, (status,), version=VERSION)
    return server


def test_lifecycle_sends_start_and_end_of_each_action(stack, notified, flavor_id):
    server_id = _boot(stack, flavor_id)
    server = stack.wait_for_status(server_id, ('ACTIVE',), version=VERSION)
    host = server['OS-EXT-SRV-ATTR:host']
    events = _wait_events(server_id, ['instance.create.start', 'instance.create.end'])
    name, priority, publisher, payload = events[-1]
    assert (name, priority, publisher) == ('instance.create.end', 'INFO',
                                           'novalite-compute:%s' % host)
    assert payload['nova_object.name'] == 'InstanceActionPayload'
    data = payload['nova_object.data']
    assert (data['state'], data['power_state'], data['host']) == ('active', 'running', host)
    assert data['flavor']['nova_object.data']['memory_mb'] == 128

    _action(stack, server_id, {'os-stop': None}, 'SHUTOFF')
    _wait_events(server_id, ['instance.power_off.start', 'instance.power_off.end'])
    _action(stack, server_id, {'os-start': None}, 'ACTIVE')
    _wait_events(server_id, ['instance.power_on.start', 'instance.power_on.end'])
    _action(stack, server_id, {'reboot': {'type': 'HARD'}}, 'ACTIVE')
    _wait_events(server_id, ['instance.reboot.start', 'instance.reboot.end'])

    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
    events = _wait_events(server_id, ['instance.delete.start', 'instance.delete.end'])
    names = [e[0] for e in events]
    assert names.index('instance.delete.start') < names.index('instance.delete.end')
    assert names[:2] == ['instance.create.start', 'instance.create.end']


def test_failed_build_sends_create_error_with_the_exception(stack, notified, flavor_id):
    CONF.set_override('fail_spawn_on_hosts', list(stack.compute_hosts), group='fake_driver')
    try:
        server_id = _boot(stack, flavor_id)
        stack.wait_for_status(server_id, ('ERROR',), version=VERSION)
    finally:
        CONF.clear_override('fail_spawn_on_hosts', group='fake_driver')
    errors = [e for e in _events(server_id) if e[0] == 'instance.create.error']
    assert errors and errors[0][1] == 'ERROR'
    fault = errors[0][3]['nova_object.data']['fault']['nova_object.data']
    assert fault['exception'] == 'ComputeResourcesUnavailable'
    assert 'fake driver told to fail spawn' in fault['exception_message']
    stack.request('DELETE', '/servers/%s' % server_id)
    stack.wait_for_deleted(server_id)
