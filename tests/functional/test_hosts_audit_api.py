"""os-hosts (until 2.42) and os-instance_usage_audit_log through the real stack on the
fake driver: the host list and resource table, what the computes answer to updates and
power actions (the fake driver's answers, and a driver that cannot: 501), and the
compute's periodic usage audit written through the conductor and reported by the API."""
from __future__ import annotations

import datetime

import pytest
from oslo_messaging.notify import _impl_test

from novalite import context as nl_context
from novalite import objects
from novalite.compute import usage_audit
from novalite.conf import CONF
from tests.functional import notifier

ADMIN = 'admin:admin'
OWNER = 'alice:proj-a'
OLD = '2.42'


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.hosts', 'ram': 128, 'vcpus': 2, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    body = {'server': {'name': 'hosts-vm', 'imageRef': stack.image['id'],
                       'flavorRef': flavor_id, 'networks': 'none'}}
    resp = stack.request('POST', '/servers', token=OWNER, version='2.37', json=body)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    yield stack.wait_for_status(server_id, ('ACTIVE',), token=ADMIN)
    stack.request('DELETE', '/servers/%s' % server_id, token=OWNER)
    stack.wait_for_deleted(server_id, token=OWNER)


def _hosts(stack, path, version=OLD, method='GET', token=ADMIN, **kwargs):
    return stack.request(method, '/os-hosts' + path, token=token, version=version,
                         **kwargs)


# -- os-hosts ------------------------------------------------------------------------------

def test_list_names_each_enabled_service_by_topic_and_zone(stack):
    resp = _hosts(stack, '', version='2.1')
    assert resp.status_code == 200, resp.text
    rows = {(h['host_name'], h['service']): h['zone'] for h in resp.json()['hosts']}
    assert rows[('host1', 'compute')] == rows[('host2', 'compute')] == 'nova'
    assert {s for _h, s in rows} == {'compute', 'conductor', 'scheduler'}
    assert {z for (_h, s), z in rows.items() if s != 'compute'} == {'internal'}
    zoned = _hosts(stack, '?zone=internal').json()['hosts']
    assert zoned and {h['zone'] for h in zoned} == {'internal'}
    assert _hosts(stack, '?zone=nowhere').json() == {'hosts': []}
    assert _hosts(stack, '', version='2.43').status_code == 404
    assert _hosts(stack, '', token=OWNER).status_code == 403


def test_list_leaves_disabled_services_out(stack):
    services = stack.request('GET', '/os-services?host=host2&binary=nova-compute',
                             version='2.53').json()['services']
    path = '/os-services/%s' % services[0]['id']
    stack.request('PUT', path, version='2.53', json={'status': 'disabled'})
    try:
        listed = {h['host_name'] for h in _hosts(stack, '').json()['hosts']}
        assert 'host2' not in listed and 'host1' in listed
    finally:
        stack.request('PUT', path, version='2.53', json={'status': 'enabled'})


def test_show_is_the_resource_table_of_the_host(stack, server):
    host = server['OS-EXT-SRV-ATTR:host']
    resp = _hosts(stack, '/%s' % host)
    assert resp.status_code == 200, resp.text
    rows = {r['resource']['project']: r['resource'] for r in resp.json()['host']}
    assert list(rows)[:3] == ['(total)', '(used_now)', '(used_max)']
    assert rows['(total)']['host'] == host and rows['(total)']['cpu'] > 0
    assert (rows['proj-a']['cpu'], rows['proj-a']['memory_mb'],
            rows['proj-a']['disk_gb']) == (2, 128, 1)
    assert rows['(used_max)']['cpu'] >= 2
    missing = _hosts(stack, '/nowhere')
    assert missing.status_code == 404
    assert missing.json()['itemNotFound']['message'] == \
        "Host 'nowhere' is not mapped to any cell"
    assert _hosts(stack, '/%s' % host, version='2.43').status_code == 404


@pytest.mark.parametrize('body,answer', [
    ({'status': 'disable'}, {'status': 'disabled'}),
    ({'status': 'ENABLE'}, {'status': 'enabled'}),
    ({'maintenance_mode': 'Enable'}, {'maintenance_mode': 'on_maintenance'}),
    ({'status': 'enable', 'maintenance_mode': 'disable'},
     {'status': 'enabled', 'maintenance_mode': 'off_maintenance'}),
])
def test_update_answers_what_the_fake_driver_says(stack, body, answer):
    resp = _hosts(stack, '/host1', method='PUT', json=body)
    assert resp.status_code == 200, resp.text
    assert resp.json() == dict(answer, host='host1')


@pytest.mark.parametrize('body', [{}, {'status': 'off'}, {'status': 'enable', 'x': 1},
                                  {'maintenance_mode': True}])
def test_update_refuses_bodies_nova_refuses(stack, body):
    resp = _hosts(stack, '/host1', method='PUT', json=body)
    assert resp.status_code == 400, resp.text


def test_update_of_unknown_or_down_hosts(stack):
    resp = _hosts(stack, '/nowhere', method='PUT', json={'status': 'enable'})
    assert resp.status_code == 404
    services = stack.request('GET', '/os-services?host=host2&binary=nova-compute',
                             version='2.53').json()['services']
    path = '/os-services/%s' % services[0]['id']
    stack.request('PUT', path, version='2.53', json={'forced_down': True})
    try:
        resp = _hosts(stack, '/host2', method='PUT', json={'status': 'enable'})
        assert resp.status_code == 400
        assert resp.json()['badRequest']['message'] == \
            'Compute service of host2 is unavailable at this time.'
    finally:
        stack.request('PUT', path, version='2.53', json={'forced_down': False})


@pytest.mark.parametrize('action', ['reboot', 'shutdown', 'startup'])
def test_power_actions_answer_the_action(stack, action):
    resp = _hosts(stack, '/host1/%s' % action)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'host': 'host1', 'power_action': action}
    assert _hosts(stack, '/host1/%s' % action, token=OWNER).status_code == 403
    assert _hosts(stack, '/host1/%s' % action, version='2.43').status_code == 404
    assert _hosts(stack, '/nowhere/%s' % action).status_code == 404


def _not_implemented(*args, **kwargs):
    raise NotImplementedError()


def test_a_driver_without_host_power_or_maintenance_answers_501(stack, monkeypatch):
    """What the libvirt driver inherits from the driver interface."""
    driver = stack.computes['host2'].manager.driver
    for name in ('host_power_action', 'host_maintenance_mode', 'set_host_enabled'):
        monkeypatch.setattr(driver, name, _not_implemented)
    resp = _hosts(stack, '/host2/reboot')
    assert resp.status_code == 501
    assert resp.json()['notImplemented']['message'] == \
        'The requested functionality is not supported.'
    resp = _hosts(stack, '/host2', method='PUT', json={'maintenance_mode': 'enable'})
    assert resp.status_code == 501
    # Nova's compute answers a status change itself when its driver has nothing to do.
    resp = _hosts(stack, '/host2', method='PUT', json={'status': 'disable'})
    assert resp.json() == {'host': 'host2', 'status': 'disabled'}
    # The host is tagged disabled in Placement now: untag it for the next tests.
    assert _hosts(stack, '/host2', method='PUT', json={'status': 'enable'}).json() == \
        {'host': 'host2', 'status': 'enabled'}


# -- os-instance_usage_audit_log ----------------------------------------------------------

def _audit(stack, path='', version='2.1', token=ADMIN):
    return stack.request('GET', '/os-instance_usage_audit_log' + path, token=token,
                         version=version)


def test_audit_log_before_any_audit_lists_every_compute_as_not_run(stack):
    resp = _audit(stack, '/2000-01-15 10:00:00')
    assert resp.status_code == 200, resp.text
    log = resp.json()['instance_usage_audit_log']
    assert (log['period_beginning'], log['period_ending']) == (
        '1999-12-01 00:00:00', '2000-01-01 00:00:00')
    assert sorted(log['hosts_not_run']) == ['host1', 'host2']
    assert (log['num_hosts'], log['num_hosts_done'], log['num_hosts_not_run']) == (2, 0, 2)
    assert log['overall_status'] == '0 of 2 hosts done. 0 errors.'
    assert log['log'] == {}


@pytest.mark.parametrize('before', ['yesterday', '2020-13-01 00:00:00',
                                    '2020-01-01T00:00:00'])
def test_audit_log_refuses_a_bad_timestamp(stack, before):
    resp = _audit(stack, '/%s' % before)
    assert resp.status_code == 400
    assert resp.json()['badRequest']['message'] == 'Invalid timestamp for date %s' % before


def test_audit_log_is_for_administrators(stack):
    assert _audit(stack, token=OWNER).status_code == 403
    assert _audit(stack, '/2020-01-01 00:00:00', token=OWNER).status_code == 403


def test_audit_log_ignores_parameters_until_2_102(stack):
    assert stack.request('GET', '/os-instance_usage_audit_log?foo=1').status_code == 200


def _launched_long_ago(server_id):
    ctx = nl_context.get_admin_context()
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctx, server_id)
    with nl_context.target_cell(ctx, mapping.cell_mapping) as cctxt:
        instance = objects.Instance.get_by_uuid(cctxt, server_id)
        instance.launched_at = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
        instance.save()


def test_periodic_audit_records_each_host_and_notifies_instance_exists(stack, server):
    host = server['OS-EXT-SRV-ATTR:host']
    _launched_long_ago(server['id'])
    begin, end = usage_audit.last_completed_audit_period()
    CONF.set_override('instance_usage_audit', True)
    try:
        with notifier.kept() as kept:
            for svc in list(stack.computes.values()):
                svc._call(svc.manager._instance_usage_audit,
                          nl_context.get_admin_context())
            exists = [m for _c, m, _p, _r in kept if m['event_type'] == 'instance.exists']
            # A second run in the same period does nothing.
            svc = stack.computes[host]
            svc._call(svc.manager._instance_usage_audit, nl_context.get_admin_context())
            assert len([m for _c, m, _p, _r in kept
                        if m['event_type'] == 'instance.exists']) == len(exists)
    finally:
        CONF.clear_override('instance_usage_audit')
        _impl_test.reset()
    assert [m['payload']['nova_object.data']['uuid'] for m in exists] == [server['id']]
    payload = exists[0]['payload']
    assert payload['nova_object.name'] == 'InstanceExistsPayload'
    assert payload['nova_object.data']['audit_period']['nova_object.data'] == {
        'audit_period_beginning': begin.isoformat(), 'audit_period_ending': end.isoformat()}
    assert exists[0]['publisher_id'] == 'novalite-compute:%s' % host

    log = _audit(stack).json()['instance_usage_audit_logs']
    assert (log['period_beginning'], log['period_ending']) == (str(begin), str(end))
    assert (log['num_hosts'], log['num_hosts_done'], log['num_hosts_running'],
            log['num_hosts_not_run'], log['hosts_not_run']) == (2, 2, 0, 0, [])
    assert (log['total_instances'], log['total_errors']) == (1, 0)
    assert log['overall_status'] == 'ALL hosts done. 0 errors.'
    assert log['log'][host]['state'] == 'DONE'
    assert log['log'][host]['instances'] == 1
    assert log['log'][host]['message'].startswith(
        'Instance usage audit ran for host %s, 1 instances in ' % host)
    # The same period, asked for by a time inside the next one.
    shown = _audit(stack, '/%s' % (end + datetime.timedelta(seconds=1))).json()
    assert shown['instance_usage_audit_log'] == log


# -- the status trait the scheduler's Placement query forbids ------------------------------

def _status_trait_on(stack, host):
    hypervisors = stack.request('GET', '/os-hypervisors?hypervisor_hostname_pattern=%s'
                                % host, version='2.53').json()['hypervisors']
    # From 2.53 a hypervisor's id is its compute node's uuid, its provider's uuid too.
    traits = stack.placement_get('/resource_providers/%s/traits' % hypervisors[0]['id'])
    return 'COMPUTE_STATUS_DISABLED' in traits['traits']


def test_a_disabled_compute_is_tagged_in_placement_at_once(stack):
    services = stack.request('GET', '/os-services?host=host2&binary=nova-compute',
                             version='2.53').json()['services']
    path = '/os-services/%s' % services[0]['id']
    assert not _status_trait_on(stack, 'host2')
    assert stack.request('PUT', path, version='2.53',
                         json={'status': 'disabled'}).status_code == 200
    try:
        assert _status_trait_on(stack, 'host2')
        assert not _status_trait_on(stack, 'host1')
    finally:
        assert stack.request('PUT', path, version='2.53',
                             json={'status': 'enabled'}).status_code == 200
    assert not _status_trait_on(stack, 'host2')
    # Before 2.53, by host and binary (openstackclient's compute service set).
    body = {'host': 'host2', 'binary': 'nova-compute'}
    assert stack.request('PUT', '/os-services/disable', json=body).status_code == 200
    try:
        assert _status_trait_on(stack, 'host2')
    finally:
        stack.request('PUT', '/os-services/enable', json=body)
    assert not _status_trait_on(stack, 'host2')


def test_os_hosts_status_tags_the_host_as_nova_does(stack):
    assert _hosts(stack, '/host1', method='PUT', json={'status': 'disable'}).json() == \
        {'host': 'host1', 'status': 'disabled'}
    try:
        assert _status_trait_on(stack, 'host1')
    finally:
        _hosts(stack, '/host1', method='PUT', json={'status': 'enable'})
    assert not _status_trait_on(stack, 'host1')
