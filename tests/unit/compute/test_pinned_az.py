"""Unpinning and re-pinning a server's zone (2.104): which transitions save, which are 409."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from novalite import availability_zones, objects
from novalite.compute import pinned_az


class _Spec:
    """A request spec with just the zone, counting its saves."""

    def __init__(self, zone: str | None) -> None:
        self.availability_zone = zone
        self.saves = 0

    def obj_attr_is_set(self, name: str) -> bool:
        return name == 'availability_zone'

    def save(self) -> None:
        self.saves += 1


class _Context:
    def elevated(self) -> _Context:
        return self


@pytest.fixture
def spec(monkeypatch):
    holder = {'spec': _Spec(None)}
    objects.register_all()
    monkeypatch.setattr(objects.RequestSpec, 'get_by_instance_uuid',
                        classmethod(lambda cls, ctx, uuid: holder['spec']))
    monkeypatch.setattr(availability_zones, 'host_zone',
                        lambda ctx, host: {'h1': 'az1', 'h2': 'nova'}[host])
    return holder


def _instance(host: str | None = 'h1', zone: str | None = None):
    return SimpleNamespace(uuid='u1', host=host, availability_zone=zone)


def _pin(zone, instance=None):
    pinned_az.set_pinned_zone(_Context(), instance or _instance(), zone)


def test_pin_to_the_hosts_zone(spec):
    _pin('az1')
    assert (spec['spec'].availability_zone, spec['spec'].saves) == ('az1', 1)


def test_pin_elsewhere_is_a_conflict_naming_the_current_zone(spec):
    with pytest.raises(pinned_az.PinnedZoneNotCurrent) as caught:
        _pin('az2')
    assert caught.value.code == 409
    assert "current availability zone 'az1', but 'az2'" in caught.value.format_message()
    assert spec['spec'].saves == 0


def test_a_pinned_server_must_be_unpinned_first(spec):
    spec['spec'] = _Spec('az1')
    with pytest.raises(pinned_az.PinnedZoneChange):
        _pin('nova', _instance('h2'))
    assert spec['spec'].saves == 0


@pytest.mark.parametrize('zone', ['az1', None])
def test_asking_for_the_current_pin_changes_nothing(spec, zone):
    spec['spec'] = _Spec(zone)
    _pin(zone)
    assert spec['spec'].saves == 0


def test_unpin(spec):
    spec['spec'] = _Spec('az1')
    _pin(None)
    assert (spec['spec'].availability_zone, spec['spec'].saves) == (None, 1)


def test_without_a_host_the_requested_zone_counts(spec):
    assert pinned_az.current_zone(_Context(), _instance(None, 'az9')) == 'az9'
    _pin('az9', _instance(None, 'az9'))
    assert spec['spec'].availability_zone == 'az9'
