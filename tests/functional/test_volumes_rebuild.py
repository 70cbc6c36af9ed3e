"""Rebuilding a volume-backed server (the Cinder double, the fake driver): from API 2.93
Cinder re-images the root volume (``os-reimage`` at volume API 3.68, the volume kept
reserved on a new attachment) and the host waits for Cinder's ``volume-reimaged``
event, which the double hands to the compute API as Cinder's nova notifier does. Below
2.93 only the volume's own image is accepted. A re-image that fails, or whose event
never comes, leaves the server in ERROR with a fault naming Cinder, and the one
attachment Cinder holds for it is the one its mapping names (a delete lets it go)."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conf import CONF
from novalite.volume import client
from tests.functional import volume_stack
from tests.functional.volume_stack import boot_active, delete, fault

# The module's fixtures: its stack with the Cinder double.
cinder, stack, flavor = volume_stack.cinder, volume_stack.stack, volume_stack.flavor


@pytest.fixture
def events(stack, cinder):
    """The double posts Cinder's events to the compute API, as Cinder's [nova] user
    (a service)."""
    cinder.notify = lambda body: stack.request(
        'POST', '/os-server-external-events', json={'events': body}, version='2.93')
    yield
    cinder.notify = None
    cinder.reimage_failures = 0
    cinder.faults.clear()


@pytest.fixture(scope='module')
def other_image(stack):
    return stack.glance.add_image('other-tiny')


def _backed_server(stack, cinder, flavor):
    volume = cinder.add_volume(size=1, volume_image_metadata={
        'image_id': stack.image['id']})
    server = boot_active(stack, flavor, [{
        'source_type': 'volume', 'destination_type': 'volume', 'uuid': volume['id'],
        'boot_index': 0}], image=False)
    return server, volume


def _rebuild(stack, server_id, image_id, version):
    return stack.request('POST', '/servers/%s/action' % server_id, version=version,
                         json={'rebuild': {'imageRef': image_id}})


def _reimages(cinder, volume_id):
    return [s for s in cinder.requests('POST')
            if s.path.endswith('/volumes/%s/action' % volume_id) and 'os-reimage' in s.body]


def _mapping(server_id):
    ctxt = nl_context.get_admin_context()
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, server_id)
    with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
        return next(bdm for bdm in objects.BlockDeviceMappingList.get_by_instance_uuid(
            cctxt, server_id) if bdm.is_root)


def _after_rebuild(stack, server_id):
    return stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version='2.93')


def test_rebuild_at_2_93_reimages_the_root_volume(stack, cinder, flavor, other_image,
                                                  events):
    server, volume = _backed_server(stack, cinder, flavor)
    (old,) = cinder.attachments_of(server['id'])
    resp = _rebuild(stack, server['id'], other_image['id'], '2.93')
    assert resp.status_code == 202, resp.text
    rebuilt = _after_rebuild(stack, server['id'])
    assert rebuilt['status'] == 'ACTIVE', rebuilt.get('fault')
    # As Nova: a volume-backed server keeps showing no image of its own.
    assert rebuilt['image'] == ''
    (reimage,) = _reimages(cinder, volume['id'])
    assert reimage.body == {'os-reimage': {'image_id': other_image['id'],
                                           'reimage_reserved': True}}
    assert reimage.headers['Openstack-Api-Version'] == 'volume 3.68'
    # Only the re-image asks for 3.68; the attachment calls stay where they were.
    assert {s.headers['Openstack-Api-Version'] for s in cinder.requests()
            if '/attachments' in s.path} == {'volume 3.54'}
    (new,) = cinder.attachments_of(server['id'])
    assert new['id'] != old['id'] and new['status'] == 'attached'
    assert new['connection_info'], 'the new attachment has this host connected'
    assert _mapping(server['id']).attachment_id == new['id']
    assert cinder.volumes[volume['id']]['status'] == 'in-use'
    assert cinder.volumes[volume['id']]['volume_image_metadata']['image_id'] == \
        other_image['id']
    delete(stack, server['id'])
    assert cinder.attachments_of(server['id']) == []
    assert cinder.volumes[volume['id']]['status'] == 'available'


def test_rebuild_at_2_93_with_the_same_image_reimages_too(stack, cinder, flavor, events):
    server, volume = _backed_server(stack, cinder, flavor)
    resp = _rebuild(stack, server['id'], stack.image['id'], '2.93')
    assert resp.status_code == 202, resp.text
    assert _after_rebuild(stack, server['id'])['status'] == 'ACTIVE'
    assert len(_reimages(cinder, volume['id'])) == 1
    delete(stack, server['id'])


def test_below_2_93_another_image_is_refused(stack, cinder, flavor, other_image):
    server, volume = _backed_server(stack, cinder, flavor)
    message = fault(_rebuild(stack, server['id'], other_image['id'], '2.92'), 400)
    assert message == ('Image %s is unacceptable: Unable to rebuild with a different image '
                       'for a volume-backed server.' % other_image['id'])
    shown = stack.request('GET', '/servers/%s' % server['id'], version='2.92').json()
    assert shown['server']['status'] == 'ACTIVE'
    assert _reimages(cinder, volume['id']) == []
    delete(stack, server['id'])


def test_below_2_93_the_same_image_rebuilds_keeping_the_volume(stack, cinder, flavor):
    server, volume = _backed_server(stack, cinder, flavor)
    (old,) = cinder.attachments_of(server['id'])
    resp = _rebuild(stack, server['id'], stack.image['id'], '2.92')
    assert resp.status_code == 202, resp.text
    assert _after_rebuild(stack, server['id'])['status'] == 'ACTIVE'
    assert _reimages(cinder, volume['id']) == []
    assert [a['id'] for a in cinder.attachments_of(server['id'])] == [old['id']]
    assert cinder.volumes[volume['id']]['status'] == 'in-use'
    delete(stack, server['id'])


@pytest.mark.parametrize('how', ['fails', 'no event'])
def test_a_reimage_that_fails_leaves_error_and_no_leak(stack, cinder, flavor, other_image,
                                                       events, how):
    server, volume = _backed_server(stack, cinder, flavor)
    if how == 'fails':
        cinder.reimage_failures = 1   # Cinder then sends no event, as the real one
    else:
        cinder.notify = None
    CONF.set_override('reimage_timeout_per_gb', 1)
    try:
        assert _rebuild(stack, server['id'], other_image['id'], '2.93').status_code == 202
        rebuilt = _after_rebuild(stack, server['id'])
    finally:
        CONF.clear_override('reimage_timeout_per_gb')
    assert rebuilt['status'] == 'ERROR'
    message = rebuilt['fault']['message']
    assert 'Failed to rebuild volume backed instance' in message, message
    assert 'Cinder did not report volume %s re-imaged' % volume['id'] in message, message
    # The one attachment Cinder holds is the mapping's: a delete lets it go.
    (held,) = cinder.attachments_of(server['id'])
    assert _mapping(server['id']).attachment_id == held['id']
    delete(stack, server['id'])
    assert cinder.attachments_of(server['id']) == []
    assert cinder.volumes[volume['id']]['status'] in ('available', 'error')


def test_cinder_refusing_the_reimage_is_the_fault(stack, cinder, flavor, other_image,
                                                  events):
    server, volume = _backed_server(stack, cinder, flavor)
    cinder.fail_next(400, 'Invalid input received: Image is too big.', path='/action')
    assert _rebuild(stack, server['id'], other_image['id'], '2.93').status_code == 202
    rebuilt = _after_rebuild(stack, server['id'])
    assert rebuilt['status'] == 'ERROR'
    assert 'Cinder refused to re-image volume %s' % volume['id'] in \
        rebuilt['fault']['message']
    assert len(cinder.attachments_of(server['id'])) == 1
    delete(stack, server['id'])
    assert cinder.attachments_of(server['id']) == []


def test_a_cinder_without_reimage_is_refused_at_once(stack, cinder, flavor, other_image):
    server, volume = _backed_server(stack, cinder, flavor)
    cinder.max_version = '3.60'
    client.reset()
    try:
        message = fault(_rebuild(stack, server['id'], other_image['id'], '2.93'), 400)
    finally:
        cinder.max_version = '3.71'
        client.reset()
    assert '3.68' in message, message
    assert _reimages(cinder, volume['id']) == []
    delete(stack, server['id'])


def test_images_that_do_not_fit_the_volume_are_refused(stack, cinder, flavor):
    server, volume = _backed_server(stack, cinder, flavor)
    big = stack.glance.add_image('big', size=(1 << 30) + 1)
    message = fault(_rebuild(stack, server['id'], big['id'], '2.93'), 400)
    assert 'larger than the root volume' in message, message
    picky = stack.glance.add_image('picky', min_disk=2)
    message = fault(_rebuild(stack, server['id'], picky['id'], '2.93'), 400)
    assert message.startswith('Volume is smaller than the minimum size'), message
    assert _reimages(cinder, volume['id']) == []
    delete(stack, server['id'])


def test_a_root_volume_attached_to_two_servers_is_refused(stack, cinder, flavor,
                                                          other_image):
    server, volume = _backed_server(stack, cinder, flavor)
    attachments = cinder.volumes[volume['id']]['attachments']
    attachments.append({'id': 'other', 'server_id': 'another-server',
                        'volume_id': volume['id']})
    try:
        message = fault(_rebuild(stack, server['id'], other_image['id'], '2.93'), 400)
    finally:
        attachments.pop()
    assert 'attached to more than one server' in message, message
    delete(stack, server['id'])


def test_a_failed_event_is_the_fault(stack, cinder, flavor, other_image, events):
    server, volume = _backed_server(stack, cinder, flavor)
    cinder.notify = lambda body: stack.request(
        'POST', '/os-server-external-events', version='2.93',
        json={'events': [dict(event, status='failed') for event in body]})
    assert _rebuild(stack, server['id'], other_image['id'], '2.93').status_code == 202
    rebuilt = _after_rebuild(stack, server['id'])
    assert rebuilt['status'] == 'ERROR'
    assert 'Cinder reported failure during reimaging of volume %s' % volume['id'] in \
        rebuilt['fault']['message']
    delete(stack, server['id'])
    assert cinder.attachments_of(server['id']) == []


def test_a_delete_ends_the_wait_for_cinder(stack, cinder, flavor, other_image, events):
    server, volume = _backed_server(stack, cinder, flavor)
    cinder.notify = None   # the event never comes
    # The host would wait 10 minutes: the delete must end the wait, not outlast it.
    CONF.set_override('reimage_timeout_per_gb', 600)
    try:
        assert _rebuild(stack, server['id'], other_image['id'], '2.93').status_code == 202
        volume_stack.wait(lambda: _reimages(cinder, volume['id']))
        delete(stack, server['id'])
    finally:
        CONF.clear_override('reimage_timeout_per_gb')
    assert cinder.attachments_of(server['id']) == []
    assert cinder.volumes[volume['id']]['status'] == 'available'
