"""In-place actions on the fake driver: what it supports that test:/// cannot show
(a password set without a guest agent)."""
from __future__ import annotations

from tests.functional import test_actions_inplace as inplace


def _boot(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'fk.inplace', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return inplace._boot(stack, resp.json()['flavor'])


def test_change_password_pause_and_rescue_on_the_fake_driver(stack):
    server_id = _boot(stack)
    host = inplace._show(stack, server_id)['OS-EXT-SRV-ATTR:host']
    guests = stack.computes[host].manager.driver._instances
    try:
        inplace._action(stack, server_id, {'changePassword': {'adminPass': 'n3w'}})
        assert guests[server_id]['admin_password'] == 'n3w'
        assert inplace._show(stack, server_id)['OS-EXT-STS:task_state'] is None
        inplace._action(stack, server_id, {'pause': None})
        inplace._settled(stack, server_id, ('PAUSED',))
        inplace._action(stack, server_id, {'unpause': None})
        inplace._settled(stack, server_id, ('ACTIVE',))
        inplace._action(stack, server_id, {'rescue': None}, code=200)
        inplace._settled(stack, server_id, ('RESCUE',))
        assert guests[server_id]['rescue_image'] == stack.image['id']
        inplace._action(stack, server_id, {'unrescue': None})
        inplace._settled(stack, server_id, ('ACTIVE',))
        assert 'rescue_image' not in guests[server_id]
    finally:
        stack.request('DELETE', '/servers/%s' % server_id)
        stack.wait_for_deleted(server_id)
