"""The API's plumbing against the devstack-style stack (separate daemons, RabbitMQ,
MariaDB), driven by openstackclient and openstacksdk: an extra ``--config-file`` for
every daemon (soft delete tried with it), the clouds.yaml that names only the services
the stack runs, ``/extensions``, the ``/v2`` endpoint, Nova's routing, and the action
bodies many clients send (``{"confirmResize": {}}``).
"""
from __future__ import annotations

import os
import tempfile

import pytest
import requests

from tests.devstack import clients

# A config file for every daemon, as a user would pass with --config-file: soft delete.
EXTRA_CONF = os.path.join(tempfile.gettempdir(), 'novalite-test-api-plumbing.conf')
with open(EXTRA_CONF, 'w') as _out:
    _out.write('[DEFAULT]\nreclaim_instance_interval = 3600\n')

STACK = {'config_files': [EXTRA_CONF]}




def _boot(stack, name: str) -> str:
    created = clients.osc(stack, 'server', 'create', '--image', 'cirros-tiny', '--flavor',
                          'm1.nano', '--nic', 'none', '--wait', name)
    assert created['status'] == 'ACTIVE', created
    return created['id']


def test_the_extra_config_file_reaches_every_daemon(stack):
    for name, daemon in stack.daemons.items():
        assert daemon.argv[-2:] == ['--config-file', EXTRA_CONF], name
    # The API and the computes read reclaim_instance_interval from it: delete is soft.
    server = _boot(stack, 'plumbing-soft')
    try:
        clients.osc(stack, 'server', 'delete', server, fmt_json=False)
        assert clients.wait_status(stack, server, 'SOFT_DELETED')['status'] == 'SOFT_DELETED'
        clients.osc(stack, 'server', 'restore', server, fmt_json=False)
        clients.wait_status(stack, server, 'ACTIVE')
    finally:
        clients.osc(stack, 'server', 'delete', '--force', '--wait', server, fmt_json=False)
    assert stack.api('GET', '/servers/%s' % server).status_code == 404


def test_clouds_yaml_names_only_the_services_the_stack_runs(stack):
    with pytest.raises(clients.CommandFailed) as failed:
        clients.osc(stack, 'volume', 'list')
    assert "Service 'block-storage' is disabled" in str(failed.value)
    assert 'The resource could not be found' not in str(failed.value)
    with pytest.raises(clients.CommandFailed) as failed:
        clients.osc(stack, 'network', 'list')
    assert "Service 'network' is disabled" in str(failed.value)
    # What runs still answers.
    assert {f['Name'] for f in clients.osc(stack, 'flavor', 'list')} >= {'m1.nano'}


def test_extension_list_with_openstackclient(stack):
    rows = clients.osc(stack, 'extension', 'list', '--compute', '--long')
    aliases = {row['Alias'] for row in rows}
    assert len(aliases) == 99 and {'OS-DCF', 'os-hosts', 'os-keypairs'} <= aliases
    shown = stack.api('GET', '/extensions/os-keypairs').json()['extension']
    assert shown['name'] == 'Keypairs'


def test_v2_endpoint_with_openstacksdk(stack):
    conn = clients.sdk(stack)
    root = stack.api_url
    listed = {v['id']: v for v in requests.get(root + '/', timeout=10).json()['versions']}
    assert listed['v2.0']['status'] == 'DEPRECATED'
    document = requests.get(root + '/v2/', timeout=10).json()['version']
    assert document['id'] == 'v2.0'
    # openstacksdk against /v2: the same servers, at 2.1, no microversion echoed.
    session = conn.session
    resp = session.get(root + '/v2/servers/detail',
                       headers={'OpenStack-API-Version': 'compute 2.90'})
    assert resp.status_code == 200 and 'servers' in resp.json()
    assert 'OpenStack-API-Version' not in resp.headers


def test_routing_is_novas(stack):
    assert stack.api('GET', '/os-simple-tenant-usage/').status_code == 404
    assert stack.api('GET', '/os-simple-tenant-usage').status_code == 200
    assert stack.api('GET', '/servers/').status_code == 404
    assert stack.api('PUT', '/servers', json={}).status_code == 404


def test_confirm_resize_with_an_empty_object(stack):
    server = _boot(stack, 'plumbing-resize')
    try:
        clients.osc(stack, 'server', 'resize', '--flavor', 'm1.tiny', '--wait', server,
                    fmt_json=False)
        clients.wait_status(stack, server, 'VERIFY_RESIZE')
        resp = stack.api('POST', '/servers/%s/action' % server, microversion='2.1',
                         json={'confirmResize': {}})
        assert resp.status_code == 204, resp.text
        assert clients.wait_status(stack, server, 'ACTIVE')['flavor']['original_name'] == 'm1.tiny'
    finally:
        clients.osc(stack, 'server', 'delete', '--force', '--wait', server, fmt_json=False)
