"""A build waiting for its VIFs, and a delete arriving: the wait ends at once, the
build ends as deleted (cleaned up, not rescheduled), with its ports in hand to release."""
from __future__ import annotations

import threading
import types
import uuid

import pytest

from novalite.compute import build, instance_events


class _Instance:
    """Test double of an instance: what the build flow reads and saves."""

    def __init__(self) -> None:
        self.uuid = str(uuid.uuid4())
        self.project_id = 'p1'
        self.availability_zone = None
        self.host = 'hostA'
        self.info_cache = types.SimpleNamespace(network_info=[])
        self.system_metadata: dict[str, str] = {}
        self.saves: list[object] = []

    def save(self, expected_task_state: object = None, finish_event: object = None) -> None:
        self.saves.append(expected_task_state)

    def obj_attr_is_set(self, name: str) -> bool:
        return True


def test_a_delete_ends_the_wait_for_vifs_and_the_build_as_deleted():
    events = instance_events.InstanceEvents()
    virtapi = instance_events.ComputeVirtAPI(events)
    vif = {'id': 'port-1', 'active': False, 'preserve_on_delete': True}
    waiting = threading.Event()

    def spawn(context, instance, *args, **kwargs):
        keys = [('network-vif-plugged', v['id']) for v in kwargs['network_info']]
        with virtapi.wait_for_instance_event(instance, keys, deadline=60):
            waiting.set()

    mgr = types.SimpleNamespace(
        host='hostA', instance_events=events,
        rt=types.SimpleNamespace(instance_claim=lambda *a, **k: None),
        reportclient=types.SimpleNamespace(get_allocations_for_consumer=lambda *a: {}),
        driver=types.SimpleNamespace(spawn_uses_allocations=False, spawn=spawn),
        network_api=types.SimpleNamespace(allocate_for_instance=lambda *a, **k: [vif]))
    req = build.BuildRequestArgs(image=None, request_spec=None, filter_properties={},
                                 admin_password=None, injected_files=[],
                                 requested_networks=[{'network_id': 'n1'}], node='hostA',
                                 host_list=[])
    instance = _Instance()
    # What the manager's terminate_instance does before it waits for the instance lock.
    threading.Thread(target=lambda: waiting.wait(10) and events.clear(instance.uuid)).start()
    with pytest.raises(build._Deleted):
        build._build(mgr, None, instance, req)
    # The allocated ports are in the cache, so the cleanup releases them (the user's kept).
    assert instance.info_cache.network_info == [vif]
    # The requests went with the claim, for a re-drive after a restart.
    assert build.recorded_network_requests(instance) == [{'network_id': 'n1'}]
