"""Fixtures of the virt tests: simulated libvirt hosts (test:/// node files), a Glance
double serving image data, and instances that need no database."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conf import CONF
from novalite.image import glance
from novalite.virt.libvirt import driver as libvirt_driver
from tests.unit.virt.image_server import ImageServer

objects.register_all()

NODE_XML = ('<node><cpu><mhz>2400</mhz><model>x86_64</model><active>%(cpus)d</active>'
            '<nodes>1</nodes><sockets>1</sockets><cores>%(cpus)d</cores><threads>1</threads>'
            '</cpu><memory>%(kib)d</memory></node>')


def write_node(path, cpus: int = 8, memory_mb: int = 16384) -> str:
    """A node file for ``test:///<path>``: one simulated host."""
    path.write_text(NODE_XML % {'cpus': cpus, 'kib': memory_mb * 1024})
    return 'test://%s' % path


@pytest.fixture
def ctxt():
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])


@pytest.fixture
def image_server():
    server = ImageServer()
    CONF.set_override('endpoint_override', server.start(), group='glance')
    CONF.set_override('num_retries', 1, group='glance')
    glance.reset()
    try:
        yield server
    finally:
        server.stop()
        CONF.clear_override('endpoint_override', group='glance')
        CONF.clear_override('num_retries', group='glance')
        glance.reset()


@pytest.fixture
def test_virt_type():
    CONF.set_override('virt_type', 'test', group='libvirt')
    try:
        yield
    finally:
        CONF.clear_override('virt_type', group='libvirt')


@pytest.fixture
def make_driver(tmp_path, test_virt_type):
    """``make_driver(name, cpus=, memory_mb=)``: an initialised driver on a simulated host
    of its own; all are cleaned up after the test."""
    drivers = []

    def make(name: str = 'host1', cpus: int = 8, memory_mb: int = 16384):
        uri = write_node(tmp_path / ('%s.xml' % name), cpus, memory_mb)
        drv = libvirt_driver.LibvirtDriver(connection_uri=uri,
                                           instances_path=str(tmp_path / name))
        drv.init_host(name)
        drivers.append(drv)
        return drv

    yield make
    for drv in drivers:
        drv.cleanup_host(None)


def make_instance(instance_id: int = 1, vcpus: int = 1, memory_mb: int = 128, root_gb: int = 1,
                  ephemeral_gb: int = 0, image_ref: str | None = None) -> objects.Instance:
    flavor = objects.Flavor(name='m1.test', memory_mb=memory_mb, vcpus=vcpus, root_gb=root_gb,
                            ephemeral_gb=ephemeral_gb, swap=0, flavorid='42')
    return objects.Instance(id=instance_id, uuid=str(uuid.uuid4()), display_name='vm-%d' %
                            instance_id, user_id='u1', project_id='p1', image_ref=image_ref,
                            flavor=flavor)


def image_meta(image: dict) -> objects.ImageMeta:
    return objects.ImageMeta.from_dict(image)
