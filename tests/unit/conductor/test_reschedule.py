"""conductor.tasks.build.reschedule: the next alternate, or ERROR naming every host tried."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conductor.tasks import build


class _RecordingComputeAPI:
    """Stands in for the compute RPC client: records the casts instead of sending them."""

    def __init__(self):
        self.casts = []

    def build_and_run_instance(self, context, **kwargs):
        self.casts.append(kwargs)


@pytest.fixture
def env(cloud):
    hosts = {'h1': cloud.add_host('h1'), 'h2': cloud.add_host('h2', memory_mb=1024),
             'h3': cloud.add_host('h3')}
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=2048, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), project_id='p1',
                                    user_id='u1', vm_state='building',
                                    task_state='scheduling', flavor=flavor)
        instance.create()
        yield cloud, cctxt, instance, hosts


def _selection(cloud, hosts, name):
    alloc = {'allocations': {hosts[name]: {'resources': {'VCPU': 1, 'MEMORY_MB': 2048,
                                                        'DISK_GB': 1}}}}
    return objects.Selection(compute_node_uuid=hosts[name], service_host=name, nodename=name,
                             cell_uuid=cloud.cell.uuid,
                             allocation_request=build.jsonutils.dumps(alloc),
                             allocation_request_version='1.36', availability_zone='nova')


def _reschedule(cloud, cctxt, instance, host_list, retry):
    deps = build.Dependencies(_report=cloud.reportclient, _compute=_RecordingComputeAPI())
    build.reschedule(deps, cctxt, instance, host_list, None, {'retry': retry}, None, [], None,
                     objects.RequestSpec())
    return deps._compute.casts


def _fault(cctxt, instance):
    """The fault's full text (its message is the first 255 characters of it)."""
    fault = objects.InstanceFault.get_latest_for_instance(cctxt, instance.uuid)
    assert fault.details.startswith(fault.message)
    return fault.details


def test_fault_names_each_host_tried_and_why(env):
    cloud, cctxt, instance, hosts = env
    # h1 failed the build earlier and h2 is too small: its claim is refused now.
    retry = {'num_attempts': 2, 'hosts': [['h3', 'h3'], ['h1', 'h1']],
             'exc_reason': 'Build of instance failed: disk on fire',
             'failures': [['h3', 'Timed out waiting for the guest'],
                          ['h1', 'Build of instance failed: disk on fire']]}

    casts = _reschedule(cloud, cctxt, instance, [_selection(cloud, hosts, 'h2')], retry)

    assert casts == []
    assert instance.vm_state == 'error'
    assert _fault(cctxt, instance) == (
        'Exceeded maximum number of retries. Build failed on the 3 hosts tried: '
        'h3: Timed out waiting for the guest; h1: Build of instance failed: disk on fire; '
        'h2: Placement refused the claim of its resources (the host filled up meanwhile).')
    assert cloud.reportclient.get_allocations_for_consumer(cloud.context, instance.uuid) == {}


def test_compute_that_records_no_failures_still_gets_its_last_one_named(env):
    cloud, cctxt, instance, _hosts = env
    retry = {'num_attempts': 1, 'hosts': [['h1', 'h1']], 'exc_reason': 'disk on fire'}

    _reschedule(cloud, cctxt, instance, [], retry)

    assert _fault(cctxt, instance) == ('Exceeded maximum number of retries. Build failed on '
                                       'the 1 host tried: h1: disk on fire.')


def test_next_alternate_gets_the_build_and_the_failures_so_far(env):
    cloud, cctxt, instance, hosts = env
    retry = {'num_attempts': 1, 'hosts': [['h1', 'h1']], 'exc_reason': 'disk on fire',
             'failures': [['h1', 'disk on fire']]}
    alternates = [_selection(cloud, hosts, 'h2'), _selection(cloud, hosts, 'h3')]

    [cast] = _reschedule(cloud, cctxt, instance, alternates, retry)

    assert (cast['host'], cast['host_list']) == ('h3', [])
    assert cast['filter_properties']['retry'] == {
        'num_attempts': 2, 'hosts': [['h1', 'h1'], ['h3', 'h3']], 'exc_reason': 'disk on fire',
        'failures': [['h1', 'disk on fire'],
                     ['h2', 'Placement refused the claim of its resources (the host filled '
                            'up meanwhile)']]}
    assert instance.task_state == 'scheduling' and instance.vm_state == 'building'
    assert list(cloud.reportclient.get_allocations_for_consumer(
        cloud.context, instance.uuid)) == [hosts['h3']]


def test_failures_accumulate_over_rounds_without_help_from_the_compute(env):
    cloud, cctxt, instance, hosts = env
    # Round 1: h1 failed; h2 is refused, h3 gets the build.
    retry = {'num_attempts': 1, 'hosts': [['h1', 'h1']], 'exc_reason': 'disk on fire'}
    alternates = [_selection(cloud, hosts, 'h2'), _selection(cloud, hosts, 'h3')]
    [cast] = _reschedule(cloud, cctxt, instance, alternates, retry)
    # Round 2: the compute on h3 fails too and, as today, only sets exc_reason.
    retry = dict(cast['filter_properties']['retry'], exc_reason='no space left')

    _reschedule(cloud, cctxt, instance, cast['host_list'], retry)

    assert _fault(cctxt, instance) == (
        'Exceeded maximum number of retries. Build failed on the 3 hosts tried: '
        'h1: disk on fire; h2: Placement refused the claim of its resources (the host '
        'filled up meanwhile); h3: no space left.')
    assert cloud.reportclient.get_allocations_for_consumer(cloud.context, instance.uuid) == {}
