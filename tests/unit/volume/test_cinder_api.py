"""Each method of the Cinder client: the request it makes and what it returns, against
the Cinder test double (keystone-less)."""
from __future__ import annotations

import types

import pytest

from novalite import exception
from novalite.conf import CONF
from novalite.volume import cinder as cinder_api
from tests.unit.volume.cinder_double import CinderDouble
from tests.unit.volume.conftest import user

SERVER = '2f7d6d0a-6a53-4b8e-9b2a-6f0c1d3e4f50'
CONNECTOR = {'platform': 'x86_64', 'os_type': 'linux', 'ip': '127.0.0.1',
             'host': 'nl-compute', 'multipath': False}


@pytest.fixture
def api(cinder: CinderDouble) -> cinder_api.API:
    return cinder_api.API()


def _volume(api: cinder_api.API) -> dict:
    return api.create(user(), 1, 'v1', 'first')


def test_create_posts_the_volume_and_returns_cinders_view(api: cinder_api.API,
                                                          cinder: CinderDouble) -> None:
    volume = api.create(user(), 2, 'v1', 'first', image_id='img-1', volume_type='ceph',
                        metadata={'k': 'v'}, availability_zone='az1')
    seen = cinder.requests('POST')[-1]
    assert seen.path == '/v3/volumes'
    assert seen.body == {'volume': {
        'size': 2, 'name': 'v1', 'description': 'first', 'snapshot_id': None,
        'imageRef': 'img-1', 'volume_type': 'ceph', 'availability_zone': 'az1',
        'metadata': {'k': 'v'}}}
    assert volume['status'] == 'creating' and volume['size'] == 2
    assert volume['bootable'] == 'true'


def test_create_from_a_snapshot_takes_its_id_or_the_snapshot(api: cinder_api.API,
                                                             cinder: CinderDouble) -> None:
    volume = api.wait_for_status(user(), _volume(api)['id'], {'available'}, timeout=5,
                                 interval=0)
    snapshot = api.create_snapshot(user(), volume['id'], 's1', None)
    for given in (snapshot['id'], snapshot):
        clone = api.create(user(), 1, 'clone', None, snapshot=given)
        assert cinder.requests('POST')[-1].body['volume']['snapshot_id'] == snapshot['id']
        assert clone['snapshot_id'] == snapshot['id']


def test_get_and_get_all_return_cinders_keys(api: cinder_api.API,
                                             cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    volume = api.get(user(), volume_id)
    for key in ('id', 'status', 'size', 'availability_zone', 'attachments', 'multiattach',
                'bootable', 'encrypted', 'volume_type', 'name'):
        assert key in volume
    assert volume['bootable'] == 'false'
    assert cinder.requests('GET')[-1].path == '/v3/volumes/%s' % volume_id
    listed = api.get_all(user(), {'status': 'available', 'all_tenants': 1})
    assert [v['id'] for v in listed] == [volume_id]
    seen = cinder.requests('GET')[-1]
    assert seen.path == '/v3/volumes/detail'
    assert seen.query == 'status=available&all_tenants=1'


def test_delete(api: cinder_api.API, cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    api.get(user(), volume_id)
    api.delete(user(), volume_id)
    assert cinder.requests('DELETE')[-1].path == '/v3/volumes/%s' % volume_id
    assert volume_id not in cinder.volumes


def test_wait_for_status_returns_the_volume_once_it_gets_there(
        api: cinder_api.API, cinder: CinderDouble) -> None:
    cinder.settle_after = 3
    volume_id = _volume(api)['id']
    volume = api.wait_for_status(user(), volume_id, {'available'}, timeout=30, interval=0)
    assert volume['status'] == 'available'
    assert len(cinder.requests('GET')) == 4


def test_wait_for_status_raises_volume_not_created_on_error(api: cinder_api.API) -> None:
    volume_id = api.create(user(), 1, 'will-error', None)['id']
    with pytest.raises(exception.VolumeNotCreated, match='error'):
        api.wait_for_status(user(), volume_id, {'available'}, timeout=30, interval=0)


def test_wait_for_status_raises_volume_not_created_when_time_runs_out(
        api: cinder_api.API, cinder: CinderDouble) -> None:
    cinder.settle_after = 10 ** 6
    volume_id = _volume(api)['id']
    with pytest.raises(exception.VolumeNotCreated, match='creating'):
        api.wait_for_status(user(), volume_id, {'available'}, timeout=0, interval=0)


def test_begin_and_roll_detaching_post_the_actions(api: cinder_api.API,
                                                   cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    api.get(user(), volume_id)
    cinder.volumes[volume_id]['status'] = 'in-use'
    api.begin_detaching(user(), volume_id)
    assert cinder.volumes[volume_id]['status'] == 'detaching'
    api.roll_detaching(user(), volume_id)
    assert cinder.volumes[volume_id]['status'] == 'in-use'
    assert [(s.path, s.body) for s in cinder.requests('POST')[-2:]] == [
        ('/v3/volumes/%s/action' % volume_id, {'os-begin_detaching': {}}),
        ('/v3/volumes/%s/action' % volume_id, {'os-roll_detaching': {}})]


def test_snapshots(api: cinder_api.API, cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    api.get(user(), volume_id)
    snapshot = api.create_snapshot(user(), volume_id, 's1', 'd1')
    assert cinder.requests('POST')[-1].body == {'snapshot': {
        'volume_id': volume_id, 'force': False, 'name': 's1', 'description': 'd1'}}
    assert api.get_snapshot(user(), snapshot['id'])['volume_id'] == volume_id
    assert [s['id'] for s in api.get_all_snapshots(user(), {'volume_id': volume_id})] == \
        [snapshot['id']]
    assert cinder.requests('GET')[-1].path == '/v3/snapshots/detail'
    cinder.volumes[volume_id]['status'] = 'in-use'
    with pytest.raises(exception.InvalidVolume, match='in-use'):
        api.create_snapshot(user(), volume_id, 's2', None)
    forced = api.create_snapshot_force(user(), volume_id, 's2', None)
    assert cinder.requests('POST')[-1].body['snapshot']['force'] is True
    for snapshot_id in (snapshot['id'], forced['id']):
        api.delete_snapshot(user(), snapshot_id)
    assert cinder.snapshots == {}


def test_the_attachment_flow(api: cinder_api.API, cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    api.get(user(), volume_id)
    reserved = api.attachment_create(user(), volume_id, SERVER)
    assert cinder.requests('POST')[-1].body == {'attachment': {
        'volume_uuid': volume_id, 'instance_uuid': SERVER}}
    assert reserved['status'] == 'reserved' and reserved['connection_info'] == {}
    updated = api.attachment_update(user(), reserved['id'], CONNECTOR, '/dev/vdb')
    put = cinder.requests('PUT')[-1]
    assert put.path == '/v3/attachments/%s' % reserved['id']
    assert put.body == {'attachment': {'connector': dict(CONNECTOR, mountpoint='/dev/vdb')}}
    info = updated['connection_info']
    assert info['driver_volume_type'] == 'rbd'
    assert info['data']['name'] == 'volumes/volume-%s' % volume_id
    assert 'driver_volume_type' not in info['data'] and 'attachment_id' not in info['data']
    assert info['attachment_id'] == reserved['id'] and info['volume_id'] == volume_id
    api.attachment_complete(user(), reserved['id'])
    assert cinder.requests('POST')[-1].body == {'os-complete': None}
    assert api.get(user(), volume_id)['status'] == 'in-use'
    fetched = api.attachment_get(user(), reserved['id'])
    assert fetched['connection_info'] == info
    for found in (api.attachment_get_all(user(), instance_id=SERVER),
                  api.attachment_get_all(user(), volume_id=volume_id)):
        assert [a['id'] for a in found] == [reserved['id']]
        assert found[0]['connection_info'] == info
    assert cinder.requests('GET')[-1].path == '/v3/attachments/detail'
    assert cinder.requests('GET')[-1].query == 'volume_id=%s' % volume_id
    assert api.attachment_get_all(user(), instance_id=SERVER, volume_id='other') == []
    with pytest.raises(exception.InvalidRequest):
        api.attachment_get_all(user())
    api.attachment_delete(user(), reserved['id'])
    assert cinder.requests('DELETE')[-1].path == '/v3/attachments/%s' % reserved['id']
    assert api.get(user(), volume_id)['status'] == 'available'


def test_attachment_create_with_a_connector_connects_at_once_in_rw_mode(
        api: cinder_api.API, cinder: CinderDouble) -> None:
    volume_id = _volume(api)['id']
    api.get(user(), volume_id)
    attachment = api.attachment_create(user(), volume_id, SERVER, CONNECTOR, '/dev/vdc')
    assert cinder.requests('POST')[-1].body == {'attachment': {
        'volume_uuid': volume_id, 'instance_uuid': SERVER, 'mode': 'rw',
        'connector': dict(CONNECTOR, mountpoint='/dev/vdc')}}
    assert attachment['connection_info']['driver_volume_type'] == 'rbd'
    assert attachment['attach_mode'] == 'rw'
    assert 'mountpoint' not in CONNECTOR


def test_check_available(api: cinder_api.API) -> None:
    api.check_available({'id': 'v', 'status': 'available'})
    api.check_available({'id': 'v', 'status': 'in-use', 'multiattach': True})
    with pytest.raises(exception.InvalidVolume, match="status must be 'available'. "
                                                      "Currently in 'error'"):
        api.check_available({'id': 'v', 'status': 'error'})
    with pytest.raises(exception.InvalidVolume, match='volume v already attached'):
        api.check_available({'id': 'v', 'status': 'in-use', 'multiattach': False})
    with pytest.raises(exception.InvalidVolume, match="must be 'in-use'"):
        api.check_attached(user(), {'id': 'v', 'status': 'available'})


def _instance(host: str | None, zone: str | None) -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=SERVER, host=host, availability_zone=zone,
                                 obj_attr_is_set=lambda name: True)


def test_check_availability_zone_follows_cross_az_attach(api: cinder_api.API) -> None:
    volume = {'id': 'v', 'availability_zone': 'az1'}
    other = _instance(None, 'az2')
    api.check_availability_zone(user(), volume, other)  # type: ignore[arg-type]
    CONF.set_override('cross_az_attach', False, group='cinder')
    api.check_availability_zone(user(), volume)
    api.check_availability_zone(user(), volume, _instance(None, 'az1'))  # type: ignore[arg-type]
    with pytest.raises(exception.InvalidVolume, match='Instance is in az2. Volume is in az1'):
        api.check_availability_zone(user(), volume, other)  # type: ignore[arg-type]


def test_a_server_on_a_host_is_in_its_hosts_zone(api: cinder_api.API,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cinder_api.availability_zones, 'host_zone',
                        lambda context, host: {'host1': 'az1'}[host])
    CONF.set_override('cross_az_attach', False, group='cinder')
    # The zone asked at boot no longer counts once the server has a host.
    api.check_availability_zone(user(), {'id': 'v', 'availability_zone': 'az1'},
                                _instance('host1', 'az2'))  # type: ignore[arg-type]
