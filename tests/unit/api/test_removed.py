"""Tests that the APIs Nova removed answer 410 Gone, and their proxy reads: os-networks
served (nothing without Neutron, 404 from 2.36), os-tenant-networks 404."""
from __future__ import annotations

import pytest

from novalite.api.openstack import loader
from tests.unit.api.cloud import ADMIN
from tests.unit.api.conftest import call


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


SERVER = '9d3f6f6e-8a42-4f0f-9d0e-1f5a3c1b2a10'


@pytest.mark.parametrize('method,path', [
    ('GET', '/os-agents'), ('POST', '/os-agents'), ('PUT', '/os-agents/1'),
    ('DELETE', '/os-agents/1'), ('GET', '/os-cells'), ('GET', '/os-cells/detail'),
    ('GET', '/os-cells/c1/capacities'), ('POST', '/os-cells/sync_instances'),
    ('POST', '/os-certificates'), ('GET', '/os-certificates/root'),
    ('GET', '/os-cloudpipe'), ('PUT', '/os-cloudpipe/configure-project'),
    ('GET', '/os-fixed-ips/10.0.0.1'), ('POST', '/os-fixed-ips/10.0.0.1/action'),
    ('GET', '/os-floating-ip-dns'), ('PUT', '/os-floating-ip-dns/example.org'),
    ('GET', '/os-floating-ip-dns/example.org/entries/a'),
    ('GET', '/os-floating-ips-bulk'), ('PUT', '/os-floating-ips-bulk/delete'),
    ('GET', '/os-fping'), ('GET', '/os-fping/%s' % SERVER),
    ('POST', '/os-networks'), ('POST', '/os-networks/add'), ('DELETE', '/os-networks/n1'),
    ('POST', '/os-networks/n1/action'), ('GET', '/os-security-group-default-rules'),
    ('DELETE', '/os-security-group-default-rules/1'), ('POST', '/os-tenant-networks'),
    ('DELETE', '/os-tenant-networks/n1'), ('GET', '/servers/%s/consoles' % SERVER),
    ('POST', '/servers/%s/consoles' % SERVER),
    ('DELETE', '/servers/%s/consoles/1' % SERVER),
    ('GET', '/servers/%s/os-virtual-interfaces' % SERVER),
])
def test_removed_apis_are_gone(app, method, path):
    body = {'anything': 1} if method in ('POST', 'PUT') else None
    for token in (ADMIN, 'demo:demo'):
        resp = call(app, method, '/v2.1' + path, body, token=token, version='latest')
        assert resp.status_int == 410, (method, path, resp.body)
        assert resp.json['computeFault']['code'] == 410


def test_gone_with_project_in_url_and_old_microversion(app):
    resp = call(app, 'GET', '/v2.1/dead-beef/os-cells', token='demo:dead-beef')
    assert resp.status_int == 410


@pytest.mark.parametrize('path', ['/os-networks/n1', '/os-tenant-networks',
                                  '/os-tenant-networks/n1'])
def test_network_proxy_reads_find_nothing(app, path):
    assert call(app, 'GET', '/v2.1' + path).status_int == 404


def test_os_networks_lists_no_network_without_neutron_and_is_gone_from_236(app):
    resp = call(app, 'GET', '/v2.1/os-networks', version='2.35')
    assert resp.status_int == 200 and resp.json == {'networks': []}
    for path in ('/os-networks', '/os-networks/n1'):
        assert call(app, 'GET', '/v2.1' + path, version='2.36').status_int == 404


def test_unlisted_methods_are_not_found(app):
    # Nova's mapper matches the method with the path: no route, no 405.
    resp = call(app, 'DELETE', '/v2.1/os-fping')
    assert resp.status_int == 404
