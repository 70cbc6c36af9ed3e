"""The notifier: none when no driver is configured, one when a driver is."""
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
