"""novalite-all --volumes, as a user runs it: the real Cinder on a one-node Ceph comes up
beside the cloud, ``openstack volume create`` through the written clouds.yaml makes an
``available`` volume that is an RBD image, the daemons are pointed at Cinder, and a stop
leaves no process, Ceph folder, database or vhost.

Needs Ceph's packages and ``.venv-cinder`` (tools/setup.sh), MariaDB and RabbitMQ on
127.0.0.1: skipped without them, except under ``CI``. Without Neutron (``--no-network``):
one start of Ceph and Cinder is what this costs.
"""
from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from novalite.allinone import cinder, network
from tests.functional.test_all import BIN, READY, AllInOne, _free_port, _openstack

READY_TIMEOUT = 240.0


def _unavailable(what: str) -> None:
    msg = '%s: novalite-all cannot run Cinder here' % what
    if os.environ.get('CI'):
        pytest.fail(msg)
    pytest.skip(msg)


def _require_volumes() -> None:
    missing = cinder.missing()
    if missing:
        _unavailable(missing)
    if subprocess.run(['rabbitmqctl', 'list_vhosts'], capture_output=True,
                      timeout=60).returncode != 0:
        _unavailable('RabbitMQ unavailable')
    engine = sa.create_engine(network.DB_SERVER, poolclass=sa.pool.NullPool)
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as exc:
        _unavailable('MariaDB unavailable (%s)' % exc.orig)
    finally:
        engine.dispose()


class AllInOneVolumes(AllInOne):
    """``novalite-all --no-network --volumes``."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.port = _free_port()
        self.lines = []
        self._lines = queue.Queue()
        self.process = subprocess.Popen(
            [os.path.join(BIN, 'novalite-all'), '--state-dir', state_dir,
             '--port', str(self.port), '--no-network', '--volumes'],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()


@pytest.fixture(scope='module')
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AllInOneVolumes]:
    _require_volumes()
    state_dir = str(tmp_path_factory.mktemp('all-volumes'))
    running = AllInOneVolumes(state_dir)
    try:
        running.wait_for_line(READY, timeout=READY_TIMEOUT)
        yield running
    finally:
        if running.process.poll() is None:
            running.stop(timeout=60)


def _volume(state_dir: str, *args: str) -> dict:
    result = _openstack(state_dir, 'volume', *args, '-f', 'json')
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_volume_create_through_clouds_yaml(cloud: AllInOneVolumes) -> None:
    url = cloud.printed(r'Cinder +(http://\S+)').group(1)
    ceph_dir = cloud.printed(r'Ceph +(/\S+)').group(1)
    created = _volume(cloud.state_dir, 'create', '--size', '1', 'vol1')
    deadline = time.monotonic() + 60
    shown = created
    while shown['status'] == 'creating' and time.monotonic() < deadline:
        time.sleep(0.3)
        shown = _volume(cloud.state_dir, 'show', created['id'])
    assert shown['status'] == 'available', shown
    images = subprocess.run(['rbd', '-c', os.path.join(ceph_dir, 'ceph.conf'), 'ls',
                             'volumes'], capture_output=True, text=True, check=True)
    assert 'volume-%s' % created['id'] in images.stdout.split()
    assert url.startswith('http://127.0.0.1:')


def test_stop_leaves_nothing(cloud: AllInOneVolumes) -> None:
    ceph_dir = cloud.printed(r'Ceph +(/\S+)').group(1)
    record_file = os.path.join(cloud.state_dir, 'cinder.json')
    with open(record_file) as f:
        record: cinder.VolumeRecord = json.load(f)
    assert cloud.stop(timeout=60) == 0
    assert cinder.leftovers(record) == []
    assert not os.path.exists(ceph_dir)
    assert not os.path.exists(record_file)
    vhosts = subprocess.run(['rabbitmqctl', 'list_vhosts', '-q'], capture_output=True,
                            text=True, timeout=60).stdout.split()
    assert record['vhost'] not in vhosts
    engine = sa.create_engine(network.DB_SERVER, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            databases = conn.exec_driver_sql('SHOW DATABASES').scalars().all()
    finally:
        engine.dispose()
    assert record['database'] not in databases
    assert not re.search(cloud.state_dir, subprocess.run(
        ['pgrep', '-af', cloud.state_dir], capture_output=True, text=True).stdout)
