"""Hostile and careless input through the real stack (issue 20): every one is a 4xx in
Nova's fault format, never a 500, and none of it reaches the database unvalidated."""
from __future__ import annotations

import json
import socket
import urllib.parse

import pytest
import requests

LATEST = '2.104'
OWNER = 'alice:proj-h'
ADMIN = 'admin:admin'
HUGE = '9223372036854775808'  # 2**63: past every integer column


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.hostile', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, name, **extra):
    body = {'server': dict({'name': name, 'imageRef': stack.image['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    return stack.request('POST', '/servers', json=body, token=OWNER, version=LATEST)


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    resp = _boot(stack, flavor_id, 'hostile-vm')
    assert resp.status_code == 202, resp.text
    return stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE',), token=OWNER,
                                 version=LATEST)


@pytest.fixture(scope='module')
def aggregate(stack):
    resp = stack.request('POST', '/os-aggregates', json={'aggregate': {'name': 'agg-h'}})
    assert resp.status_code == 200, resp.text
    return resp.json()['aggregate']


def _root(stack) -> str:
    return stack.api[:-len('/v2.1')]


def _fault(resp, code: int) -> dict:
    """The fault of ``resp``, checked to be Nova's: JSON, one key, code and message."""
    assert resp.status_code == code, (resp.status_code, resp.text)
    assert resp.headers['Content-Type'].startswith('application/json')
    if resp.request.method == 'HEAD':
        return {}
    (fault,) = resp.json().values()
    assert fault['code'] == code and fault['message']
    return fault


# -- F1: invalid UTF-8 in a percent-escape --------------------------------------------

@pytest.mark.parametrize('method', ['GET', 'HEAD'])
@pytest.mark.parametrize('path', [
    '/v2.1/servers/%ff', '/v2.1/servers?name=%ff', '/v2.1/servers/detail?name=%C3%28',
    '/v2.1/flavors/%ff', '/v2.1/os-keypairs/%ff', '/v2.1/os-aggregates?x=%ff',
    '/v2.1/%ff/servers', '/v2.1?x=%ff', '/v2.1/%ff', '/v2/servers/%ff', '/v2?x=%ff',
    '/%ff', '/?x=%ff', '/nowhere/%ff', '/v2.1/servers/%ed%a0%80'])
def test_undecodable_url_is_a_400(stack, method, path):
    resp = requests.request(method, _root(stack) + path, timeout=10,
                            headers={'X-Auth-Token': ADMIN})
    fault = _fault(resp, 400)
    if fault:
        assert 'not UTF-8 encoded' in fault['message']


def test_undecodable_query_on_a_write(stack, server):
    resp = stack.request('PUT', '/servers/%s?x=%%ff' % server['id'], token=OWNER,
                         json={'server': {'name': 'x'}})
    assert _fault(resp, 400)['message'] == 'Query string is not UTF-8 encoded'


# -- F2: JSON nested too deep ---------------------------------------------------------

DEEP = b'{"a": ' * 10000 + b'1' + b'}' * 10000
# Deep enough to strain the validator and the error message, not the parser.
NEARLY = b'[' * 900 + b']' * 900


@pytest.mark.parametrize('method,path', [
    ('POST', '/servers'), ('POST', '/flavors'), ('POST', '/os-keypairs'),
    ('PUT', '/os-aggregates/1'), ('POST', '/servers/{server}/action'),
    ('PUT', '/servers/{server}/metadata'), ('POST', '/os-server-groups'),
])
def test_deeply_nested_json_is_a_400(stack, server, method, path):
    for body in (b'[' * 1000 + b']' * 1000, DEEP):
        resp = stack.request(method, path.format(server=server['id']), data=body,
                             headers={'Content-Type': 'application/json'})
        assert _fault(resp, 400)['message'] == 'Malformed request body'
    for body in (NEARLY, b'{"server": {"name": ' + NEARLY + b'}}',
                 b'{"metadata": {"k": ' + NEARLY + b'}}'):
        resp = stack.request(method, path.format(server=server['id']), data=body,
                             headers={'Content-Type': 'application/json'})
        assert 400 <= resp.status_code < 500, resp.text
        _fault(resp, resp.status_code)


# -- F3: accessIPv4 / accessIPv6 ------------------------------------------------------

def test_access_ips_on_create_update_and_rebuild(stack, flavor_id):
    resp = _boot(stack, flavor_id, 'ips-vm', accessIPv4='192.0.2.10',
                 accessIPv6='2001:db8::10')
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), token=OWNER)
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert (server['accessIPv4'], server['accessIPv6']) == ('192.0.2.10', '2001:db8::10')

    resp = stack.request('PUT', '/servers/%s' % server_id, token=OWNER, version=LATEST,
                         json={'server': {'accessIPv4': '198.51.100.7',
                                          'accessIPv6': '2001:DB8:0:0::7'}})
    assert resp.status_code == 200, resp.text
    shown = stack.request('GET', '/servers/%s' % server_id, token=OWNER).json()['server']
    # Stored as given, shown in the canonical form (Nova's str() of the address).
    assert (shown['accessIPv4'], shown['accessIPv6']) == ('198.51.100.7', '2001:db8::7')

    resp = stack.request('POST', '/servers/%s/action' % server_id, token=OWNER,
                         json={'rebuild': {'imageRef': stack.image['id'],
                                           'accessIPv4': '203.0.113.5',
                                           'accessIPv6': '2001:db8::5'}})
    assert resp.status_code == 202, resp.text
    assert resp.json()['server']['accessIPv4'] == '203.0.113.5'
    rebuilt = stack.wait_for_status(server_id, ('ACTIVE',), token=OWNER)
    assert (rebuilt['accessIPv4'], rebuilt['accessIPv6']) == ('203.0.113.5', '2001:db8::5')
    stack.request('DELETE', '/servers/%s' % server_id, token=OWNER)


@pytest.mark.parametrize('field,value', [
    ('accessIPv4', '1.2.3'), ('accessIPv4', '010.1.1.1'), ('accessIPv4', '::1'),
    ('accessIPv4', ''), ('accessIPv4', None), ('accessIPv4', 5),
    ('accessIPv6', 'fe80::1%eth0'), ('accessIPv6', '1.2.3.4'), ('accessIPv6', ':::'),
])
def test_bad_access_ips_are_400_everywhere(stack, flavor_id, server, field, value):
    assert _fault(_boot(stack, flavor_id, 'bad-ip', **{field: value}), 400)
    url = '/servers/%s' % server['id']
    resp = stack.request('PUT', url, token=OWNER, json={'server': {field: value}})
    assert _fault(resp, 400)
    resp = stack.request('POST', url + '/action', token=OWNER, json={
        'rebuild': {'imageRef': stack.image['id'], field: value}})
    assert _fault(resp, 400)


# -- F4: lone surrogates, and NUL ---------------------------------------------------

LONE = '\ud800'


def _raw(obj) -> bytes:
    """JSON with the lone surrogate escaped, as a hostile client sends it."""
    return json.dumps(obj).encode()


@pytest.mark.parametrize('method,path,body', [
    ('PUT', '/servers/{server}', {'server': {'name': 'x' + LONE}}),
    ('PUT', '/servers/{server}', {'server': {'description': LONE}}),
    ('POST', '/servers/{server}/metadata', {'metadata': {'k': LONE}}),
    ('POST', '/servers/{server}/metadata', {'metadata': {LONE: 'v'}}),
    ('PUT', '/servers/{server}/metadata/k', {'meta': {'k': 'a' + LONE}}),
    ('PUT', '/servers/{server}/tags', {'tags': ['t' + LONE]}),
    ('POST', '/servers/{server}/action', {'createImage': {'name': LONE}}),
    ('POST', '/flavors', {'flavor': {'name': 'f' + LONE, 'ram': 1, 'vcpus': 1,
                                     'disk': 1}}),
    ('POST', '/os-keypairs', {'keypair': {'name': 'k', 'user_id': LONE}}),
    ('POST', '/os-keypairs', {'keypair': {'name': 'k' + LONE}}),
    ('POST', '/os-server-groups', {'server_group': {'name': LONE,
                                                    'policies': ['affinity']}}),
    ('POST', '/os-aggregates', {'aggregate': {'name': 'a' + LONE}}),
    ('PUT', '/os-aggregates/{aggregate}', {'aggregate': {'availability_zone': LONE}}),
    ('POST', '/os-aggregates/{aggregate}/action', {'set_metadata': {
        'metadata': {'k': LONE}}}),
    # NUL: valid Unicode, but PostgreSQL stores no text that holds one.
    ('POST', '/servers/{server}/metadata', {'metadata': {'k': 'a\x00'}}),
    ('PUT', '/servers/{server}/tags', {'tags': ['t\x00']}),
    ('POST', '/os-keypairs', {'keypair': {'name': 'k', 'user_id': 'u\x00'}}),
])
def test_lone_surrogates_are_a_400_before_any_write(stack, server, aggregate, method,
                                                    path, body):
    url = path.format(server=server['id'], aggregate=aggregate['id'])
    resp = stack.request(method, url, token=OWNER if 'servers' in url else ADMIN,
                         version=LATEST, data=_raw(body),
                         headers={'Content-Type': 'application/json'})
    assert _fault(resp, 400)['message'].startswith('Malformed request body: a string ')
    shown = stack.request('GET', '/servers/%s' % server['id'], token=OWNER,
                          version=LATEST).json()['server']
    assert shown['name'] == server['name'] and LONE not in json.dumps(shown)


def test_lone_surrogate_in_create_is_a_400_not_a_build(stack, flavor_id):
    before = stack.request('GET', '/servers', token=OWNER).json()['servers']
    resp = _boot(stack, flavor_id, 'meta-vm', metadata={'k': LONE})
    assert 'lone surrogate' in _fault(resp, 400)['message']
    assert stack.request('GET', '/servers', token=OWNER).json()['servers'] == before


def test_a_tag_path_with_a_surrogate_is_a_400(stack, server):
    path = '/servers/%s/tags/%s' % (server['id'], urllib.parse.quote('t\udfff',
                                                                       errors='surrogatepass'))
    resp = stack.request('PUT', path, token=OWNER, version=LATEST)
    assert _fault(resp, 400)


# -- F5: integer ids past 64 bits -----------------------------------------------------

@pytest.mark.parametrize('method,path,version', [
    ('GET', '/os-aggregates/%s' % HUGE, None),
    ('PUT', '/os-aggregates/%s' % HUGE, None),
    ('DELETE', '/os-aggregates/%s' % HUGE, None),
    ('POST', '/os-aggregates/%s/action' % HUGE, None),
    ('GET', '/os-services/%s' % HUGE, None),
    ('DELETE', '/os-services/%s' % HUGE, '2.52'),
    ('PUT', '/os-services/%s' % HUGE, '2.53'),
    ('GET', '/os-hypervisors/%s' % HUGE, '2.52'),
    ('GET', '/os-hypervisors/%s/uptime' % HUGE, '2.52'),
    ('GET', '/os-hypervisors/-%s' % HUGE, '2.52'),
    ('GET', '/servers/{server}/migrations/%s' % HUGE, None),
    ('DELETE', '/servers/{server}/migrations/%s' % HUGE, None),
    ('POST', '/servers/{server}/migrations/%s/action' % HUGE, None),
])
def test_ids_past_64_bits_are_404(stack, server, method, path, version):
    body = {'aggregate': {'name': 'x'}} if method == 'PUT' and 'aggregate' in path else (
        {'status': 'disabled'} if method == 'PUT' else (
            {'add_host': {'host': 'host1'}} if 'aggregates' in path else (
                {'force_complete': None} if method == 'POST' else None)))
    resp = stack.request(method, path.format(server=server['id']), json=body,
                         version=version or LATEST)
    assert resp.status_code in (400, 404), resp.text
    _fault(resp, resp.status_code)


@pytest.mark.parametrize('query', [
    'limit=%s' % HUGE, 'marker=%s' % HUGE, 'changes-since=9999999-01-01',
    'minRam=%s' % HUGE, 'minDisk=%s' % HUGE, 'limit=-%s' % HUGE])
@pytest.mark.parametrize('path', ['/servers/detail', '/flavors', '/os-migrations',
                                  '/os-hypervisors', '/os-aggregates', '/os-keypairs',
                                  '/os-simple-tenant-usage', '/os-server-groups'])
def test_huge_numbers_in_queries_are_not_a_500(stack, server, path, query):
    resp = stack.request('GET', '%s?%s' % (path, query), version=LATEST)
    assert resp.status_code < 500, resp.text


# -- F8 and 406 -----------------------------------------------------------------------

def test_a_body_shorter_than_its_length_then_a_half_close_is_a_400(stack, server):
    url = urllib.parse.urlsplit(stack.api)
    body = b'{"server": {"name": "sho'
    head = ('PUT /v2.1/servers/%s HTTP/1.1\r\nHost: %s\r\nX-Auth-Token: %s\r\n'
            'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n'
            % (server['id'], url.netloc, OWNER, len(body) + 50)).encode()
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(head + body)
        sock.shutdown(socket.SHUT_WR)
        answer = b''
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b'\r\n')
    assert status_line.split()[1] == b'400', answer
    assert b'"badRequest"' in rest


def test_406_is_a_compute_fault(stack):
    resp = stack.request('GET', '/flavors', version='2.1000')
    assert _fault(resp, 406) and 'computeFault' in resp.json()
