"""Server power actions and console output through the real stack on the fake driver."""
from __future__ import annotations

import time

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import power_state

LATEST = '2.104'
OWNER = 'alice:proj-a'
OTHER = 'bob:proj-b'


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.power', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture
def server(stack, flavor_id):
    body = {'server': {'name': 'power-vm', 'imageRef': stack.image['id'],
                       'flavorRef': flavor_id, 'networks': 'none'}}
    resp = _req(stack, 'POST', '/servers', json=body)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    yield stack.wait_for_status(server_id, ('ACTIVE',), token=OWNER)
    _req(stack, 'DELETE', '/servers/%s' % server_id)
    stack.wait_for_deleted(server_id, token=OWNER)


def _req(stack, method, path, token=OWNER, version=LATEST, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


def _action(stack, server_id, body, token=OWNER):
    return _req(stack, 'POST', '/servers/%s/action' % server_id, token=token, json=body)


def _settled(stack, server_id, timeout=20.0):
    """The server once no task is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = _req(stack, 'GET', '/servers/%s' % server_id).json()['server']
        if server['OS-EXT-STS:task_state'] is None:
            return server
        time.sleep(0.05)
    raise AssertionError('server %s still has a task' % server_id)


def _events(stack, server_id, action):
    path = '/servers/%s/os-instance-actions' % server_id
    actions = [a for a in _req(stack, 'GET', path).json()['instanceActions']
               if a['action'] == action]
    assert len(actions) == 1, actions
    member = _req(stack, 'GET', '%s/%s' % (path, actions[0]['request_id']),
                  token='admin:admin').json()['instanceAction']
    return {e['event']: e for e in member['events']}


def test_stop_start_and_reboot(stack, server):
    server_id = server['id']
    resp = _action(stack, server_id, {'os-stop': None})
    assert resp.status_code == 202, resp.text
    stopped = stack.wait_for_status(server_id, ('SHUTOFF',), token=OWNER)
    stopped = _settled(stack, server_id)
    assert stopped['OS-EXT-STS:vm_state'] == 'stopped'
    assert stopped['OS-EXT-STS:power_state'] == power_state.SHUTDOWN

    assert _action(stack, server_id, {'os-start': {}}).status_code == 202
    started = stack.wait_for_status(server_id, ('ACTIVE',), token=OWNER)
    started = _settled(stack, server_id)
    assert started['OS-EXT-STS:vm_state'] == 'active'
    assert started['OS-EXT-STS:power_state'] == power_state.RUNNING

    for kind in ('SOFT', 'hard'):
        resp = _action(stack, server_id, {'reboot': {'type': kind}})
        assert resp.status_code == 202, resp.text
        rebooted = _settled(stack, server_id)
        assert rebooted['status'] == 'ACTIVE'
        assert rebooted['OS-EXT-STS:power_state'] == power_state.RUNNING

    for action, event in (('stop', 'compute_stop_instance'),
                          ('start', 'compute_start_instance')):
        events = _events(stack, server_id, action)
        assert events[event]['result'] == 'Success'
        assert events[event]['host'] in stack.computes
    reboots = [a for a in _req(stack, 'GET', '/servers/%s/os-instance-actions'
                               % server_id).json()['instanceActions']
               if a['action'] == 'reboot']
    assert len(reboots) == 2


def test_stop_of_a_stopped_server_is_a_conflict(stack, server):
    server_id = server['id']
    assert _action(stack, server_id, {'os-stop': None}).status_code == 202
    stack.wait_for_status(server_id, ('SHUTOFF',), token=OWNER)
    _settled(stack, server_id)
    resp = _action(stack, server_id, {'os-stop': None})
    assert resp.status_code == 409
    assert resp.json()['conflictingRequest']['message'] == (
        "Cannot 'stop' instance %s while it is in vm_state stopped" % server_id)
    soft = _action(stack, server_id, {'reboot': {'type': 'SOFT'}})
    assert soft.status_code == 409
    # A hard reboot is how a stopped server is brought back as well.
    assert _action(stack, server_id, {'reboot': {'type': 'HARD'}}).status_code == 202
    assert _settled(stack, server_id)['status'] == 'ACTIVE'
    resp = _action(stack, server_id, {'os-start': None})
    assert resp.status_code == 409
    assert "Cannot 'start' instance" in resp.json()['conflictingRequest']['message']


def test_console_output(stack, server):
    server_id = server['id']
    resp = _action(stack, server_id, {'os-getConsoleOutput': {}})
    assert resp.status_code == 200, resp.text
    output = resp.json()['output']
    assert server_id in output and len(output.splitlines()) == 3
    last = _action(stack, server_id, {'os-getConsoleOutput': {'length': 1}}).json()
    assert last == {'output': output.splitlines()[-1]}
    every = _action(stack, server_id, {'os-getConsoleOutput': {'length': '-1'}}).json()
    assert every['output'] == output
    bad = _action(stack, server_id, {'os-getConsoleOutput': {'length': -2}})
    assert bad.status_code == 400


def test_other_projects_and_bad_bodies(stack, server):
    server_id = server['id']
    for body in ({'os-stop': None}, {'os-start': None}, {'reboot': {'type': 'HARD'}},
                 {'os-getConsoleOutput': {}}):
        resp = _action(stack, server_id, body, token=OTHER)
        assert resp.status_code == 404, resp.text
    assert _action(stack, server_id, {'reboot': {'type': 'WARM'}}).status_code == 400
    assert _action(stack, server_id, {'reboot': {}}).status_code == 400
    resp = _action(stack, server_id, {'os-fly': None})
    assert resp.status_code == 400
    assert 'There is no such action: os-fly' in resp.text
    assert _action(stack, server_id, {'os-stop': None, 'os-start': None}).status_code == 400
    assert _action(stack, 'nope', {'os-stop': None}).status_code == 404


def test_a_failed_stop_rolls_back_with_a_fault(stack, server, monkeypatch):
    server_id = server['id']
    host = _req(stack, 'GET', '/servers/%s' % server_id,
                token='admin:admin').json()['server']['OS-EXT-SRV-ATTR:host']
    driver = stack.computes[host].manager.driver

    def power_off(instance, timeout=0, retry_interval=0):
        raise RuntimeError('the hypervisor refused')
    monkeypatch.setattr(driver, 'power_off', power_off)
    assert _action(stack, server_id, {'os-stop': None}).status_code == 202
    after = _settled(stack, server_id)
    assert after['status'] == 'ACTIVE'
    assert after['OS-EXT-STS:power_state'] == power_state.RUNNING
    event = _events(stack, server_id, 'stop')['compute_stop_instance']
    assert event['result'] == 'Error'
    assert 'the hypervisor refused' in event['traceback']
    # The fault is recorded, though the API shows faults of ERROR servers only.
    ctxt = nl_context.get_admin_context()
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, server_id)
    with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
        fault = objects.InstanceFault.get_latest_for_instance(cctxt, server_id)
    assert 'hypervisor refused' in fault.message + (fault.details or '')
