"""The notifier (none when no driver is configured) and the shared RPC clients."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from novalite import rpc
from novalite.conf import CONF


@pytest.fixture
def fake_bus():
    # Creating a transport registers oslo.messaging's options, its notifier's too.
    messaging.get_notification_transport(CONF, url='fake://').cleanup()
    CONF.set_override('transport_url', 'fake://')
    yield
    rpc.cleanup()
    CONF.clear_override('transport_url')
    CONF.clear_override('driver', group='oslo_messaging_notifications')


def test_no_driver_means_no_notifier(fake_bus):
    rpc.init(CONF)
    assert rpc.get_notifier('novalite-compute:h1') is None


@pytest.mark.parametrize('driver', ['log', 'messagingv2'])
def test_a_driver_gives_a_notifier(fake_bus, driver):
    CONF.set_override('driver', [driver], group='oslo_messaging_notifications')
    rpc.init(CONF)
    notifier = rpc.get_notifier('novalite-compute:h1')
    assert notifier is not None and notifier.publisher_id == 'novalite-compute:h1'


def test_noop_driver_means_no_notifier(fake_bus):
    CONF.set_override('driver', ['noop'], group='oslo_messaging_notifications')
    rpc.init(CONF)
    assert rpc.get_notifier('novalite-compute:h1') is None


def test_compute_casts_share_one_client_per_transport(fake_bus, monkeypatch):
    from novalite.compute import rpcapi as compute_rpcapi
    rpc.init(CONF)
    api = compute_rpcapi.ComputeAPI()
    ctxt = type('Ctxt', (), {'mq_connection': None})()
    first = rpc.get_shared_client(api.target)
    registered = []
    real_register = CONF.register_opts
    monkeypatch.setattr(CONF, 'register_opts',
                        lambda *a, **kw: registered.append(a) or real_register(*a, **kw))
    for host in ('h1', 'h2', 'h1'):
        api._client(ctxt, host)
    # Registering options empties oslo.config's value cache: no cast may do it.
    assert registered == []
    assert rpc.get_shared_client(api.target) is first


def test_another_transport_gets_its_own_client(fake_bus):
    rpc.init(CONF)
    target = messaging.Target(topic='compute', version='1.0')
    other = rpc.get_cell_transport('fake://cell2')
    assert rpc.get_shared_client(target, other) is not rpc.get_shared_client(target)
    assert rpc.get_shared_client(target, other) is rpc.get_shared_client(target, other)


def test_cleanup_forgets_the_clients(fake_bus):
    rpc.init(CONF)
    target = messaging.Target(topic='compute', version='1.0')
    before = rpc.get_shared_client(target)
    rpc.cleanup()
    rpc.init(CONF)
    assert rpc.get_shared_client(target) is not before
