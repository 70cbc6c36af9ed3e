"""The harness itself: unit command lines, and a start-up that fails half-way."""
from __future__ import annotations

import glob
import os

import pytest

from tests.devstack import session
from tests.devstack.harness import process, teardown
from tests.devstack.harness import stack as devstack


@pytest.mark.parametrize('unit', sorted(glob.glob(os.path.join(devstack.UNIT_DIR,
                                                               '*.service'))))
def test_unit_command_runs_this_venv_with_the_given_config(unit, tmp_path):
    argv = process.unit_command(unit, '/venv/bin', str(tmp_path / 'x.conf'))
    binary = os.path.basename(unit)[:-len('.service')]
    assert argv == ['/venv/bin/' + binary, '--config-file', str(tmp_path / 'x.conf')]


def test_unit_command_refuses_a_unit_it_cannot_aim(tmp_path):
    unit = tmp_path / 'odd.service'
    unit.write_text('[Service]\nExecStart=/usr/bin/novalite-api --config-dir /etc/x\n')
    with pytest.raises(ValueError, match='does not run'):
        process.unit_command(str(unit), '/venv/bin', '/x.conf')


def test_failed_start_up_leaves_nothing_behind(tmp_path):
    # An API that cannot start: the stack is half up (databases, vhost, Placement,
    # Glance, conductor, scheduler, computes) when up() gives up.
    stack = session.new_stack(str(tmp_path), host_conf={
        'api': {'api': {'api_paste_config': '/nonexistent'}}})
    with pytest.raises(RuntimeError, match='novalite-api exited'):
        stack.up()
    assert set(stack.record['pids']) >= {'placement', 'glance', 'conductor', 'api'}
    assert len(stack.record['databases']) == 4
    assert teardown.leftovers(stack.record, stack.state_dir) == []


@pytest.mark.parametrize('isolation, expected', [('default', None),
                                                 ('read-committed', 'READ-COMMITTED')])
def test_placement_isolation_reaches_its_database_sessions(tmp_path, isolation, expected):
    # placement.conf as the stack writes it, opened the way Placement opens it (oslo.db's
    # create_engine with the [placement_database] options).
    import configparser

    from oslo_db.sqlalchemy import engines

    from tests.devstack.harness import backends
    from tests.devstack.harness.placement import PlacementProcess
    session.check_servers('mysql')
    placement = PlacementProcess(str(tmp_path), backends.SERVER_URLS['mysql'], 0, '/x',
                                 str(tmp_path / 'placement.log'), isolation=isolation)
    placement.write_conf()
    conf = configparser.ConfigParser(interpolation=None)
    conf.read(placement.conf_file)
    section = conf['placement_database']
    engine = engines.create_engine(section['connection'],
                                   connection_parameters=section.get('connection_parameters'))
    try:
        with engine.connect() as conn:
            mine, server = conn.exec_driver_sql(
                'SELECT @@SESSION.tx_isolation, @@GLOBAL.tx_isolation').one()
        assert mine == (expected or server)
    finally:
        engine.dispose()


def test_placement_isolation_is_one_it_knows(tmp_path):
    from tests.devstack.harness.placement import PlacementProcess
    with pytest.raises(ValueError, match='isolation must be one of'):
        PlacementProcess(str(tmp_path), 'mysql+pymysql://x', 0, '/x', 'log', isolation='dirty')
