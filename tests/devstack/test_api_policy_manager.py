"""Nova 34's project manager role against the devstack stack with a real Keystone,
driven by openstackclient: ``mara``, a member and manager of project ``alpha``, cold
migrates alpha's server and lists alpha's migrations (without their hosts); a host of
her choice, other projects and the plain member ``alice`` are refused.

It shares the Keystone stack of ``test_keystone.py`` (the same ``STACK``).
"""
from __future__ import annotations

import time

import pytest

from tests.devstack import clients
from tests.devstack.test_keystone import osc, rest

STACK = {'auth': 'keystone'}
MV = ('--os-compute-api-version', '2.80')


@pytest.fixture
def alpha_server(stack):
    created = osc(stack, 'alice', 'server', 'create', '--image', 'cirros-tiny',
                  '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'ks-manager-vm')
    assert created['status'] == 'ACTIVE', created
    yield created['id']
    rest(stack, 'admin', 'DELETE', '/servers/%s' % created['id'])
    deadline = time.monotonic() + 60
    while rest(stack, 'admin', 'GET', '/servers/%s' % created['id']).status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.5)


def _status(stack, server: str) -> str:
    return rest(stack, 'admin', 'GET', '/servers/%s' % server).json()['server']['status']


def test_a_project_manager_migrates_and_lists_the_projects_migrations(stack, alpha_server):
    with pytest.raises(clients.CommandFailed, match='403|Policy'):
        osc(stack, 'alice', *MV, 'server', 'migrate', alpha_server, fmt_json=False)
    with pytest.raises(clients.CommandFailed, match='403|Policy'):
        osc(stack, 'mara', '--os-compute-api-version', '2.56', 'server', 'migrate',
            '--host', stack.computes[1], alpha_server, fmt_json=False)
    osc(stack, 'mara', *MV, 'server', 'migrate', '--wait', alpha_server, fmt_json=False)
    assert _status(stack, alpha_server) == 'VERIFY_RESIZE'
    # openstackclient sends --project as it is given: the project's id.
    alpha = osc(stack, 'admin', 'project', 'show', 'alpha')['id']
    migrations = osc(stack, 'mara', *MV, 'server', 'migration', 'list', '--project', alpha)
    mine = [m for m in migrations if m['Server UUID'] == alpha_server]
    assert len(mine) == 1 and mine[0]['Type'] == 'migration'
    assert mine[0]['Source Compute'] is None and mine[0]['Dest Compute'] is None
    # Every project's, or another's, stay the administrator's.
    with pytest.raises(clients.CommandFailed, match='403|Policy'):
        osc(stack, 'mara', *MV, 'server', 'migration', 'list')
    shown = osc(stack, 'admin', *MV, 'server', 'migration', 'list', '--project', alpha)
    assert {m['Source Compute'] for m in shown if m['Server UUID'] == alpha_server} <= set(
        stack.computes)
    osc(stack, 'alice', 'server', 'resize', 'confirm', alpha_server, fmt_json=False)
