"""Refusals are logged at INFO or WARNING without a traceback; faults at ERROR with one
(issue 20, point 9): at the RPC boundary and in a compute operation's frame."""
from __future__ import annotations

import logging
import time
import types

import oslo_messaging as messaging
import pytest

from novalite import context as nl_context
from novalite import exception, objects, rpc
from novalite.compute import operation
from novalite.conf import CONF

UUID = '9a1e5b44-5d0a-4a8e-9b2c-3f1f7c1d2e3a'


class _Endpoint:
    target = messaging.Target(version='1.0')

    def refuse(self, context: nl_context.RequestContext) -> None:
        raise exception.InstanceInvalidState(instance_uuid=UUID, attr='vm_state',
                                             state='resized', method='resize')

    def no_host(self, context: nl_context.RequestContext) -> None:
        raise exception.NoValidHost(reason='')

    def gone(self, context: nl_context.RequestContext) -> None:
        raise exception.InstanceNotFound(instance_id=UUID)

    def crash(self, context: nl_context.RequestContext) -> None:
        raise RuntimeError('a real fault')


@pytest.fixture
def client():
    messaging.get_notification_transport(CONF, url='fake://').cleanup()
    CONF.set_override('transport_url', 'fake://')
    rpc.init(CONF)
    target = messaging.Target(topic='expected-test', server='h1')
    server = rpc.get_server(target, [_Endpoint()])
    server.start()
    try:
        yield rpc.get_client(messaging.Target(topic='expected-test', server='h1',
                                              version='1.0'), timeout=10)
    finally:
        server.stop()
        server.wait()
        rpc.cleanup()
        CONF.clear_override('transport_url')


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize('method, error', [
    ('refuse', exception.InstanceInvalidState),
    ('no_host', exception.NoValidHost),
    ('gone', exception.InstanceNotFound),
])
def test_a_refused_call_is_no_error_in_the_servers_log(client, caplog, method, error):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(error):  # the caller still gets the exception itself
        client.call(nl_context.get_admin_context(), method)
    assert _errors(caplog) == []
    assert any(r.levelno == logging.INFO and 'RPC %s refused' % method in r.getMessage()
               for r in caplog.records)


def test_a_refused_cast_is_logged_at_info(client, caplog):
    caplog.set_level(logging.DEBUG)
    client.cast(nl_context.get_admin_context(), 'gone')
    deadline = time.monotonic() + 10
    while not any('RPC gone refused' in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, 'the cast was not handled'
        time.sleep(0.02)
    assert _errors(caplog) == []


def test_a_fault_is_still_an_error_with_its_traceback(client, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(RuntimeError):
        client.call(nl_context.get_admin_context(), 'crash')
    errors = _errors(caplog)
    assert [r.levelno for r in errors] == [logging.ERROR]
    assert errors[0].exc_info and errors[0].exc_info[0] is RuntimeError


@pytest.fixture
def frame(monkeypatch):
    """operation()'s collaborators (action events, rollback) as no-ops."""
    objects.register_all()
    event = objects.InstanceActionEvent
    monkeypatch.setattr(event, 'event_start', lambda *a, **kw: None)
    monkeypatch.setattr(event, 'event_finish', lambda *a, **kw: None)
    monkeypatch.setattr(event, 'format_error', lambda exc: (str(exc), ''))
    monkeypatch.setattr(operation, 'revert', lambda *a: None)
    mgr = types.SimpleNamespace(host='h1')
    instance = types.SimpleNamespace(uuid=UUID)
    return lambda exc: _fail(mgr, instance, exc)


def _fail(mgr: types.SimpleNamespace, instance: types.SimpleNamespace,
          exc: Exception) -> None:
    with operation.operation(mgr, None, instance, 'compute_resize_instance', 'active'):
        raise exc


def test_an_operation_refused_is_a_warning_without_traceback(frame, caplog):
    caplog.set_level(logging.DEBUG, logger='novalite.compute.operation')
    frame(exception.CannotResizeDisk(reason='Unable to resize disk down.'))
    frame(exception.InstanceNotFound(instance_id=UUID))
    assert _errors(caplog) == []
    assert [r.levelno for r in caplog.records] == [logging.WARNING] * 2
    assert 'Unable to resize disk down' in caplog.records[0].getMessage()


def test_an_operation_that_broke_is_an_error_with_traceback(frame, caplog):
    caplog.set_level(logging.DEBUG, logger='novalite.compute.operation')
    frame(RuntimeError('libvirt went away'))
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info[0] is RuntimeError
