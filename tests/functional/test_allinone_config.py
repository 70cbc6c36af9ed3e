"""What a new user of novalite-all meets: a clouds.yaml that names only the services
novalite runs (openstacksdk and openstackclient say a missing one is missing, instead
of reading the compute API's 404), and ``--config-file`` reaching every service."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time

import openstack
import pytest
import yaml
from openstack import exceptions as sdk_exceptions

from novalite.allinone import cloud
from tests.functional.test_all import BIN, READY, AllInOne, _free_port, _openstack


def _connect(path: str) -> openstack.connection.Connection:
    config = openstack.config.OpenStackConfig(config_files=[path])
    return openstack.connection.Connection(config=config.get_one(cloud=cloud.CLOUD_NAME))


def _write(tmp_path, network_url: str | None, stack) -> str:
    path = str(tmp_path / 'clouds.yaml')
    cloud.write_clouds_yaml(path, cloud.clouds_config(
        stack.api, stack.glance.server.url, stack.placement.url, network_url))
    return path


def test_clouds_yaml_leaves_out_what_novalite_does_not_run(stack, tmp_path):
    conn = _connect(_write(tmp_path, None, stack))
    assert isinstance([f.name for f in conn.compute.flavors()], list)
    with pytest.raises(sdk_exceptions.ServiceDisabledException, match='no network'):
        list(conn.network.networks())
    with pytest.raises(sdk_exceptions.ServiceDisabledException, match='cinder'):
        list(conn.block_storage.volumes())
    with pytest.raises(sdk_exceptions.ServiceDisabledException):
        list(conn.object_store.containers())
    for served in ('compute', 'image', 'placement', 'identity'):
        assert conn.config.has_service(served)


def test_clouds_yaml_keeps_the_network_when_neutron_runs(stack, tmp_path):
    settings = yaml.safe_load(open(_write(tmp_path, 'http://127.0.0.1:9696', stack)))
    novalite = settings['clouds'][cloud.CLOUD_NAME]
    assert novalite['network_endpoint_override'] == 'http://127.0.0.1:9696'
    assert 'has_network' not in novalite
    assert novalite['has_block_storage'] is False
    assert not any(key.startswith('has_') and key[4:] in cloud.SERVED for key in novalite)


class _AllInOneWithConfig(AllInOne):
    """novalite-all --no-network with extra ``--config-file`` arguments."""

    def __init__(self, state_dir: str, config_files: list[str]) -> None:
        self.state_dir = state_dir
        self.port = _free_port()
        self.lines: list[str] = []
        self._lines: queue.Queue = queue.Queue()
        extra = [arg for path in config_files for arg in ('--config-file', path)]
        self.process = subprocess.Popen(
            [os.path.join(BIN, 'novalite-all'), '--state-dir', state_dir,
             '--port', str(self.port), '--no-network', *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()


def _status(state_dir: str, server: str) -> str:
    shown = _openstack(state_dir, 'server', 'show', '-f', 'value', '-c', 'status', server)
    return shown.stdout.strip()


def test_novalite_all_config_file_reaches_the_services(tmp_path):
    extra = tmp_path / 'soft-delete.conf'
    extra.write_text('[DEFAULT]\nreclaim_instance_interval = 3600\n')
    state_dir = str(tmp_path / 'state')
    run = _AllInOneWithConfig(state_dir, [str(extra)])
    try:
        run.wait_for_line(READY)
        assert run.printed(r'Config\s+(\S+)').group(1) == str(extra)
        # openstackclient through the clouds.yaml written: a missing service says so.
        volumes = _openstack(state_dir, 'volume', 'list')
        assert volumes.returncode != 0
        assert "Service 'block-storage' is disabled" in volumes.stderr
        assert 'could not be found' not in volumes.stderr
        created = _openstack(state_dir, 'server', 'create', '--image', 'cirros-tiny',
                             '--flavor', 'm1.nano', '--nic', 'none', '--wait', '-f',
                             'value', '-c', 'id', 'soft1')
        assert created.returncode == 0, created.stderr
        server = created.stdout.strip()
        # reclaim_instance_interval from the file: the delete is soft.
        assert _openstack(state_dir, 'server', 'delete', server).returncode == 0
        deadline = time.monotonic() + 60
        while _status(state_dir, server) != 'SOFT_DELETED':
            assert time.monotonic() < deadline, _status(state_dir, server)
            time.sleep(0.2)
        assert _openstack(state_dir, 'server', 'delete', '--force', '--wait',
                          server).returncode == 0
        assert run.stop(signal.SIGTERM) == 0
    finally:
        run.kill()


def test_novalite_all_refuses_a_missing_config_file(tmp_path):
    result = subprocess.run([os.path.join(BIN, 'novalite-all'), '--state-dir',
                             str(tmp_path), '--config-file', str(tmp_path / 'nope.conf')],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert 'nope.conf: no such file' in result.stderr
