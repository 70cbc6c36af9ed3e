"""The real clients against a devstack-style stack: openstackclient, openstacksdk, REST."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import openstack

from tests.devstack.harness import Stack

OPENSTACK = os.path.join(sys.prefix, 'bin', 'openstack')
SETTLED_STATES = ('active', 'error')


class CommandFailed(Exception):
    def __init__(self, cmd: list[str], result: subprocess.CompletedProcess) -> None:
        super().__init__('%s exited %s:\n%s%s' % (' '.join(cmd), result.returncode,
                                                  result.stdout, result.stderr))
        self.result = result


def osc(stack: Stack, *args: str, fmt_json: bool = True, timeout: float = 180) -> Any:
    """Run ``openstack --os-cloud novalite ARGS`` with the stack's clouds.yaml."""
    cmd = [OPENSTACK, '--os-cloud', 'novalite', *args]
    if fmt_json:
        cmd += ['-f', 'json']
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env['OS_CLIENT_CONFIG_FILE'] = stack.clouds_yaml
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if result.returncode != 0:
        raise CommandFailed(cmd, result)
    return json.loads(result.stdout) if fmt_json and result.stdout.strip() else result.stdout


def sdk(stack: Stack) -> openstack.connection.Connection:
    """An openstacksdk connection to the stack's ``novalite`` cloud."""
    config = openstack.config.OpenStackConfig(config_files=[stack.clouds_yaml])
    return openstack.connection.Connection(config=config.get_one(cloud='novalite'))


def boot(stack: Stack, name: str, flavor: str = 'm1.nano', **extra: Any) -> str:
    """POST /servers as admin with the stack's image; returns the server id."""
    resp = stack.api('POST', '/servers', json={'server': {
        'name': name, 'imageRef': stack.image_id, 'flavorRef': flavor_id(stack, flavor),
        'networks': 'none', **extra}})
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


def flavor_id(stack: Stack, name: str) -> str:
    flavors = stack.api('GET', '/flavors').json()['flavors']
    return next(f['id'] for f in flavors if f['name'] == name)


def server(stack: Stack, server_id: str) -> dict[str, Any]:
    resp = stack.api('GET', '/servers/%s' % server_id)
    resp.raise_for_status()
    return resp.json()['server']


def wait_status(stack: Stack, server_id: str, status: str, timeout: float = 120
                ) -> dict[str, Any]:
    """Poll until the server shows ``status`` with no task running; returns its view."""
    deadline = time.monotonic() + timeout
    while True:
        view = server(stack, server_id)
        if view['status'] == status and not view.get('OS-EXT-STS:task_state'):
            return view
        assert time.monotonic() < deadline, 'server %s still %s/%s, wanted %s' % (
            server_id, view['status'], view.get('OS-EXT-STS:task_state'), status)
        time.sleep(0.5)


def wait_settled(stack: Stack, server_ids: list[str], timeout: float = 120.0
                 ) -> dict[str, dict[str, Any]]:
    """Poll until every server is ACTIVE or ERROR, or ``timeout``; returns the last views."""
    deadline = time.monotonic() + timeout
    while True:
        views = {sid: server(stack, sid) for sid in server_ids}
        if all(v['OS-EXT-STS:vm_state'] in SETTLED_STATES for v in views.values()):
            return views
        if time.monotonic() > deadline:
            return views
        time.sleep(1)


def allocations(stack: Stack, consumer: str) -> dict[str, Any]:
    """Placement's allocations of one consumer (an instance uuid)."""
    assert stack.placement is not None
    resp = stack.placement.get('/allocations/%s' % consumer)
    resp.raise_for_status()
    return resp.json()['allocations']


def delete_all(stack: Stack, server_ids: list[str], timeout: float = 120.0) -> None:
    """Delete servers and wait until the API no longer shows them."""
    for sid in server_ids:
        stack.api('DELETE', '/servers/%s' % sid)
    stack.wait_for(lambda: all(stack.api('GET', '/servers/%s' % sid).status_code == 404
                               for sid in server_ids), timeout, 'servers deleted')
