"""Tests of the flavors API against a real SQLite API database."""
from __future__ import annotations

import pytest
from oslo_utils import uuidutils

from novalite import objects
from novalite.api.openstack import loader
from tests.unit.api.conftest import call, make_flavor

ADMIN = 'admin:admin'


@pytest.fixture
def app(api_db, noauth2):
    return loader.load_app()


def _flavors_in_db() -> list:
    return list(objects.FlavorList.get_all(None, inactive=True, filters={'is_public': None}))


def _create_body(**overrides):
    flavor = {'name': 'm1.small', 'ram': 1024, 'vcpus': 2, 'disk': 10}
    flavor.update(overrides)
    return {'flavor': flavor}


class TestCreate:
    def test_admin_creates_flavor(self, app):
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(
            id='small', swap=512, rxtx_factor='2.5', **{'OS-FLV-EXT-DATA:ephemeral': 5}),
            token=ADMIN)
        assert resp.status_int == 200
        assert resp.json['flavor'] == {
            'id': 'small', 'name': 'm1.small', 'ram': 1024, 'vcpus': 2, 'disk': 10,
            'swap': 512, 'OS-FLV-EXT-DATA:ephemeral': 5, 'OS-FLV-DISABLED:disabled': False,
            'os-flavor-access:is_public': True, 'rxtx_factor': 2.5,
            'links': [{'rel': 'self', 'href': 'http://localhost/v2.1/flavors/small'},
                      {'rel': 'bookmark', 'href': 'http://localhost/flavors/small'}]}
        stored = objects.Flavor.get_by_flavor_id(None, 'small')
        assert (stored.memory_mb, stored.vcpus, stored.root_gb, stored.swap,
                stored.ephemeral_gb) == (1024, 2, 10, 512, 5)

    @pytest.mark.parametrize('flavor_id', [None, 'absent'])
    def test_missing_or_null_id_gets_a_uuid(self, app, flavor_id):
        body = _create_body() if flavor_id == 'absent' else _create_body(id=None)
        resp = call(app, 'POST', '/v2.1/flavors', body, token=ADMIN)
        assert resp.status_int == 200
        assert uuidutils.is_uuid_like(resp.json['flavor']['id'])

    def test_integer_id_and_string_numbers(self, app):
        resp = call(app, 'POST', '/v2.1/flavors',
                    _create_body(id=42, ram='2048', vcpus='4', disk='0'), token=ADMIN)
        assert resp.status_int == 200
        assert (resp.json['flavor']['id'], resp.json['flavor']['ram']) == ('42', 2048)

    def test_description_only_from_2_55(self, app):
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(description='small one'),
                    token=ADMIN, version='2.54')
        assert resp.status_int == 400
        assert _flavors_in_db() == []
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(description='small one'),
                    token=ADMIN, version='2.55')
        assert resp.status_int == 200
        assert resp.json['flavor']['description'] == 'small one'

    def test_non_admin_is_forbidden_and_nothing_written(self, app):
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(), token='demo:demo')
        assert resp.status_int == 403
        assert resp.json['forbidden']['message'] == \
            "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed."
        assert _flavors_in_db() == []

    def test_duplicate_name_and_id_are_409(self, app):
        make_flavor('1', 'm1.small')
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(), token=ADMIN)
        assert resp.status_int == 409
        assert resp.json['conflictingRequest']['message'] == \
            'Flavor with name m1.small already exists.'
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(name='other', id='1'),
                    token=ADMIN)
        assert resp.status_int == 409
        assert resp.json['conflictingRequest']['message'] == \
            'Flavor with ID 1 already exists.'
        assert len(_flavors_in_db()) == 1

    @pytest.mark.parametrize('overrides, fragment', [
        ({'name': 'x' * 256}, "Invalid input for field/attribute name. Value: %s. '%s' is "
                              "too long" % ('x' * 256, 'x' * 256)),
        ({'name': ' padded'}, "An invalid 'name' value was provided."),
        ({'ram': 0}, 'Invalid input for field/attribute ram. Value: 0. 0 is less than the '
                     'minimum of 1'),
        ({'vcpus': '-1'}, 'Invalid input for field/attribute vcpus.'),
        ({'disk': 'ten'}, 'Invalid input for field/attribute disk.'),
        ({'rxtx_factor': 0}, 'Invalid input for field/attribute rxtx_factor.'),
        ({'id': ' bad id'}, 'Invalid input for field/attribute id.'),
        ({'os-flavor-access:is_public': 'maybe'},
         'Invalid input for field/attribute os-flavor-access:is_public.'),
        ({'color': 'blue'}, "Additional properties are not allowed ('color' was "
                            "unexpected)"),
    ])
    def test_bad_input_is_400_and_nothing_written(self, app, overrides, fragment):
        resp = call(app, 'POST', '/v2.1/flavors', _create_body(**overrides), token=ADMIN)
        assert resp.status_int == 400, resp.body
        assert fragment in resp.json['badRequest']['message']
        assert _flavors_in_db() == []

    def test_missing_required_field(self, app):
        body = _create_body()
        del body['flavor']['ram']
        resp = call(app, 'POST', '/v2.1/flavors', body, token=ADMIN)
        assert resp.status_int == 400
        assert "'ram' is a required property" in resp.json['badRequest']['message']

    def test_malformed_json(self, app):
        resp = call(app, 'POST', '/v2.1/flavors', b'{"flavor": ', token=ADMIN)
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Malformed request body'
        assert _flavors_in_db() == []


class TestDelete:
    def test_admin_deletes(self, app):
        make_flavor('1')
        resp = call(app, 'DELETE', '/v2.1/flavors/1', token=ADMIN)
        assert resp.status_int == 202
        assert call(app, 'GET', '/v2.1/flavors/1').status_int == 404

    def test_non_admin_forbidden(self, app):
        make_flavor('1')
        assert call(app, 'DELETE', '/v2.1/flavors/1').status_int == 403
        assert len(_flavors_in_db()) == 1

    def test_unknown_is_404(self, app):
        resp = call(app, 'DELETE', '/v2.1/flavors/nope', token=ADMIN)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == 'Flavor nope could not be found.'


class TestRead:
    def test_show_fields_by_microversion(self, app):
        make_flavor('m1.tiny', 'tiny', description='d', extra_specs={'hw:cpu_policy': 'x'})
        flavor = call(app, 'GET', '/v2.1/flavors/m1.tiny').json['flavor']
        assert flavor['swap'] == ''
        assert 'description' not in flavor and 'extra_specs' not in flavor
        flavor = call(app, 'GET', '/v2.1/flavors/m1.tiny', version='2.55').json['flavor']
        assert flavor['description'] == 'd'
        assert 'extra_specs' not in flavor
        flavor = call(app, 'GET', '/v2.1/flavors/m1.tiny', version='2.61').json['flavor']
        assert flavor['extra_specs'] == {'hw:cpu_policy': 'x'}
        assert flavor['swap'] == ''
        flavor = call(app, 'GET', '/v2.1/flavors/m1.tiny', version='2.75').json['flavor']
        assert flavor['swap'] == 0

    def test_index_is_basic_and_sorted_by_flavorid(self, app):
        make_flavor('2', 'b')
        make_flavor('1', 'a')
        body = call(app, 'GET', '/v2.1/flavors').json
        assert [f['id'] for f in body['flavors']] == ['1', '2']
        assert set(body['flavors'][0]) == {'id', 'name', 'links'}
        body = call(app, 'GET', '/v2.1/flavors', version='2.55').json
        assert set(body['flavors'][0]) == {'id', 'name', 'links', 'description'}

    def test_filters_and_sorting(self, app):
        make_flavor('1', 'small', memory_mb=512, root_gb=1)
        make_flavor('2', 'medium', memory_mb=2048, root_gb=20)
        make_flavor('3', 'large', memory_mb=8192, root_gb=5)
        ids = lambda q: [f['id'] for f in call(app, 'GET', '/v2.1/flavors/detail' + q)
                         .json['flavors']]
        assert ids('?minRam=1024') == ['2', '3']
        assert ids('?minDisk=5') == ['2', '3']
        assert ids('?minRam=1024&minDisk=10') == ['2']
        assert ids('?sort_key=memory_mb&sort_dir=desc') == ['3', '2', '1']
        resp = call(app, 'GET', '/v2.1/flavors?minRam=lots')
        assert resp.status_int == 400
        assert resp.json['badRequest']['message'] == 'Invalid minRam filter [lots]'
        assert call(app, 'GET', '/v2.1/flavors?sort_key=bogus').status_int == 400
        assert call(app, 'GET', '/v2.1/flavors?sort_dir=up').status_int == 400

    def test_unknown_query_parameter_ignored_before_2_75_rejected_after(self, app):
        assert call(app, 'GET', '/v2.1/flavors?foo=1', version='2.74').status_int == 200
        resp = call(app, 'GET', '/v2.1/flavors?foo=1', version='2.75')
        assert resp.status_int == 400
        assert 'Additional properties are not allowed' in resp.json['badRequest']['message']

    def test_pagination_links(self, app):
        for i in range(1, 4):
            make_flavor(str(i), 'f%d' % i)
        body = call(app, 'GET', '/v2.1/flavors?limit=2').json
        assert [f['id'] for f in body['flavors']] == ['1', '2']
        assert body['flavors_links'] == [{
            'rel': 'next', 'href': 'http://localhost/v2.1/flavors?limit=2&marker=2'}]
        body = call(app, 'GET', '/v2.1/flavors/detail?limit=2&marker=2').json
        assert [f['id'] for f in body['flavors']] == ['3']
        assert 'flavors_links' not in body
        resp = call(app, 'GET', '/v2.1/flavors?marker=nope')
        assert resp.status_int == 400
        assert call(app, 'GET', '/v2.1/flavors?limit=-1').status_int == 400

    def test_private_flavors_visible_to_admin_and_members_only(self, app):
        make_flavor('pub', 'public')
        make_flavor('priv', 'private', is_public=False, projects=['demo'])
        make_flavor('other', 'others', is_public=False, projects=['elsewhere'])
        ids = lambda token, q='': sorted(
            f['id'] for f in call(app, 'GET', '/v2.1/flavors' + q, token=token)
            .json['flavors'])
        assert ids('demo:demo') == ['priv', 'pub']
        assert ids('someone:else') == ['pub']
        # Non-admins cannot widen the list with is_public.
        assert ids('someone:else', '?is_public=false') == ['pub']
        assert ids(ADMIN) == ['pub']
        assert ids(ADMIN, '?is_public=none') == ['other', 'priv', 'pub']
        assert ids(ADMIN, '?is_public=false') == ['other', 'priv']
        assert call(app, 'GET', '/v2.1/flavors?is_public=maybe',
                    token=ADMIN).status_int == 400
        assert call(app, 'GET', '/v2.1/flavors/priv').status_int == 200
        assert call(app, 'GET', '/v2.1/flavors/priv', token='someone:else').status_int == 404
        assert call(app, 'GET', '/v2.1/flavors/other', token=ADMIN).status_int == 200
