"""The route table: every controller method says what request it accepts.

A method behind POST/PUT carries a body schema; one behind GET/DELETE carries a query
schema or the ``no_body`` marker. The check covers the controllers in ``CHECKED``;
controllers join it as they gain their markers.
"""
from __future__ import annotations

import pytest

from novalite.api.openstack.compute import routes

CHECKED = ('servers', 'server_metadata', 'server_tags', 'instance_actions', 'flavors',
           'flavor_access', 'extra_specs', 'keypairs', 'limits', 'quota_sets',
           'quota_classes', 'availability_zone', 'aggregates', 'server_groups', 'hypervisors',
           'removed', 'server_actions', 'services', 'migrations', 'server_migrations',
           'simple_tenant_usage', 'server_diagnostics', 'hosts', 'instance_usage_audit_log',
           'server_external_events', 'interfaces', 'security_groups',
           'security_group_rules', 'server_security_groups', 'networks', 'floating_ips',
           'floating_ip_pools', 'server_password', 'server_topology', 'volume_attachments',
           'server_shares', 'volumes_boot', 'volumes_boot_actions', 'volumes',
           'snapshots')

_ROUTES = [(path, method, name, action) for path, methods in routes.ROUTE_LIST
           for method, (name, action) in methods.items() if name in CHECKED]


@pytest.fixture(scope='module')
def router():
    return routes.APIRouterV21()


def _method(router, path, method):
    for route in router.map.matchlist:
        if route.routepath == path and \
                (route.conditions or {}).get('method') == [method]:
            resource = route.defaults['controller']
            return getattr(resource.controller, route.defaults['action'])
    raise AssertionError('no route %s %s' % (method, path))


def test_the_checked_controllers_are_routed():
    assert {name for _p, _m, name, _a in _ROUTES} == set(CHECKED)


@pytest.mark.parametrize('path,method,name,action', _ROUTES)
def test_every_method_declares_its_request(router, path, method, name, action):
    func = _method(router, path, method)
    if method in ('POST', 'PUT', 'PATCH'):
        assert getattr(func, 'request_body_schema', False), \
            '%s %s (%s.%s) has no request body schema' % (method, path, name, action)
    else:
        assert getattr(func, 'no_body', False) or \
            getattr(func, 'query_params_schema', False), \
            '%s %s (%s.%s) has neither a query schema nor the no_body marker' % (
                method, path, name, action)
