"""Volume flows at their edges: one volume attached twice, a server deleted while its
host is down (the API lets its volumes go), a delete while a conductor holds the build,
several servers booted from one image as volumes, a blank root volume."""
from __future__ import annotations

import contextlib

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import api as compute_api
from novalite.compute import build, task_states, vm_states
from novalite.conductor import manager as conductor_manager
from novalite.conf import CONF
from tests.functional import volume_stack
from tests.functional.test_lost_builds import DirectTaskAPI, DyingScheduler, LostCast
from tests.functional.volume_stack import boot, boot_active, delete, fault, wait

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


def _path(server_id, volume_id=None):
    path = '/servers/%s/os-volume_attachments' % server_id
    return path + '/' + volume_id if volume_id else path


def _root_volume(volume_id, **extra):
    return dict({'source_type': 'volume', 'destination_type': 'volume', 'uuid': volume_id,
                 'boot_index': 0}, **extra)


def test_attaching_a_volume_twice_to_one_server_keeps_the_first(stack, cinder, flavor):
    server = boot_active(stack, flavor, name='twice')
    server_id = server['id']
    volume = cinder.add_volume()
    try:
        body = {'volumeAttachment': {'volumeId': volume['id']}}
        assert stack.request('POST', _path(server_id), json=body).status_code == 200
        wait(lambda: cinder.volumes[volume['id']]['status'] == 'in-use')
        assert volume['id'] in fault(stack.request('POST', _path(server_id), json=body),
                                     400)
        listed = stack.request('GET', _path(server_id)).json()['volumeAttachments']
        assert [(a['volumeId'], a['device']) for a in listed] == [(volume['id'],
                                                                   '/dev/vdb')]
        # Two attaches racing past the API's check: the host refuses the second.
        ctxt = nl_context.get_admin_context()
        instance = objects.Instance.get_by_uuid(ctxt, server_id)
        mgr = stack.computes[server['OS-EXT-SRV-ATTR:host']].manager
        with pytest.raises(exception.InvalidVolume, match='already attached'):
            mgr.reserve_block_device_name(ctxt, instance, None, volume['id'])
        assert len(cinder.attachments_of(server_id)) == 1
        assert stack.request('DELETE', _path(server_id, volume['id'])).status_code == 202
        wait(lambda: cinder.volumes[volume['id']]['status'] == 'available')
    finally:
        delete(stack, server_id)


@contextlib.contextmanager
def _forced_down(stack, host):
    def force(down):
        resp = stack.request('PUT', '/os-services/force-down', version='2.11', json={
            'host': host, 'binary': 'novalite-compute', 'forced_down': down})
        assert resp.status_code == 200, resp.text
    force(True)
    try:
        yield
    finally:
        force(False)


def test_a_server_on_a_host_that_is_down_lets_its_volumes_go_in_the_api(
        stack, cinder, flavor):
    kept = cinder.add_volume()
    server = boot_active(stack, flavor, [
        {'source_type': 'image', 'destination_type': 'volume', 'uuid': stack.image['id'],
         'boot_index': 0, 'volume_size': 1, 'delete_on_termination': True},
        {'source_type': 'volume', 'destination_type': 'volume', 'uuid': kept['id']}],
        image=False, name='host-down')
    server_id = server['id']
    made = [v['id'] for v in server['os-extended-volumes:volumes_attached']
            if v['id'] != kept['id']]
    assert len(made) == 1 and cinder.volumes[made[0]]['status'] == 'in-use'
    with _forced_down(stack, server['OS-EXT-SRV-ATTR:host']):
        delete(stack, server_id)
    assert cinder.attachments_of(server_id) == []
    assert made[0] not in cinder.volumes
    assert cinder.volumes[kept['id']]['status'] == 'available'


def test_a_delete_while_a_conductor_schedules_lets_the_volume_go(stack, cinder, flavor):
    volume = cinder.add_volume()
    ctxt = nl_context.RequestContext(user_id='admin', project_id='admin',
                                     roles=['admin', 'member', 'reader'], is_admin=True,
                                     overwrite=False)
    answers = []

    class DeleteDuringScheduling(DyingScheduler):
        def select_destinations(self, *args, **kwargs):
            result = self.real.select_destinations(*args, **kwargs)
            answers.append(stack.request('DELETE', '/servers/%s' % args[2][0]).status_code)
            return result

    task_manager = conductor_manager.ComputeTaskManager(
        query_client=DeleteDuringScheduling(0))
    api = compute_api.API(compute_task_api=DirectTaskAPI(task_manager))
    (instance,), _ = api.create(
        ctxt, objects.Flavor.get_by_name(ctxt, 'm1.volumes'), None, name='held',
        block_device_mapping=[{'source_type': 'volume', 'destination_type': 'volume',
                               'volume_id': volume['id'], 'boot_index': 0,
                               'delete_on_termination': False, 'volume_size': None}])
    assert answers == [204]
    assert stack.request('GET', '/servers/%s' % instance.uuid).status_code == 404
    assert cinder.attachments_of(instance.uuid) == []
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_two_servers_from_one_image_as_volumes_get_a_volume_each(stack, cinder, flavor):
    resp = boot(stack, flavor, [
        {'source_type': 'image', 'destination_type': 'volume', 'uuid': stack.image['id'],
         'boot_index': 0, 'volume_size': 1, 'delete_on_termination': True}],
        image=False, name='pair', min_count=2, return_reservation_id=True)
    assert resp.status_code == 202, resp.text
    reservation = resp.json()['reservation_id']
    servers = stack.request('GET', '/servers?reservation_id=%s' % reservation
                            ).json()['servers']
    assert len(servers) == 2
    found = [stack.wait_for_status(s['id'], ('ACTIVE', 'ERROR'), version='2.79')
             for s in servers]
    assert [s['status'] for s in found] == ['ACTIVE', 'ACTIVE'], found
    volumes = [[v['id'] for v in s['os-extended-volumes:volumes_attached']] for s in found]
    assert all(len(v) == 1 for v in volumes) and volumes[0] != volumes[1]
    for server, (volume_id,) in zip(found, volumes, strict=True):
        assert [a['server_id'] for a in cinder.volumes[volume_id]['attachments']] == [
            server['id']]
    for server in found:
        delete(stack, server['id'])
    assert not {v for (v,) in volumes} & set(cinder.volumes)


def test_a_blank_root_volume(stack, cinder, flavor):
    server = boot_active(stack, flavor, [
        {'source_type': 'blank', 'destination_type': 'volume', 'boot_index': 0,
         'volume_size': 1, 'delete_on_termination': True}], image=False, name='blank-root')
    (volume_id,) = [v['id'] for v in server['os-extended-volumes:volumes_attached']]
    assert server['image'] == ''
    assert cinder.volumes[volume_id]['status'] == 'in-use'
    delete(stack, server['id'])
    assert volume_id not in cinder.volumes


def test_a_delete_during_spawn_lets_the_volumes_go(stack, cinder, flavor):
    user = cinder.add_volume()
    CONF.set_override('spawn_seconds', 1, group='fake_driver')
    try:
        resp = boot(stack, flavor, [
            {'source_type': 'image', 'destination_type': 'volume',
             'uuid': stack.image['id'], 'boot_index': 0, 'volume_size': 1,
             'delete_on_termination': True},
            {'source_type': 'volume', 'destination_type': 'volume', 'uuid': user['id']}],
            image=False, name='deleted-while-spawning')
        assert resp.status_code == 202, resp.text
        server_id = resp.json()['server']['id']
        wait(lambda: stack.request('GET', '/servers/%s' % server_id).json()['server'][
            'OS-EXT-STS:task_state'] == 'spawning')
        made = [a['volume_id'] for a in cinder.attachments_of(server_id)
                if a['volume_id'] != user['id']]
        delete(stack, server_id)
    finally:
        CONF.clear_override('spawn_seconds', group='fake_driver')
    assert cinder.attachments_of(server_id) == []
    assert cinder.volumes[user['id']]['status'] == 'available'
    assert len(made) == 1 and made[0] not in cinder.volumes


def test_a_build_a_restart_interrupted_is_built_again_with_its_volumes(stack, cinder,
                                                                         flavor):
    user = cinder.add_volume()
    server = boot_active(stack, flavor, [_root_volume(user['id'])], image=False,
                         name='restarted')
    server_id = server['id']
    (first,) = cinder.attachments_of(server_id)
    svc = stack.computes[server['OS-EXT-SRV-ATTR:host']]
    # As the host finds it after a restart: BUILDING on it, spawning, no build running.
    ctxt = nl_context.get_admin_context()
    instance = objects.Instance.get_by_uuid(ctxt, server_id)
    instance.vm_state = vm_states.BUILDING
    instance.task_state = task_states.SPAWNING
    instance.save()

    svc._call(build.recover_interrupted_builds, svc.manager, ctxt)
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version='2.79')
    assert server['status'] == 'ACTIVE', server.get('fault')
    (again,) = cinder.attachments_of(server_id)
    assert again['id'] != first['id'] and again['status'] == 'attached'
    assert cinder.volumes[user['id']]['status'] == 'in-use'
    assert server['os-extended-volumes:volumes_attached'] == [
        {'id': user['id'], 'delete_on_termination': False}]
    delete(stack, server_id)
    assert cinder.volumes[user['id']]['status'] == 'available'


def test_a_volume_reserved_for_one_server_is_refused_to_another(stack, cinder, flavor):
    volume = cinder.add_volume()
    ctxt = nl_context.RequestContext(user_id='admin', project_id='admin',
                                     roles=['admin', 'member', 'reader'], is_admin=True,
                                     overwrite=False)
    # A server the API accepted and no conductor took yet: its volume is reserved.
    api = compute_api.API(compute_task_api=LostCast())
    (first,), _ = api.create(
        ctxt, objects.Flavor.get_by_name(ctxt, 'm1.volumes'), None, name='first',
        block_device_mapping=[{'source_type': 'volume', 'destination_type': 'volume',
                               'volume_id': volume['id'], 'boot_index': 0,
                               'delete_on_termination': False, 'volume_size': None}])
    assert cinder.volumes[volume['id']]['status'] == 'reserved'
    resp = boot(stack, flavor, [_root_volume(volume['id'])], image=False, name='second')
    assert volume['id'] in fault(resp, 400)
    other = boot_active(stack, flavor, name='third')
    resp = stack.request('POST', _path(other['id']),
                         json={'volumeAttachment': {'volumeId': volume['id']}})
    assert volume['id'] in fault(resp, 400)
    assert [a['instance'] for a in cinder.attachments.values()
            if a['volume_id'] == volume['id']] == [first.uuid]
    delete(stack, first.uuid)
    delete(stack, other['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_a_user_boots_from_volume_attaches_and_deletes(stack, cinder, flavor):
    owner = 'alice:alpha'
    root = cinder.add_volume()
    data = cinder.add_volume()
    resp = stack.request('POST', '/servers', token=owner, version='2.79', json={'server': {
        'name': 'alices', 'flavorRef': flavor, 'networks': 'none',
        'block_device_mapping_v2': [_root_volume(root['id'])]}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), token=owner)
    assert server['status'] == 'ACTIVE', server.get('fault')
    resp = stack.request('POST', _path(server_id), token=owner, version='2.79',
                         json={'volumeAttachment': {'volumeId': data['id'],
                                                    'delete_on_termination': True}})
    assert resp.status_code == 200, resp.text
    wait(lambda: cinder.volumes[data['id']]['status'] == 'in-use')
    calls = [s for s in cinder.requests() if s.body and 'attachment' in s.body and
             s.body['attachment'].get('instance_uuid') == server_id]
    assert calls and all(s.headers['X-Auth-Token'] == owner for s in calls)
    assert stack.request('DELETE', '/servers/%s' % server_id, token=owner).status_code == 204
    stack.wait_for_deleted(server_id, token=owner)
    assert cinder.volumes[root['id']]['status'] == 'available'
    assert data['id'] not in cinder.volumes


def test_a_delete_after_cinder_lost_the_attachment(stack, cinder, flavor):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_root_volume(volume['id'])], image=False,
                         name='lost-attachment')
    (attachment,) = cinder.attachments_of(server['id'])
    # An operator deleted it in Cinder behind novalite's back.
    del cinder.attachments[attachment['id']]
    volume = cinder.volumes[volume['id']]
    volume['attachments'], volume['status'] = [], 'available'
    delete(stack, server['id'])
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_a_soft_deleted_server_keeps_its_volumes_until_force_deleted(stack, cinder, flavor):
    volume = cinder.add_volume()
    server = boot_active(stack, flavor, [_root_volume(volume['id'],
                                                      delete_on_termination=True)],
                         image=False, name='soft')
    server_id = server['id']
    CONF.set_override('reclaim_instance_interval', 3600)
    try:
        assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
        stack.wait_for_status(server_id, ('SOFT_DELETED',))
        assert cinder.volumes[volume['id']]['status'] == 'in-use'
        resp = stack.request('POST', '/servers/%s/action' % server_id,
                             json={'restore': None})
        assert resp.status_code == 202, resp.text
        stack.wait_for_status(server_id, ('ACTIVE',))
        assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
        stack.wait_for_status(server_id, ('SOFT_DELETED',))
        resp = stack.request('POST', '/servers/%s/action' % server_id,
                             json={'forceDelete': None})
        assert resp.status_code == 202, resp.text
        stack.wait_for_deleted(server_id)
    finally:
        CONF.clear_override('reclaim_instance_interval')
    assert volume['id'] not in cinder.volumes
    assert cinder.attachments_of(server_id) == []
