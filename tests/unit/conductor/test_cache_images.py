"""The conductor's image pre-caching: each host of the aggregate asked in turn, hosts
that are down or unmapped skipped, a host that fails counted as errors; and the
API-side check that every image exists before anything is asked."""
from __future__ import annotations

import contextlib
import types

import pytest

from novalite import exception
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conductor.tasks import cache_images


class _ComputeRPC:
    def __init__(self, failing=()):
        self.asked: list[str] = []
        self.failing = failing

    def cache_images(self, context, host, image_ids):
        self.asked.append(host)
        if host in self.failing:
            raise RuntimeError('host %s broke' % host)
        return dict.fromkeys(image_ids, 'cached')


@pytest.fixture
def cell_world(monkeypatch):
    """Hosts a, b (up), down (down) and lost (no host mapping)."""
    def get_by_host(context, host):
        if host == 'lost':
            raise exception.HostMappingNotFound(name=host)
        return types.SimpleNamespace(cell_mapping='cell1')

    @contextlib.contextmanager
    def target_cell(context, cell):
        yield context

    monkeypatch.setattr(cache_images.objects.HostMapping, 'get_by_host', get_by_host)
    monkeypatch.setattr(cache_images.nl_context, 'target_cell', target_cell)
    monkeypatch.setattr(cache_images.objects.Service, 'get_by_host_and_binary',
                        lambda ctxt, host, binary: types.SimpleNamespace(host=host))
    monkeypatch.setattr(cache_images.servicegroup_api.API, 'service_is_up',
                        lambda self, service: service.host != 'down')


def test_up_hosts_are_asked_the_others_skipped(cell_world):
    rpc = _ComputeRPC(failing=('b',))
    aggregate = types.SimpleNamespace(id=7, hosts=['a', 'b', 'down', 'lost'])
    results = cache_images.cache_images(types.SimpleNamespace(compute_rpcapi=rpc), None,
                                        aggregate, ['i1', 'i2'])
    assert rpc.asked == ['a', 'b']
    assert results == {'a': {'i1': 'cached', 'i2': 'cached'},
                       'b': {'i1': 'error', 'i2': 'error'},
                       'down': {'i1': 'skipped', 'i2': 'skipped'},
                       'lost': {'i1': 'skipped', 'i2': 'skipped'}}


class _Images:
    def __init__(self, known):
        self.known = known

    def get(self, context, image_id):
        if image_id not in self.known:
            raise exception.ImageNotFound(image_id=image_id)
        return {'id': image_id}


class _CastClient:
    def __init__(self):
        self.casts = []

    def prepare(self, version=None):
        return self

    def cast(self, context, method, **kwargs):
        self.casts.append(kwargs['image_ids'])


def test_api_checks_every_image_before_casting():
    api = conductor_rpcapi.ComputeTaskAPI.__new__(conductor_rpcapi.ComputeTaskAPI)
    api.client = client = _CastClient()
    with pytest.raises(exception.ImageNotFound):
        api.cache_images(None, 'agg', ['i1', 'missing'], image_api=_Images({'i1'}))
    assert client.casts == []
    api.cache_images(None, 'agg', ['i1'], image_api=_Images({'i1'}))
    assert client.casts == [['i1']]
