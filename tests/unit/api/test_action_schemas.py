"""Request bodies as lax (and as strict) as Nova 34's schemas: the server actions and
the bodies the schema review of issue 19 changed."""
from __future__ import annotations

from typing import Any

import pytest

from novalite import exception
from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import routes, server_actions
from novalite.api.openstack.compute.schemas import (
    aggregates,
    flavors_extraspecs,
    keypairs,
    quota_classes,
    security_groups,
    server_tags,
    servers,
)
from novalite.api.validation import validators
from tests.unit.api.compute_api_double import ComputeAPIDouble
from tests.unit.api.conftest import call

ADMIN = 'admin:admin'


class _MovesDouble(ComputeAPIDouble):
    def confirm_resize(self, context: Any, instance: Any) -> None:
        self.calls.append(('confirm_resize', {'uuid': instance.uuid}))

    def revert_resize(self, context: Any, instance: Any) -> None:
        self.calls.append(('revert_resize', {'uuid': instance.uuid}))

    def resize(self, context: Any, instance: Any, flavor: Any, **kwargs: Any) -> None:
        self.calls.append(('resize', {'flavor': flavor, **kwargs}))


@pytest.fixture
def compute():
    return _MovesDouble()


@pytest.fixture
def app(api_db, compute):
    router = routes.APIRouterV21(
        {'server_actions': server_actions.ServerActionsController(compute)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


def _action(app, server: str, body: Any, version: str | None = None, token: str = ADMIN):
    return call(app, 'POST', '/v2.1/servers/%s/action' % server, body, token=token,
                version=version)


@pytest.mark.parametrize('value', [None, {}, {'anything': 1}, 'yes', 0, []])
@pytest.mark.parametrize('action, code', [('confirmResize', 204), ('revertResize', 202)])
def test_confirm_and_revert_resize_take_any_value(app, compute, action, code, value):
    server = compute.add().uuid
    resp = _action(app, server, {action: value})
    assert resp.status_int == code, resp.body
    assert compute.calls[-1][0] == {'confirmResize': 'confirm_resize',
                                    'revertResize': 'revert_resize'}[action]


@pytest.mark.parametrize('value', [None, {}, {'host': 'cmp9'}, 'anything', [1]])
def test_migrate_below_2_56_ignores_its_body(app, compute, value):
    server = compute.add().uuid
    resp = _action(app, server, {'migrate': value}, version='2.55')
    assert resp.status_int == 202, resp.body
    assert compute.calls[-1] == ('resize', {'flavor': None, 'host_name': None})


def test_migrate_from_2_56_checks_its_body(app, compute):
    server = compute.add().uuid
    assert _action(app, server, {'migrate': None}, version='2.56').status_int == 202
    assert _action(app, server, {'migrate': {'host': 'cmp9'}},
                   version='2.56').status_int == 202
    assert compute.calls[-1] == ('resize', {'flavor': None, 'host_name': 'cmp9'})
    for bad in ('anything', {'host': 'bad host!'}, {'other': 1}):
        assert _action(app, server, {'migrate': bad}, version='2.56').status_int == 400


def _valid(schema: dict, body: Any) -> bool:
    try:
        validators.SchemaValidator(schema).validate(body)
    except exception.ValidationError:
        return False
    return True


@pytest.mark.parametrize('schema, body, ok', [
    # Nova's booleans: no 'y' nor 't'.
    (servers.create, {'server': {'name': 'a', 'flavorRef': '1', 'config_drive': 'y'}},
     False),
    (servers.create, {'server': {'name': 'a', 'flavorRef': '1', 'config_drive': 'yes'}},
     True),
    # An image is a uuid (or '' to boot from a volume), never a URL.
    (servers.create, {'server': {'name': 'a', 'flavorRef': '1', 'imageRef': 'http://x/y'}},
     False),
    (servers.create, {'server': {'name': 'a', 'flavorRef': '1', 'imageRef': ''}}, True),
    # From 2.37 a network's uuid is a uuid.
    (servers.create_v237, {'server': {'name': 'a', 'flavorRef': '1',
                                      'networks': [{'uuid': 'net-a'}]}}, False),
    (servers.create, {'server': {'name': 'a', 'flavorRef': '1',
                                 'networks': [{'uuid': 'net-a'}]}}, True),
    # 2.94 takes an FQDN as loosely as Nova.
    (servers.create_v294, {'server': {'name': 'a', 'flavorRef': '1', 'networks': 'none',
                                      'hostname': 'a_b.example-'}}, True),
    (servers.create_v274, {'server': {'name': 'a', 'flavorRef': '1', 'networks': 'none',
                                      'host': 'bad host'}}, False),
    # A new aggregate name may have spaces at its ends; a host name is a host name.
    (aggregates.update, {'aggregate': {'name': ' agg '}}, True),
    (aggregates.update, {'aggregate': {'name': '   '}}, False),
    (aggregates.add_host, {'add_host': {'host': 'cmp 1'}}, False),
    (aggregates.set_metadata, {'set_metadata': {'metadata': {'a/b': '1'}}}, False),
    # Extra spec values are strings or numbers.
    (flavors_extraspecs.create, {'extra_specs': {'hw:x': True}}, False),
    (flavors_extraspecs.create, {'extra_specs': {'hw:x': 1}}, True),
    # Any user id string, as Nova.
    (keypairs.create_v210, {'keypair': {'name': 'k', 'user_id': ''}}, True),
    # Server group limits before 2.50 too.
    (quota_classes.update, {'quota_class_set': {'server_groups': 2}}, True),
    # The security group actions need a name.
    (security_groups.add_security_group, {'addSecurityGroup': {}}, False),
    (security_groups.add_security_group, {'addSecurityGroup': {'name': 'x', 'y': 1}},
     False),
    # Adding one tag carries no body.
    (server_tags.update, None, True),
    (server_tags.update, {}, False),
])
def test_schemas_as_nova_34(schema, body, ok):
    assert _valid(schema, body) is ok



@pytest.mark.parametrize('version, code', [('2.31', 400), ('2.32', 202), ('2.35', 202),
                                           ('2.36', 202), ('2.37', 400)])
def test_network_tags_from_2_32_to_2_36(api_db, version, code):
    from novalite.api.openstack.compute import servers as servers_api
    from tests.unit.api.conftest import make_flavor
    make_flavor('1', 'm1.tiny')
    router = routes.APIRouterV21({'servers': servers_api.ServersController(_MovesDouble())})
    app = urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})
    # 2.37 wants a uuid for the network (and refuses the tag until 2.42).
    body = {'server': {'name': 'a', 'flavorRef': '1', 'imageRef': '',
                       'networks': [{'uuid': 'net-a', 'tag': 't'}]}}
    resp = call(app, 'POST', '/v2.1/servers', body, version=version)
    assert resp.status_int == code, resp.body
