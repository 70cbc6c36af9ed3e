"""os-hosts, the services' Nova binary names and the instance usage audit against the
devstack-style stack (separate daemons, RabbitMQ, MariaDB, the fake driver), driven by
openstackclient and openstacksdk: ``host list/show/set`` at 2.42, ``compute service
list --service nova-compute`` and ``compute service set HOST nova-compute`` (without a
microversion: the host/binary actions before 2.53), and the computes' periodic usage
audit as the API reports it.
"""
from __future__ import annotations

import time
from typing import Any

import pytest

from tests.devstack import clients

# The computes audit their usage: the log of the last period fills once each has run.
STACK = {'conf': {'DEFAULT': {'instance_usage_audit': True}}}

HOSTS_MV = ('--os-compute-api-version', '2.42')


def _hosts(stack, *args: str, **kwargs: Any) -> Any:
    return clients.osc(stack, *HOSTS_MV, 'host', *args, **kwargs)


def test_host_list_names_services_by_topic_and_zone(stack):
    rows = _hosts(stack, 'list')
    computes = {r['Host Name']: r['Zone'] for r in rows if r['Service'] == 'compute'}
    assert computes == {host: 'nova' for host in stack.computes}
    assert {r['Service'] for r in rows} == {'compute', 'conductor', 'scheduler'}
    assert {r['Zone'] for r in rows if r['Service'] != 'compute'} == {'internal'}
    assert {r['Host Name'] for r in _hosts(stack, 'list', '--zone', 'nova')} == set(
        stack.computes)
    # Gone from 2.43, as in Nova.
    assert stack.api('GET', '/os-hosts', microversion='2.43').status_code == 404


def test_host_show_is_the_resource_table(stack):
    host = stack.computes[0]
    rows = _hosts(stack, 'show', host)
    assert [r['Project'] for r in rows][:3] == ['(total)', '(used_now)', '(used_max)']
    assert {r['Host'] for r in rows} == {host}
    assert rows[0]['CPU'] > 0 and rows[0]['Memory MB'] > 0
    with pytest.raises(clients.CommandFailed):
        _hosts(stack, 'show', 'no-such-host')


def test_host_set_reaches_the_compute_which_answers(stack):
    host = stack.computes[0]
    _hosts(stack, 'set', '--disable', '--enable-maintenance', host, fmt_json=False)
    _hosts(stack, 'set', '--enable', '--disable-maintenance', host, fmt_json=False)
    # openstackclient prints nothing: the compute's answer, through the API.
    resp = stack.api('PUT', '/os-hosts/%s' % host, microversion='2.42',
                     json={'status': 'disable', 'maintenance_mode': 'enable'})
    assert resp.json() == {'host': host, 'status': 'disabled',
                           'maintenance_mode': 'on_maintenance'}
    with pytest.raises(clients.CommandFailed):
        _hosts(stack, 'set', '--enable', 'no-such-host', fmt_json=False)


@pytest.mark.parametrize('action', ['reboot', 'shutdown', 'startup'])
def test_host_power_actions_answer_as_the_fake_driver(stack, action):
    host = stack.computes[1]
    resp = stack.api('GET', '/os-hosts/%s/%s' % (host, action), microversion='2.42')
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'host': host, 'power_action': action}


@pytest.mark.parametrize('name', ['nova-compute', 'novalite-compute'])
def test_compute_service_list_by_nova_binary(stack, name):
    rows = clients.osc(stack, 'compute', 'service', 'list', '--service', name)
    assert sorted((r['Host'], r['Binary']) for r in rows) == sorted(
        (host, 'nova-compute') for host in stack.computes)
    everything = {r['Binary'] for r in clients.osc(stack, 'compute', 'service', 'list')}
    assert everything == {'nova-compute', 'nova-conductor', 'nova-scheduler'}


def test_compute_service_set_by_host_and_nova_binary(stack):
    """Without a microversion openstackclient sends PUT /os-services/disable."""
    host = stack.computes[1]
    clients.osc(stack, 'compute', 'service', 'set', host, 'nova-compute', '--disable',
                '--disable-reason', 'devstack test', fmt_json=False)
    try:
        rows = clients.osc(stack, 'compute', 'service', 'list', '--host', host,
                           '--service', 'nova-compute', '--long')
        assert [(r['Status'], r['Disabled Reason']) for r in rows] == [
            ('disabled', 'devstack test')]
    finally:
        clients.osc(stack, 'compute', 'service', 'set', host, 'nova-compute', '--enable',
                    fmt_json=False)
    conn = clients.sdk(stack)
    services = [s for s in conn.compute.services(binary='nova-compute') if s.host == host]
    assert [(s.binary, s.status) for s in services] == [('nova-compute', 'enabled')]
    with pytest.raises(clients.CommandFailed):
        clients.osc(stack, 'compute', 'service', 'set', 'controller', 'nova-scheduler',
                    '--disable', fmt_json=False)


def test_usage_audit_of_every_compute_is_reported(stack):
    """The computes' periodic audit runs a minute after they start."""
    deadline = time.monotonic() + 240
    while True:
        resp = stack.api('GET', '/os-instance_usage_audit_log')
        assert resp.status_code == 200, resp.text
        log = resp.json()['instance_usage_audit_logs']
        if log['num_hosts_done'] == len(stack.computes):
            break
        assert time.monotonic() < deadline, log
        time.sleep(5)
    assert log['overall_status'] == 'ALL hosts done. 0 errors.'
    assert log['hosts_not_run'] == [] and set(log['log']) == set(stack.computes)
    assert {entry['state'] for entry in log['log'].values()} == {'DONE'}
    shown = stack.api('GET', '/os-instance_usage_audit_log/%s'
                      % log['period_ending'].replace(' ', '%20')).json()
    assert shown['instance_usage_audit_log']['num_hosts_done'] == 0
