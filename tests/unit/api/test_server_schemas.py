"""Request schemas of servers, keypairs and metadata per microversion."""
from __future__ import annotations

import pytest

from novalite import exception
from novalite.api.openstack.compute.schemas import keypairs, server_metadata, servers
from novalite.api.validation import validators


def _check(schema, body):
    validators.SchemaValidator(schema).validate(body)


@pytest.mark.parametrize('schema,body', [
    (servers.update, {'server': {'name': 'a', 'accessIPv4': '10.0.0.1'}}),
    (servers.update_v219, {'server': {'description': None}}),
    (servers.update_v290, {'server': {'hostname': 'web-1'}}),
    (servers.update_v294, {'server': {'hostname': 'web-1.example.org'}}),
    (keypairs.create_v22, {'keypair': {'name': 'k', 'type': 'x509'}}),
    (keypairs.create_v292, {'keypair': {'name': 'me@host.key', 'public_key': 'x'}}),
    (server_metadata.update, {'meta': {'a': 'b'}}),
])
def test_accepted(schema, body):
    _check(schema, body)


@pytest.mark.parametrize('schema,body', [
    (servers.update, {'server': {'description': 'x'}}),
    (servers.update_v219, {'server': {'hostname': 'x1'}}),
    (servers.update_v290, {'server': {'hostname': 'a.b'}}),
    (servers.update, {'server': {'accessIPv4': 'nope'}}),
    (servers.create_v263, {'server': {'name': 'a', 'flavorRef': '1', 'networks': 'none',
                                      'host': 'h'}}),
    (keypairs.create, {'keypair': {'name': 'k', 'type': 'ssh'}}),
    (keypairs.create_v210, {'keypair': {'name': 'a@b'}}),
    (keypairs.create_v292, {'keypair': {'name': 'k'}}),
    (server_metadata.update, {'meta': {'a': 'b', 'c': 'd'}}),
    (server_metadata.create, {'metadata': {'a': 1}}),
])
def test_rejected(schema, body):
    with pytest.raises(exception.ValidationError):
        _check(schema, body)


def test_query_schemas_open_filters_by_microversion():
    lenient = validators.SchemaValidator(servers.query_params, is_body=False)
    lenient.validate({'sort_key': ['vcpus'], 'whatever': ['1']})
    strict = validators.SchemaValidator(servers.query_params_v275, is_body=False)
    with pytest.raises(exception.ValidationError):
        strict.validate({'sort_key': ['vcpus']})
    strict.validate({'sort_key': ['locked'], 'tags-any': ['a,b'], 'locked': ['true']})
    assert 'tags' not in servers.query_params['properties']
    assert 'changes-before' in servers.query_params_v266['properties']
