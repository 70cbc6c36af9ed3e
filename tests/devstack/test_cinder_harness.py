"""The stack's volume service: the real Cinder on a one-node Ceph, behind Keystone.

A volume made through Cinder's API is ``available`` and is an RBD image
``volumes/volume-<id>``; ``openstack volume create`` works for a member through the
stack's clouds.yaml (Cinder found in Keystone's catalog); the novalite daemons are given
Cinder's options; and a volume service taken down from its record alone (as
``python -m tests.devstack.harness down`` does) leaves no process, folder, database or
vhost. Needs Ceph's packages and ``.venv-cinder`` (tools/setup.sh), RabbitMQ and MariaDB:
skipped without them, except under ``CI``.
"""
from __future__ import annotations

import configparser
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from novalite.allinone.cinder import CinderOnCeph
from tests.devstack import session
from tests.devstack.harness import Stack, backends
from tests.devstack.harness import cinder as harness_cinder
from tests.devstack.test_keystone import osc

STACK = harness_cinder.VOLUME_STACK


@pytest.fixture(scope='module', autouse=True)
def _volumes_possible() -> None:
    harness_cinder.require_volumes()


def _volume(cinder: CinderOnCeph, volume_id: str) -> dict[str, Any]:
    resp = cinder.api('GET', '/volumes/%s' % volume_id)
    resp.raise_for_status()
    return resp.json()['volume']


def _wait_volume(cinder: CinderOnCeph, volume_id: str, timeout: float = 60.0
                 ) -> dict[str, Any]:
    """Poll until the volume leaves ``creating``; returns its view."""
    deadline = time.monotonic() + timeout
    while True:
        volume = _volume(cinder, volume_id)
        if volume['status'] != 'creating' or time.monotonic() > deadline:
            return volume
        time.sleep(0.2)


def test_volume_is_an_rbd_image(volume_stack: Stack) -> None:
    cinder = volume_stack.cinder
    assert cinder is not None
    resp = cinder.api('POST', '/volumes', json={'volume': {'size': 1, 'name': 'hv1'}})
    assert resp.status_code == 202, resp.text
    volume = _wait_volume(cinder, resp.json()['volume']['id'])
    assert volume['status'] == 'available', volume
    assert 'volume-%s' % volume['id'] in cinder.ceph.rbd('ls', 'volumes').split()
    assert cinder.api('DELETE', '/volumes/%s' % volume['id']).status_code == 202


def test_openstack_volume_create_as_member(volume_stack: Stack) -> None:
    created = osc(volume_stack, 'alice', 'volume', 'create', '--size', '1', 'v1')
    cinder = volume_stack.cinder
    assert cinder is not None
    volume = _wait_volume(cinder, created['id'])
    assert volume['status'] == 'available', volume
    listed = osc(volume_stack, 'alice', 'volume', 'list')
    assert [v['Name'] for v in listed] == ['v1']
    # Another project's member does not see it.
    assert osc(volume_stack, 'bob', 'volume', 'list') == []
    osc(volume_stack, 'alice', 'volume', 'delete', created['id'], fmt_json=False)


def test_daemons_get_cinder_options(volume_stack: Stack) -> None:
    parser = configparser.RawConfigParser()
    parser.read(volume_stack.conf_file('compute-hostA'))
    assert parser.get('cinder', 'catalog_info') == 'volumev3::internalURL'
    assert parser.get('cinder', 'os_region_name') == 'RegionOne'
    assert parser.get('cinder', 'username') == 'nova'
    assert parser.get('service_user', 'send_service_user_token') == 'true'
    assert parser.get('service_user', 'username') == 'nova'


@pytest.fixture
def lone_cinder(tmp_path: Any) -> Iterator[harness_cinder.CinderEnvironment]:
    env = harness_cinder.CinderEnvironment(str(tmp_path / 'cinder'),
                                           session.PREFIX + 'lone')
    yield env
    env.stop()


def test_down_from_record_leaves_nothing(volume_stack: Stack,
                                         lone_cinder: harness_cinder.CinderEnvironment
                                         ) -> None:
    """A noauth volume service beside the stack, removed from its record alone."""
    lone_cinder.launch()
    lone_cinder.wait_started()
    record = lone_cinder.record
    assert record['database'] and record['vhost'] and record['pids']
    assert os.path.isdir(record['ceph']['dir'])
    assert harness_cinder.teardown(record) == []
    assert harness_cinder.leftovers(record) == []
    assert not os.path.exists(record['ceph']['dir'])
    assert record['database'] not in backends.list_databases('mysql', record['database'])
    assert record['vhost'] not in backends.list_vhosts(record['vhost'])
