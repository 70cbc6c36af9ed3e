"""A functional stack whose computes are simulated libvirt hosts (``test:///`` node
files), and the small steps the libvirt and scheduling tests share."""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

from novalite.allinone import stack as allinone_stack
from novalite.virt.libvirt import driver as libvirt_driver
from tests.functional import stack as functional_stack
from tests.unit.virt.conftest import NODE_XML
from tests.unit.virt.image_server import ImageServer

VERSION = '2.47'


class LibvirtStack(functional_stack.Stack):
    """The functional stack with a LibvirtDriver per compute on a node file of its own,
    and a Glance double that serves image data.

    :param hosts: compute host name -> CPUs of its simulated node
    :param memory_mb: memory of each simulated node
    """

    def __init__(self, tmp_dir: str, hosts: dict[str, int], memory_mb: int = 8192,
                 overrides: dict | None = None) -> None:
        self.glance = ImageServer()
        self.hosts = dict(hosts)
        self.memory_mb = memory_mb
        settings = dict(functional_stack.TEST_SETTINGS)
        settings[('libvirt', 'virt_type')] = 'test'
        settings.update(overrides or {})
        allinone_stack.Stack.__init__(self, tmp_dir, self.glance.server.url,
                                      compute_hosts=tuple(hosts), overrides=settings,
                                      driver_factory=self._libvirt_driver)
        self.image: dict = {}

    def start(self) -> LibvirtStack:
        self.image = self.glance.add_image(b'\0' * 65536, disk_format='raw', name='tiny')
        self.glance.start()
        allinone_stack.Stack.start(self)
        return self

    def _libvirt_driver(self, host: str) -> libvirt_driver.LibvirtDriver:
        """A simulated host: a test:/// node file of its own, its own instances dir."""
        node = os.path.join(self.state_dir, '%s-node.xml' % host)
        with open(node, 'w') as f:
            f.write(NODE_XML % {'cpus': self.hosts[host], 'kib': self.memory_mb * 1024})
        return libvirt_driver.LibvirtDriver(
            connection_uri='test://' + node,
            instances_path=os.path.join(self.state_dir, host, 'instances'))

    def driver(self, host: str) -> libvirt_driver.LibvirtDriver:
        return self.computes[host].manager.driver

    def create_flavor(self, name: str, ram: int = 128, vcpus: int = 1,
                      disk: int = 1) -> dict:
        resp = self.request('POST', '/flavors', json={'flavor': {
            'name': name, 'ram': ram, 'vcpus': vcpus, 'disk': disk}})
        assert resp.status_code == 200, resp.text
        return resp.json()['flavor']

    def boot(self, flavor: dict, name: str = 'vm', hints: dict | None = None,
             **extra) -> dict:
        """POST /servers; :returns: the response body (``server`` or, with
        ``return_reservation_id``, ``reservation_id``)."""
        body = {'server': dict({'name': name, 'imageRef': self.image['id'],
                                'flavorRef': flavor['id'], 'networks': 'none'}, **extra)}
        if hints:
            body['os:scheduler_hints'] = hints
        resp = self.request('POST', '/servers', json=body, version=VERSION)
        assert resp.status_code == 202, resp.text
        return resp.json()

    def provider(self, host: str) -> dict:
        return self.placement_get('/resource_providers?name=%s'
                                  % host)['resource_providers'][0]

    def usages(self, host: str) -> dict:
        return self.placement_get('/resource_providers/%s/usages'
                                  % self.provider(host)['uuid'])['usages']

    def delete_all(self, server_ids: list[str]) -> None:
        for server_id in server_ids:
            assert self.request('DELETE', '/servers/%s' % server_id).status_code == 204
        for server_id in server_ids:
            self.wait_for_deleted(server_id)


@contextlib.contextmanager
def running(tmp_path_factory, name: str, hosts: dict[str, int],
            overrides: dict | None = None) -> Iterator[LibvirtStack]:
    """A started LibvirtStack in a fresh temporary folder, stopped at the end (what a
    module-scoped ``stack`` fixture yields)."""
    stack = LibvirtStack(str(tmp_path_factory.mktemp(name)), hosts, overrides=overrides)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def boot_id(stack: LibvirtStack, flavor: dict, name: str = 'vm', **extra) -> str:
    return stack.boot(flavor, name, **extra)['server']['id']


def active(stack: LibvirtStack, server_id: str) -> dict:
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version=VERSION)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


def wait(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, 'condition not met in %ss' % timeout
        time.sleep(0.05)
