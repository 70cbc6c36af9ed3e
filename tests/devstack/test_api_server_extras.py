"""Server extras against the devstack-style stack, through openstackclient and
openstacksdk: OS-DCF:diskConfig, scheduler hints in the views (2.100), diagnostics'
driver, lists while a multi-create builds, os-server-password (``server set
--no-password``), ``server show --topology`` and ``server volume list``.

It shares the stack of the client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

import collections
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from novalite.db.main import models
from tests.devstack import clients

HINTS_MV = ('--os-compute-api-version', '2.100')


@pytest.fixture(scope='module')
def conn(stack):
    conn = clients.sdk(stack)
    yield conn
    conn.close()


@pytest.fixture
def vm(stack) -> Iterator[str]:
    created = clients.osc(stack, 'server', 'create', '--image', 'cirros-tiny',
                          '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'extras-vm')
    assert created['status'] == 'ACTIVE', created
    yield created['id']
    clients.delete_all(stack, [created['id']])


def test_disk_config_on_create_rebuild_and_in_the_views(stack, conn):
    image = conn.image.find_image('cirros-tiny', ignore_missing=False)
    flavor = conn.compute.find_flavor('m1.nano', ignore_missing=False)
    created = conn.compute.create_server(name='extras-dcf', image_id=image.id,
                                         flavor_id=flavor.id, networks='none',
                                         disk_config='AUTO')
    try:
        server = conn.compute.wait_for_server(created, wait=120)
        assert server.disk_config == 'AUTO'
        shown = clients.osc(stack, 'server', 'show', server.id)
        assert shown['OS-DCF:diskConfig'] == 'AUTO'
        # openstacksdk's update sends the field back; Nova takes it on update too.
        conn.compute.update_server(server, disk_config='MANUAL')
        assert conn.compute.get_server(server.id).disk_config == 'MANUAL'
        resp = stack.api('POST', '/servers/%s/action' % server.id, json={'rebuild': {
            'imageRef': image.id, 'OS-DCF:diskConfig': 'AUTO'}})
        assert resp.status_code == 202, resp.text
        assert resp.json()['server']['OS-DCF:diskConfig'] == 'AUTO'
        conn.compute.wait_for_server(server, wait=120)
        bad = stack.api('POST', '/servers', json={'server': {
            'name': 'extras-dcf-bad', 'imageRef': image.id, 'flavorRef': flavor.id,
            'networks': 'none', 'OS-DCF:diskConfig': 'auto'}})
        assert bad.status_code == 400, bad.text
    finally:
        clients.delete_all(stack, [created.id])


def test_hints_are_a_list_per_key_in_show_and_list_long(stack, vm):
    created = clients.osc(stack, *HINTS_MV, 'server', 'create', '--image', 'cirros-tiny',
                          '--flavor', 'm1.nano', '--nic', 'none', '--hint',
                          'same_host=%s' % vm, '--wait', 'extras-hinted')
    try:
        shown = clients.osc(stack, *HINTS_MV, 'server', 'show', created['id'])
        assert shown['scheduler_hints'] == {'same_host': [vm]}
        # The table shows the human-readable form: each list's items joined.
        rows = clients.osc(stack, *HINTS_MV, 'server', 'list', '--long', '-c', 'ID',
                           '-c', 'Scheduler Hints', '-f', 'table', fmt_json=False)
        row = next(line for line in rows.splitlines() if created['id'] in line)
        # The uuid whole, not its characters joined by commas.
        assert 'same_host=%s |' % vm in row, row
    finally:
        clients.delete_all(stack, [created['id']])


def test_diagnostics_name_a_driver_of_the_api_enum(conn, vm):
    diagnostics = conn.compute.get_server_diagnostics(vm)
    assert diagnostics.driver in ('libvirt', 'xenapi', 'vmwareapi', 'hyperv', 'ironic')


def test_lists_while_a_multi_create_builds_show_each_server_once(stack, conn):
    image = conn.image.find_image('cirros-tiny', ignore_missing=False)
    flavor = conn.compute.find_flavor('m1.nano', ignore_missing=False)
    resp = stack.api('POST', '/servers', json={'server': {
        'name': 'extras-multi', 'imageRef': image.id, 'flavorRef': flavor.id,
        'networks': 'none', 'min_count': 3}})
    assert resp.status_code == 202, resp.text
    ids: list[str] = []
    try:
        listings = 0
        while True:
            listed = [s for s in conn.compute.servers(details=True)
                      if s.name.startswith('extras-multi-')]
            counts = collections.Counter(s.id for s in listed)
            assert all(n == 1 for n in counts.values()), counts
            ids = sorted(counts)
            listings += 1
            if len(ids) == 3 and all(s.status in ('ACTIVE', 'ERROR') for s in listed):
                break
            assert listings < 2000, 'the servers did not settle'
        assert {s.status for s in listed} == {'ACTIVE'}
    finally:
        clients.delete_all(stack, ids)


def test_server_password_shown_and_cleared(stack, conn, vm):
    assert conn.compute.get_server_password(vm) in ('', None)
    # What the metadata service does when a guest posts its encrypted password.
    engine = sa.create_engine(stack.db_urls['cell1'], poolclass=sa.pool.NullPool)
    with engine.begin() as db:
        db.execute(models.InstanceSystemMetadata.__table__.insert(), [
            {'instance_uuid': vm, 'key': 'password_%d' % index, 'value': chunk,
             'deleted': 0}
            for index, chunk in enumerate(('c' * 255, 'd' * 45, '', ''))])
    engine.dispose()
    assert conn.compute.get_server_password(vm) == 'c' * 255 + 'd' * 45
    clients.osc(stack, 'server', 'set', '--no-password', vm, fmt_json=False)
    assert conn.compute.get_server_password(vm) in ('', None)
    resp = stack.api('GET', '/servers/%s/os-server-password' % vm)
    assert resp.json() == {'password': ''}


def test_server_show_topology_and_volume_list(stack, vm):
    shown = clients.osc(stack, '--os-compute-api-version', '2.78', 'server', 'show',
                        '--topology', vm)
    assert shown['topology'] == {'nodes': [], 'pagesize_kb': None}
    assert clients.osc(stack, 'server', 'volume', 'list', vm) == []
    resp = stack.api('POST', '/servers/%s/os-volume_attachments' % vm, json={
        'volumeAttachment': {'volumeId': '8a6b9b8e-4c8b-4b62-9d35-6e2f3c8a1f10'}})
    assert resp.status_code == 400
    assert 'Block Storage service (Cinder)' in resp.json()['badRequest']['message']
