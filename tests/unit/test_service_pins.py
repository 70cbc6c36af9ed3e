"""The library internals novalite.service relies on, where no public API serves: each
test fails when an upgrade of oslo.service, cotyledon or oslo.messaging changes one,
instead of the daemons silently losing the behaviour built on it."""
from __future__ import annotations

import inspect

import cotyledon
from oslo_messaging._drivers import amqpdriver
from oslo_service.backend._threading import service as threading_service


def test_the_threading_launcher_keeps_its_cotyledon_manager_in_manager():
    """``_keep_workers_on_sighup`` reads ``launcher._manager`` (the ServiceLauncher's
    cotyledon ServiceManager) to register its ``on_new_worker`` hook."""
    source = inspect.getsource(threading_service.ServiceLauncher)
    assert 'self._manager_context, self._manager = _get_service_manager(' in source
    params = inspect.signature(cotyledon.ServiceManager.register_hooks).parameters
    assert 'on_new_worker' in params


def test_a_worker_wraps_its_service_as_service_instance_and_reloads_through_reload():
    """The hook replaces the worker's ``reload`` (cotyledon's public Service method,
    called on SIGHUP) and reaches the service as ``wrapper.service_instance``."""
    assert issubclass(threading_service.ServiceWrapper, cotyledon.Service)
    assert 'self.service_instance = service_instance' in inspect.getsource(
        threading_service.ServiceWrapper.__init__)
    assert callable(cotyledon.Service.reload)


def test_the_amqp_listener_polls_at_most_every_ack_requeue_every_seconds_max():
    """``_bound_idle_poll`` lowers this module constant; the listener reads it when it
    polls (a renamed or inlined constant would leave an idle daemon's stop at 5 s)."""
    assert isinstance(amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX, (int, float))
    assert 'ACK_REQUEUE_EVERY_SECONDS_MAX' in inspect.getsource(amqpdriver.AMQPListener)
