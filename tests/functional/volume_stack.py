"""The volume tests' stack: the functional stack with the Cinder test double served over
HTTP at ``[cinder] endpoint_template`` (keystone-less, as Cinder's noauth), and helpers
to boot servers with block device mappings and to read both sides of an attachment."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from novalite import transient
from novalite.virt import fake
from novalite.volume import client
from tests.functional.stack import Stack
from tests.unit.volume.cinder_double import CinderDouble

# The microversions clients send: the base, openstackclient's usual, the one with
# attachment_id in the attachments view, and the newest.
VERSIONS = ('2.1', '2.79', '2.89', 'latest')


@pytest.fixture(scope='module')
def cinder() -> Iterator[CinderDouble]:
    double = CinderDouble().start()
    try:
        yield double
    finally:
        double.stop()


@pytest.fixture(scope='module')
def stack(tmp_path_factory: pytest.TempPathFactory,
          cinder: CinderDouble) -> Iterator[Stack]:
    """The stack with Cinder at the double; no pauses between retries (of Cinder calls
    and of the host's transient steps), so a failure shows at once."""
    saved = client.RETRY_DELAY, transient.PAUSE_STEP
    # keystoneauth reads a delay of 0 as its default (growing from 0.5 s).
    client.RETRY_DELAY, transient.PAUSE_STEP = 0.001, 0
    stack = Stack(str(tmp_path_factory.mktemp('stack')), overrides={
        ('cinder', 'endpoint_template'): cinder.url + '/v3',
        ('cinder', 'http_retries'): 0,
        (None, 'block_device_allocate_retries_interval'): 0,
        (None, 'block_device_allocate_retries'): 5,
    })
    client.reset()
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
        client.reset()
        client.RETRY_DELAY, transient.PAUSE_STEP = saved


@pytest.fixture(scope='module')
def flavor(stack: Stack) -> str:
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.volumes', 'ram': 128, 'vcpus': 1, 'disk': 2}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def boot(stack: Stack, flavor: str, bdms: list[dict[str, Any]] | None = None,
         image: bool = True, version: str = '2.79', **server: Any) -> Any:
    """POST /servers; ``image``: send the stack's image as imageRef."""
    body: dict[str, Any] = {'name': server.pop('name', 'vol-vm'), 'flavorRef': flavor,
                            'networks': 'none'}
    if image:
        body['imageRef'] = stack.image['id']
    if bdms is not None:
        body['block_device_mapping_v2'] = bdms
    body.update(server)
    return stack.request('POST', '/servers', json={'server': body}, version=version)


def boot_active(stack: Stack, flavor: str, bdms: list[dict[str, Any]] | None = None,
                image: bool = True, **server: Any) -> dict[str, Any]:
    resp = boot(stack, flavor, bdms, image=image, **server)
    assert resp.status_code == 202, resp.text
    found = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                  version='2.79')
    assert found['status'] == 'ACTIVE', found.get('fault')
    return found


def driver(stack: Stack, server: dict[str, Any]) -> fake.FakeDriver:
    drv = stack.computes[server['OS-EXT-SRV-ATTR:host']].manager.driver
    assert isinstance(drv, fake.FakeDriver)
    return drv


def delete(stack: Stack, server_id: str) -> None:
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)


def wait(predicate: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.05)


def fault(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    (body,) = resp.json().values()
    return body['message']
