"""The boot's timing at the RPC boundary: which messages are steps of a boot, and the
hop lines the dispatcher logs for them (read by bench/boot_hops.py)."""
from __future__ import annotations

import datetime
import logging
import re

import pytest

from novalite import objects, rpc
from novalite.compute import vm_states
from novalite.conf import CONF

objects.register_all()

UUID = '8e4b3ad4-24c5-4f2a-a0f3-0d6a3e0c2b11'


def _instance(**changes):
    instance = objects.Instance(uuid=UUID, vm_state=vm_states.BUILDING)
    instance.obj_reset_changes()
    for name, value in changes.items():
        setattr(instance, name, value)
    return instance.obj_to_primitive()


def test_the_steps_of_a_boot_name_their_instances():
    build_request = objects.BuildRequest(instance_uuid=UUID).obj_to_primitive()
    assert rpc._boot_uuids({'method': 'schedule_and_build_instances',
                            'args': {'build_requests': [build_request]}}) == \
        ('schedule_and_build_instances', [UUID])
    assert rpc._boot_uuids({'method': 'select_destinations',
                            'args': {'instance_uuids': [UUID]}}) == \
        ('select_destinations', [UUID])
    assert rpc._boot_uuids({'method': 'build_and_run_instance',
                            'args': {'instance': _instance()}}) == \
        ('build_and_run_instance', [UUID])
    assert rpc._boot_uuids({'method': 'build_instances',
                            'args': {'instances': [_instance()]}}) == \
        ('build_instances', [UUID])


def test_only_the_save_that_makes_a_build_active_is_a_step():
    launched = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    active = _instance(vm_state=vm_states.ACTIVE, task_state=None, launched_at=launched)
    message = {'method': 'object_action', 'args': {'objinst': active, 'objmethod': 'save'}}
    assert rpc._boot_uuids(message) == ('active_save', [UUID])
    # A save that leaves the server ACTIVE (its name, say) is no step of a boot.
    renamed = _instance(display_name='other')
    renamed['novalite_object.data']['vm_state'] = vm_states.ACTIVE
    assert rpc._boot_uuids({'method': 'object_action',
                            'args': {'objinst': renamed, 'objmethod': 'save'}}) is None
    assert rpc._boot_uuids({'method': 'reboot_instance',
                            'args': {'instance': _instance()}}) is None


class _Incoming:
    def __init__(self, message):
        self.message = message


@pytest.fixture
def hops_on():
    CONF.set_override('log_boot_hops', True)
    yield
    CONF.clear_override('log_boot_hops')


def test_the_dispatcher_logs_a_hop_as_a_boot_message_arrives_and_is_done(
        hops_on, caplog, monkeypatch):
    dispatcher = rpc._Dispatcher([], None, rpc.dispatcher.DefaultRPCAccessPolicy,
                                 'scheduler')
    monkeypatch.setattr(rpc.dispatcher.RPCDispatcher, 'dispatch',
                        lambda self, incoming: 'answer')
    with caplog.at_level(logging.INFO, logger='novalite.hops'):
        assert dispatcher.dispatch(_Incoming({
            'method': 'select_destinations',
            'args': {'instance_uuids': [UUID]}})) == 'answer'
    hops = [re.match(r'boot hop (\S+) (\S+) \d+\.\d+$', r.getMessage()).groups()
            for r in caplog.records]
    assert hops == [('scheduler.select_destinations', UUID),
                    ('scheduler.select_destinations.done', UUID)]
