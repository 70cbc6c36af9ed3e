"""novalite-all with the real Neutron (ML2/OVN), as a user runs it: servers on the network
``private`` get addresses; a stop leaves nothing running; a restart keeps Neutron's
state (its schema is not made again); a start removes what a killed one left, and makes
Neutron's database again when it has gone.

Needs root, Open vSwitch and OVN, ``.venv-neutron`` and MariaDB on 127.0.0.1: skipped
without them, except under ``CI``. Only one OVS/OVN environment runs per machine: a start
that finds another running waits for it (up to ``CLAIM_WAIT``).
"""
from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
import yaml

from novalite.allinone import network, ovn
from tests.devstack.network import missing_for_neutron
from tests.functional.test_all import READY, AllInOne, _openstack

COMPUTES = 2
READY_TIMEOUT = 180.0
CLAIM_WAIT = 900.0


def _unavailable(what: str) -> None:
    msg = '%s: novalite-all cannot run Neutron here' % what
    if os.environ.get('CI'):
        pytest.fail(msg)
    pytest.skip(msg)


def _require_network() -> None:
    missing = missing_for_neutron()
    if missing:
        _unavailable(missing)
    engine = sa.create_engine(network.DB_SERVER, poolclass=sa.pool.NullPool)
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as exc:
        _unavailable('MariaDB unavailable (%s)' % exc.orig)
    finally:
        engine.dispose()


def _record(state_dir: str) -> ovn.NetworkRecord:
    with open(os.path.join(state_dir, 'neutron', 'record.json')) as f:
        return json.load(f)


def _server(state_dir: str, *args: str) -> dict[str, Any]:
    result = _openstack(state_dir, 'server', *args, '-f', 'json')
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _ready_seconds(cloud: AllInOne) -> float:
    return float(cloud.printed(r'started in ([\d.]+) s').group(1))


def _log(state_dir: str) -> str:
    try:
        with open(os.path.join(state_dir, 'novalite-all.log')) as f:
            return f.read()
    except FileNotFoundError:
        return ''


class Runs:
    """A cold start that boots a server on ``private`` and is stopped (SIGTERM); a warm
    restart that boots another and is killed (SIGKILL); a start after the kill and after
    Neutron's database was dropped, stopped (SIGINT)."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.records: list[ovn.NetworkRecord] = []
        self.ready: list[float] = []
        self.clouds: list[AllInOne] = []  # every attempt, for clean_up()
        self.started: list[AllInOne] = []  # those that were ready
        self.leftovers: list[list[str]] = []
        self.servers: dict[str, dict[str, Any]] = {}
        self.logs: list[str] = []  # what each start logged until it was ready

    def start(self) -> AllInOne:
        logged = len(_log(self.state_dir))
        deadline = time.monotonic() + CLAIM_WAIT
        while True:
            cloud = AllInOne(self.state_dir, network=True, computes=COMPUTES)
            self.clouds.append(cloud)
            try:
                cloud.wait_for_line(READY, timeout=READY_TIMEOUT)
                self.started.append(cloud)
                break
            except AssertionError:
                # Another test run holds the machine's one OVS/OVN environment (or took
                # it between two of our starts), or its devices: wait for it.
                if not any('OVS/OVN environment' in line for line in cloud.lines):
                    raise
                if time.monotonic() > deadline:
                    _unavailable('another OVS/OVN environment ran for %d s' % CLAIM_WAIT)
            time.sleep(5)
        self.ready.append(_ready_seconds(cloud))
        self.records.append(_record(self.state_dir))
        self.logs.append(_log(self.state_dir)[logged:])
        return cloud

    def boot(self, name: str) -> None:
        self.servers[name] = _server(
            self.state_dir, 'create', '--image', 'cirros-tiny', '--flavor', 'm1.nano',
            '--network', network.NETWORK, '--wait', name)
        self.servers[name + ' shown'] = _server(self.state_dir, 'show', name)

    def stop(self, cloud: AllInOne, signum: int) -> int:
        returncode = cloud.stop(signum, timeout=60)
        self.leftovers.append(ovn.leftovers(self.records[-1]))
        return returncode

    def run(self) -> None:
        first = self.start()
        with open(os.path.join(self.state_dir, 'clouds.yaml')) as f:
            self.clouds_yaml = yaml.safe_load(f)['clouds']['novalite']
        self.boot('vm1')
        self.first_stop = self.stop(first, signal.SIGTERM)
        self.record_file_after_stop = os.path.exists(
            os.path.join(self.state_dir, 'neutron', 'record.json'))

        second = self.start()
        self.networks = json.loads(_openstack(self.state_dir, 'network', 'list', '-f',
                                              'json').stdout)
        self.servers['vm1 again'] = _server(self.state_dir, 'show', 'vm1')
        self.boot('vm2')
        second.process.kill()  # SIGKILL: Neutron and OVS/OVN stay behind
        second.process.wait()
        self.left_by_kill = ovn.leftovers(self.records[-1])
        self.drop_database()

        third = self.start()
        self.networks_again = json.loads(_openstack(self.state_dir, 'network', 'list', '-f',
                                                    'json').stdout)
        self.third_stop = self.stop(third, signal.SIGINT)

    def clean_up(self) -> None:
        """Whatever a failed run left: processes, devices, the kept database."""
        for cloud in self.clouds:
            cloud.kill()
        for record in self.records:
            ovn.teardown(record)
        self.drop_database()

    def drop_database(self) -> None:
        try:
            with open(os.path.join(self.state_dir, 'neutron', 'database')) as f:
                name = f.read().strip()
        except FileNotFoundError:
            return
        engine = sa.create_engine(network.DB_SERVER, poolclass=sa.pool.NullPool,
                                  isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % name)
        finally:
            engine.dispose()


@pytest.fixture(scope='module')
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    _require_network()
    made = Runs(str(tmp_path_factory.mktemp('novalite-all-network')))
    try:
        made.run()
        print('\nnovalite-all with Neutron ready in %s s (cold, warm, after a kill)'
              % ', '.join('%.1f' % s for s in made.ready))
        yield made
    finally:
        made.clean_up()


def _address(server: dict[str, Any]) -> str:
    addresses = server['addresses'][network.NETWORK]
    assert len(addresses) == 1, server['addresses']
    assert re.fullmatch(r'10\.0\.0\.\d+', addresses[0]), addresses
    return addresses[0]


def test_a_server_on_private_has_an_address(runs: Runs) -> None:
    cloud = runs.started[0]
    assert runs.clouds_yaml['network_endpoint_override'] == cloud.printed(
        r'Neutron\s+(\S+)').group(1)
    assert runs.servers['vm1']['status'] == 'ACTIVE'
    assert _address(runs.servers['vm1 shown'])
    assert cloud.printed(r'--network private --wait vm1')


def test_every_compute_host_is_an_ovn_chassis(runs: Runs) -> None:
    record = runs.records[0]
    assert {'compute%d-ovn-controller' % i for i in range(1, COMPUTES + 1)} <= set(
        record['pids'])
    assert runs.started[0].printed(r'Computes\s+compute1, compute2 ')


def test_sigterm_leaves_nothing_running(runs: Runs) -> None:
    assert runs.first_stop == 0
    assert runs.leftovers[0] == []
    assert not runs.record_file_after_stop
    assert runs.started[0].lines[-1] == 'novalite-all: SIGTERM received, stopping'


def test_a_restart_keeps_neutrons_state_and_schema(runs: Runs) -> None:
    assert 'schema made' in runs.logs[0]
    assert 'schema kept' in runs.logs[1]
    assert [n['Name'] for n in runs.networks] == [network.NETWORK]
    assert _address(runs.servers['vm1 again']) == _address(runs.servers['vm1 shown'])
    assert runs.servers['vm2']['status'] == 'ACTIVE'
    assert _address(runs.servers['vm2 shown']) != _address(runs.servers['vm1 shown'])


def test_a_start_makes_a_dropped_database_again(runs: Runs) -> None:
    # The last start was up at the schema's heads: the API started before the database
    # was looked at, then again once the schema was made.
    assert 'schema made' in runs.logs[2]
    assert [n['Name'] for n in runs.networks_again] == [network.NETWORK]


def test_a_start_removes_what_a_killed_one_left(runs: Runs) -> None:
    assert runs.left_by_kill, 'SIGKILL left nothing: the test proves nothing'
    assert runs.started[2].printed('an earlier novalite-all of this state folder was killed; '
                                  'removed what it left running: process ')
    assert runs.third_stop == 0
    assert runs.leftovers[-1] == []
