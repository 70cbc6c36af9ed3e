"""SchedulerReportClient against the real Placement (tests/fixtures/placement.py)."""
from __future__ import annotations

import uuid

import pytest

from novalite import exception
from novalite.scheduler.client import report

INVENTORY = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 4096, 'reserved': 512},
             'DISK_GB': {'total': 100}}


def _provider(client, ctxt, name='node1', inventory=INVENTORY):
    rp = str(uuid.uuid4())
    client.ensure_resource_provider(ctxt, rp, name)
    client.set_inventory_for_provider(ctxt, rp, inventory)
    return rp


def test_ensure_resource_provider_creates_once_and_returns_generation(reportclient, ctxt):
    rp = str(uuid.uuid4())

    assert reportclient.ensure_resource_provider(ctxt, rp, 'node1') == 0
    assert reportclient.ensure_resource_provider(ctxt, rp, 'node1') == 0

    providers = reportclient.get_provider_usages_and_inventories(ctxt)
    assert list(providers) == [rp]


def test_ensure_resource_provider_name_taken_by_another_uuid(reportclient, ctxt):
    reportclient.ensure_resource_provider(ctxt, str(uuid.uuid4()), 'node1')

    with pytest.raises(exception.ResourceProviderError, match='node1'):
        reportclient.ensure_resource_provider(ctxt, str(uuid.uuid4()), 'node1')


def test_set_inventory_puts_only_changes(reportclient, ctxt, placement):
    rp = _provider(reportclient, ctxt)
    inventories = reportclient.get_provider_usages_and_inventories(ctxt)[rp]['inventories']
    assert inventories['MEMORY_MB']['total'] == 4096
    assert inventories['MEMORY_MB']['reserved'] == 512
    generation = reportclient.get_provider_traits(ctxt, rp)[0]

    # Same inventory (defaults spelled out or not): no PUT, the generation stays.
    reportclient.set_inventory_for_provider(ctxt, rp, dict(INVENTORY, VCPU={
        'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 8, 'step_size': 1,
        'allocation_ratio': 1}))
    assert reportclient.get_provider_traits(ctxt, rp)[0] == generation

    reportclient.set_inventory_for_provider(ctxt, rp, dict(INVENTORY, VCPU={'total': 16}))
    assert reportclient.get_provider_traits(ctxt, rp)[0] == generation + 1
    inventories = reportclient.get_provider_usages_and_inventories(ctxt)[rp]['inventories']
    assert inventories['VCPU']['total'] == 16


def test_set_inventory_recovers_from_a_stale_generation(reportclient, ctxt):
    rp = _provider(reportclient, ctxt)
    # Another client (another compute restart, say) changes the provider meanwhile.
    other = report.SchedulerReportClient()
    other.set_inventory_for_provider(ctxt, rp, dict(INVENTORY, VCPU={'total': 4}))

    reportclient.set_inventory_for_provider(ctxt, rp, dict(INVENTORY, VCPU={'total': 32}))

    inventories = other.get_provider_usages_and_inventories(ctxt)[rp]['inventories']
    assert inventories['VCPU']['total'] == 32


def test_claim_get_and_delete_allocations(reportclient, ctxt):
    rp = _provider(reportclient, ctxt)
    alloc_reqs, summaries, version = reportclient.get_allocation_candidates(
        ctxt, {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}, limit=10)
    assert version == report.PLACEMENT_VERSION
    assert len(alloc_reqs) == 1
    assert summaries[rp]['resources']['MEMORY_MB'] == {'capacity': 3584, 'used': 0}
    consumer = str(uuid.uuid4())

    assert reportclient.claim_resources(ctxt, consumer, alloc_reqs[0], 'p1', 'u1')

    expected = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}
    assert reportclient.get_allocations_for_consumer(ctxt, consumer) == {
        rp: {'resources': expected}}
    assert reportclient.get_allocations_for_resource_provider(ctxt, rp) == {consumer: expected}
    assert reportclient.delete_allocation_for_instance(ctxt, consumer) is True
    assert reportclient.get_allocations_for_consumer(ctxt, consumer) == {}
    assert reportclient.delete_allocation_for_instance(ctxt, consumer) is False


def test_claim_returns_false_when_capacity_is_gone(reportclient, ctxt):
    _provider(reportclient, ctxt)
    alloc_reqs = reportclient.get_allocation_candidates(ctxt, {'MEMORY_MB': 3000})[0]

    assert reportclient.claim_resources(ctxt, str(uuid.uuid4()), alloc_reqs[0], 'p1', 'u1')
    # The same candidate no longer fits: a second consumer is refused.
    assert not reportclient.claim_resources(ctxt, str(uuid.uuid4()), alloc_reqs[0], 'p1', 'u1')


def test_claim_replaces_an_earlier_claim_of_the_same_consumer(reportclient, ctxt):
    rp = _provider(reportclient, ctxt)
    consumer = str(uuid.uuid4())
    small = reportclient.get_allocation_candidates(ctxt, {'VCPU': 1})[0][0]
    big = reportclient.get_allocation_candidates(ctxt, {'VCPU': 4})[0][0]
    assert reportclient.claim_resources(ctxt, consumer, small, 'p1', 'u1')

    # The consumer exists now (generation 1, not None): retried with its generation.
    assert reportclient.claim_resources(ctxt, consumer, big, 'p1', 'u1')

    assert reportclient.get_allocations_for_consumer(ctxt, consumer) == {
        rp: {'resources': {'VCPU': 4}}}


def test_traits_filter_candidates(reportclient, ctxt):
    rp1 = _provider(reportclient, ctxt, 'node1')
    rp2 = _provider(reportclient, ctxt, 'node2')
    reportclient.set_traits_for_provider(ctxt, rp1, ['COMPUTE_STATUS_DISABLED'])

    alloc_reqs = reportclient.get_allocation_candidates(
        ctxt, {'VCPU': 1}, forbidden_traits=['COMPUTE_STATUS_DISABLED'])[0]

    assert [list(a['allocations']) for a in alloc_reqs] == [[rp2]]
    # Traits bumped rp1's generation; the inventory cache must not trip on it.
    reportclient.set_inventory_for_provider(ctxt, rp1, dict(INVENTORY, VCPU={'total': 2}))


def test_delete_resource_provider(reportclient, ctxt):
    rp = _provider(reportclient, ctxt)

    reportclient.delete_resource_provider(ctxt, rp)
    reportclient.delete_resource_provider(ctxt, rp)

    assert reportclient.get_provider_usages_and_inventories(ctxt) == {}


def test_unreachable_placement_says_where(reportclient, ctxt, placement):
    url = placement.url
    placement.stop()

    with pytest.raises(exception.PlacementAPIConnectFailure) as info:
        reportclient.get_allocation_candidates(ctxt, {'VCPU': 1})

    assert 'Placement could not be reached at %s' % url in str(info.value)
    assert 'connection refused' in str(info.value)


def test_unexpected_answer_is_a_resource_provider_error(reportclient, ctxt):
    with pytest.raises(exception.ResourceProviderError, match='returned 400'):
        reportclient.get_allocation_candidates(ctxt, {'NO_SUCH_CLASS': 1})


class _Answer:
    """A test double of a Placement response."""

    def __init__(self, status_code, body):
        self.status_code = status_code
        self._body = body
        self.text = str(body)

    def json(self):
        return self._body


def test_placement_5xx_and_racing_claims_are_outages_4xx_answers(reportclient, ctxt,
                                                                  monkeypatch):
    """A claim Placement answered 500 (its database down) was an AllocationUpdateFailed
    that ended the build; claims racing after an outage until the generations settle
    too. Both are now errors the build retries; a 400 is still an answer."""
    from novalite import transient
    answers = {'PUT': _Answer(500, {'errors': [{'detail': 'db down'}]})}
    monkeypatch.setattr(reportclient, '_request',
                        lambda method, url, context, **kw: answers[method])
    claim = {'allocations': {str(uuid.uuid4()): {'resources': {'VCPU': 1}}}}
    with pytest.raises(exception.PlacementAPIServerError) as caught:
        reportclient.claim_resources(ctxt, str(uuid.uuid4()), claim, 'p', 'u')
    assert transient.is_transient(caught.value)

    answers['PUT'] = _Answer(409, {'errors': [{'code': 'placement.concurrent_update'}]})
    answers['GET'] = _Answer(200, {'allocations': {}, 'consumer_generation': 1})
    with pytest.raises(exception.AllocationConflict) as caught:
        reportclient.claim_resources(ctxt, str(uuid.uuid4()), claim, 'p', 'u')
    assert transient.is_transient(caught.value)

    answers['PUT'] = _Answer(400, {'errors': [{'detail': 'bad'}]})
    with pytest.raises(exception.AllocationUpdateFailed) as caught:
        reportclient.claim_resources(ctxt, str(uuid.uuid4()), claim, 'p', 'u')
    assert not transient.is_transient(caught.value)


def test_claim_for_a_consumer_placement_kept_without_allocations(reportclient, ctxt,
                                                                 monkeypatch):
    """Placement's database failed half-way through a claim and kept the consumer (at
    generation 0) with no allocations: its GET shows no generation, so every retry sent
    none and was refused "expected 0 but got None" until the build failed."""
    sent = []
    conflict = _Answer(409, {'errors': [{'code': 'placement.concurrent_update'}]})
    conflict.text = ('{"errors": [{"detail": "consumer generation conflict - expected 0 '
                     'but got None ", "code": "placement.concurrent_update"}]}')

    def request(method, url, context, json=None, **kw):
        if method == 'GET':
            return _Answer(200, {'allocations': {}})
        sent.append(json['consumer_generation'])
        return conflict if json['consumer_generation'] is None else _Answer(204, {})
    monkeypatch.setattr(reportclient, '_request', request)
    claim = {'allocations': {str(uuid.uuid4()): {'resources': {'VCPU': 1}}}}
    assert reportclient.claim_resources(ctxt, str(uuid.uuid4()), claim, 'p', 'u')
    assert sent == [None, 0]


def test_generation_conflicts_are_tried_again_generation_retries_times(reportclient, ctxt,
                                                                       monkeypatch):
    """Every write that checks a generation reads it again and writes again on a
    conflict, GENERATION_RETRIES times in all (one shared retry, not a loop each)."""
    conflict = _Answer(409, {'errors': [{'code': 'placement.concurrent_update'}]})
    consumer = str(uuid.uuid4())
    record = _Answer(200, {'allocations': {'rp': {'resources': {'VCPU': 1}},
                                           'rp2': {'resources': {'VCPU': 1}}},
                           'consumer_generation': 1, 'project_id': 'p', 'user_id': 'u',
                           'resource_provider_generation': 1, 'inventories': {},
                           'traits': []})
    writes = []

    def request(method, url, context, json=None, **kw):
        if method == 'GET':
            return record
        writes.append((method, url))
        return conflict
    monkeypatch.setattr(reportclient, '_request', request)
    calls = [
        (exception.AllocationConflict, lambda: reportclient.claim_resources(
            ctxt, consumer, {'allocations': {}}, 'p', 'u')),
        (exception.ResourceProviderInventoryUpdateFailed,
         lambda: reportclient.set_inventory_for_provider(ctxt, 'rp', INVENTORY)),
        (exception.ResourceProviderError,
         lambda: reportclient.set_traits_for_provider(ctxt, 'rp', ['HW_CPU_X86_AVX'])),
        (exception.AllocationMoveFailed,
         lambda: reportclient.move_allocations(ctxt, consumer, str(uuid.uuid4()))),
        (exception.AllocationConflict,
         lambda: reportclient.remove_provider_from_consumer(ctxt, consumer, 'rp')),
    ]
    for error, call in calls:
        writes.clear()
        with pytest.raises(error, match='kept changing'):
            call()
        assert len(writes) == report.GENERATION_RETRIES, error
