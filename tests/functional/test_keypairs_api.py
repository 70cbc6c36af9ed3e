"""os-keypairs through the real stack: import, generate, list pages, quota, ownership."""
from __future__ import annotations

import subprocess

import pytest

from novalite import crypto
from novalite.conf import CONF

USER = 'dave:proj-d'


@pytest.fixture(scope='module')
def public_key():
    _private, public, _fingerprint = crypto.generate_key_pair()
    return public


def test_import_show_delete(stack, public_key):
    resp = stack.request('POST', '/os-keypairs', token=USER, version='2.2', json={
        'keypair': {'name': 'imported', 'public_key': public_key}})
    assert resp.status_code == 201, resp.text
    body = resp.json()['keypair']
    assert 'private_key' not in body
    assert body['fingerprint'] == crypto.ssh_fingerprint(public_key)
    assert (body['type'], body['user_id']) == ('ssh', 'dave')
    shown = stack.request('GET', '/os-keypairs/imported', token=USER).json()['keypair']
    assert shown['public_key'] == public_key and shown['deleted'] is False
    assert stack.request('POST', '/os-keypairs', token=USER, json={
        'keypair': {'name': 'imported', 'public_key': public_key}}).status_code == 409
    assert stack.request('GET', '/os-keypairs/imported',
                         token='erin:proj-d').status_code == 404
    assert stack.request('DELETE', '/os-keypairs/imported', token=USER,
                         version='2.2').status_code == 204
    assert stack.request('GET', '/os-keypairs/imported', token=USER).status_code == 404


def test_generated_key_pair_is_usable(stack, tmp_path):
    resp = stack.request('POST', '/os-keypairs', token=USER, version='2.91',
                         json={'keypair': {'name': 'generated'}})
    assert resp.status_code == 201
    body = resp.json()['keypair']
    key_file = tmp_path / 'id_rsa'
    key_file.write_text(body['private_key'])
    key_file.chmod(0o600)
    derived = subprocess.run(['ssh-keygen', '-y', '-f', str(key_file)], check=True,
                             capture_output=True, text=True).stdout.split()[:2]
    assert derived == body['public_key'].split()[:2]
    assert stack.request('POST', '/os-keypairs', token=USER, version='2.92', json={
        'keypair': {'name': 'generated2'}}).status_code == 400
    resp = stack.request('POST', '/os-keypairs', token=USER, version='2.2',
                         json={'keypair': {'name': 'cert', 'type': 'x509'}})
    assert resp.status_code == 201
    assert resp.json()['keypair']['public_key'].startswith('-----BEGIN CERTIFICATE')
    for name in ('generated', 'cert'):
        stack.request('DELETE', '/os-keypairs/%s' % name, token=USER)


def test_invalid_keys_and_names(stack):
    assert stack.request('POST', '/os-keypairs', token=USER, json={
        'keypair': {'name': 'bad', 'public_key': 'ssh-rsa notakey'}}).status_code == 400
    assert stack.request('POST', '/os-keypairs', token=USER, version='2.91', json={
        'keypair': {'name': 'a@b'}}).status_code == 400
    assert stack.request('POST', '/os-keypairs', token=USER, version='2.1', json={
        'keypair': {'name': 'typed', 'type': 'ssh'}}).status_code == 400


def test_list_pages_and_admin_user_id(stack, public_key):
    for name in ('k1', 'k2', 'k3'):
        assert stack.request('POST', '/os-keypairs', token=USER, version='2.92', json={
            'keypair': {'name': name, 'public_key': public_key}}).status_code == 201
    page = stack.request('GET', '/os-keypairs?limit=2', token=USER, version='2.35').json()
    assert [k['keypair']['name'] for k in page['keypairs']] == ['k1', 'k2']
    assert 'marker=k2' in page['keypairs_links'][0]['href']
    rest = stack.request('GET', '/os-keypairs?marker=k2', token=USER, version='2.35').json()
    assert [k['keypair']['name'] for k in rest['keypairs']] == ['k3']
    assert stack.request('GET', '/os-keypairs?marker=zz', token=USER,
                         version='2.35').status_code == 400
    assert stack.request('GET', '/os-keypairs?user_id=dave', token='erin:proj-d',
                         version='2.10').status_code == 403
    admin = stack.request('GET', '/os-keypairs?user_id=dave', version='2.10').json()
    assert len(admin['keypairs']) == 3
    resp = stack.request('POST', '/os-keypairs', version='2.10', json={
        'keypair': {'name': 'for-dave', 'user_id': 'dave', 'public_key': public_key}})
    assert resp.status_code == 201 and resp.json()['keypair']['user_id'] == 'dave'


def test_key_pairs_quota(stack, public_key):
    CONF.set_override('key_pairs', 0, group='quota')
    try:
        resp = stack.request('POST', '/os-keypairs', token='frank:proj-f', json={
            'keypair': {'name': 'one', 'public_key': public_key}})
    finally:
        CONF.clear_override('key_pairs', group='quota')
    assert resp.status_code == 403
    assert 'key pairs' in resp.json()['forbidden']['message']


def test_server_boots_with_a_key(stack, public_key):
    stack.request('POST', '/os-keypairs', token=USER, json={
        'keypair': {'name': 'bootkey', 'public_key': public_key}})
    flavor = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.kp', 'ram': 64, 'vcpus': 1, 'disk': 1}}).json()['flavor']['id']
    resp = stack.request('POST', '/servers', token=USER, version='2.37', json={'server': {
        'name': 'with-key', 'imageRef': stack.image['id'], 'flavorRef': flavor,
        'networks': 'none', 'key_name': 'bootkey'}})
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                   token=USER)
    assert server['key_name'] == 'bootkey'
    assert stack.request('POST', '/servers', token=USER, version='2.37', json={'server': {
        'name': 'bad-key', 'imageRef': stack.image['id'], 'flavorRef': flavor,
        'networks': 'none', 'key_name': 'nokey'}}).status_code == 400
