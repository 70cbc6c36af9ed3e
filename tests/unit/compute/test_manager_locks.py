"""The compute manager's per-instance locks: they serialise the work on one instance,
and the lock of an instance nobody works on any more is gone (oslo.concurrency's
named semaphores), instead of one lock kept per instance for the life of the service."""
from __future__ import annotations

import threading
import types
import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import inplace, manager, power
from novalite.virt import fake

objects.register_all()


@pytest.fixture
def mgr():
    return manager.ComputeManager(host='lock-host', driver=fake.FakeDriver(),
                                  reportclient=types.SimpleNamespace(),
                                  compute_task_api=types.SimpleNamespace(),
                                  network_api_=types.SimpleNamespace())


def _wait_for_handed_off_work() -> None:
    try:
        from novalite import executor
    except ImportError:  # before the executor module: utils' threads
        from novalite import utils
        utils.wait_spawned(30)
    else:
        executor.wait_background(30)


def test_no_lock_is_left_once_the_actions_on_the_instances_are_done(mgr, monkeypatch):
    done = []
    monkeypatch.setattr(inplace, 'set_admin_password',
                        lambda m, ctxt, instance, password: done.append(instance.uuid))
    monkeypatch.setattr(power, 'stop_instance',
                        lambda m, ctxt, instance, clean: done.append(instance.uuid))
    context = nl_context.get_admin_context()
    instances = [objects.Instance(uuid=str(uuid.uuid4())) for _ in range(20)]

    for instance in instances:
        mgr.set_admin_password(context, instance, 'secret')  # on this thread
        mgr.stop_instance(context, instance)  # handed off to a background thread
    _wait_for_handed_off_work()

    assert sorted(done) == sorted([i.uuid for i in instances] * 2)
    assert len(mgr._instance_locks) == 0


def test_the_lock_serialises_the_work_on_one_instance_while_it_is_held(mgr):
    held = mgr.instance_lock('i-1')
    with held:
        assert held.locked()
        assert mgr.instance_lock('i-1').locked()
        assert not mgr.instance_lock('i-1').acquire(blocking=False)
        assert not mgr.instance_lock('i-2').locked()
    assert not mgr.instance_lock('i-1').locked()


def test_work_handed_off_waits_for_the_instance_lock(mgr, monkeypatch):
    started = threading.Event()
    monkeypatch.setattr(power, 'start_instance',
                        lambda m, ctxt, instance: started.set())
    instance = objects.Instance(uuid=str(uuid.uuid4()))
    lock = mgr.instance_lock(instance.uuid)
    with lock:
        mgr.start_instance(nl_context.get_admin_context(), instance)
        assert not started.wait(0.2)
    assert started.wait(30)
