"""What the devstack network tests share: whether the real Neutron can run here, and
networks and ports read from it."""
from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from novalite.allinone import ovn
from tests.devstack import session
from tests.devstack.clients import osc
from tests.devstack.harness import Stack, backends, neutron


def _unavailable(what: str) -> None:
    msg = '%s: the network tests cannot run here' % what
    if os.environ.get('CI'):
        pytest.fail(msg)
    pytest.skip(msg)


def missing_for_neutron() -> str | None:
    """What this machine lacks to run Neutron on OVN (root, the tools, .venv-neutron),
    or None; the database server is each caller's own check."""
    if os.geteuid() != 0:
        return 'not root'
    for tool in ovn.TOOLS:
        if shutil.which(tool) is None:
            return '%s not found (tools/setup.sh installs Open vSwitch and OVN)' % tool
    if not os.path.exists(os.path.join(neutron.default_venv(), 'bin', 'gunicorn')):
        return '%s missing (tools/setup.sh makes it)' % neutron.default_venv()
    return None


def require_network() -> None:
    """Skip (fail under ``CI``) without root, Open vSwitch/OVN, .venv-neutron, MariaDB."""
    missing = missing_for_neutron()
    if missing:
        _unavailable(missing)
    try:
        backends.list_databases(neutron.BACKEND, session.PREFIX)
    except Exception as exc:
        _unavailable('MariaDB unavailable (%s)' % exc)


def make_network(stack: Stack, name: str, cidr: str) -> dict[str, Any]:
    """A network with one subnet ``cidr``, made with openstackclient."""
    network = osc(stack, 'network', 'create', name)
    subnet = osc(stack, 'subnet', 'create', '--network', name, '--subnet-range', cidr,
                 name + '-subnet')
    network['subnet_id'] = subnet['id']
    return network


def ports_of(stack: Stack, server_id: str) -> list[dict[str, Any]]:
    """Neutron's ports of a server (``device_id``)."""
    assert stack.neutron is not None
    resp = stack.neutron.api('GET', '/ports?device_id=%s' % server_id)
    resp.raise_for_status()
    return resp.json()['ports']


def port(stack: Stack, port_id: str) -> dict[str, Any] | None:
    """A port as Neutron has it; None once it is gone."""
    assert stack.neutron is not None
    resp = stack.neutron.api('GET', '/ports/%s' % port_id)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    return resp.json()['port']
