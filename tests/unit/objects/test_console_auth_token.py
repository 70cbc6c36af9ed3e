"""ConsoleAuthToken: a hashed, expiring token; access URLs as noVNC and websocket
clients take them; one-time redeem across cells; cleanup per server and on expiry."""
from __future__ import annotations

import uuid

import pytest
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.console import auth
from novalite.db import engine
from novalite.db.main import models
from novalite.objects import console_auth_token as cat


@pytest.fixture
def frozen():
    timeutils.set_time_override()
    try:
        yield timeutils
    finally:
        timeutils.clear_time_override()


def _authorize(cctxt, instance_uuid, console_type='novnc', ttl=600,
               base='http://proxy:6080/vnc_auto.html'):
    token = objects.ConsoleAuthToken(cctxt, console_type=console_type, host='10.0.0.5',
                                     port=5901, internal_access_path=None,
                                     instance_uuid=instance_uuid, access_url_base=base)
    return token, token.authorize(ttl)


def test_authorize_keeps_only_the_hash_and_builds_the_access_urls(dbs, frozen):
    server = dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        obj, token = _authorize(cctxt, server)
        uuid.UUID(token)  # random, as Nova's
        assert obj.token == token and obj.id
        assert obj.expires == timeutils.utcnow_ts() + 600
        assert obj.access_url == ('http://proxy:6080/vnc_auto.html?path=%%3Ftoken%%3D%s'
                                  % token)
        with engine.cell_reader(cctxt) as session:
            row = session.query(models.ConsoleAuthToken).one()
        assert row.token_hash == cat.token_hash(token) != token
        serial, serial_token = _authorize(cctxt, server, 'serial',
                                          base='ws://proxy:6083/')
        assert serial.access_url == 'ws://proxy:6083/?token=%s' % serial_token
        with pytest.raises(exception.ObjectActionError):
            obj.authorize(600)


def test_novnc_url_keeps_a_path_the_base_url_gives(dbs):
    server = dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        obj, token = _authorize(cctxt, server, base='https://p/vnc_lite.html?path=ws')
        assert obj.access_url == 'https://p/vnc_lite.html?path=ws%%3Ftoken%%3D%s' % token


def test_validate_reads_until_expiry(dbs, frozen):
    server = dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        _obj, token = _authorize(cctxt, server, ttl=10)
        for _ in range(2):  # a read leaves the token in place
            found = objects.ConsoleAuthToken.validate(cctxt, token)
            assert (found.instance_uuid, found.host, found.port, found.token) == (
                server, '10.0.0.5', 5901, token)
        with pytest.raises(exception.InvalidToken):
            objects.ConsoleAuthToken.validate(cctxt, 'not-a-token')
        frozen.advance_time_seconds(10)
        with pytest.raises(exception.InvalidToken):
            objects.ConsoleAuthToken.validate(cctxt, token)


def test_redeem_works_once(dbs):
    server = dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        _obj, token = _authorize(cctxt, server)
        assert objects.ConsoleAuthToken.redeem(cctxt, token).instance_uuid == server
        with pytest.raises(exception.InvalidToken):
            objects.ConsoleAuthToken.redeem(cctxt, token)
        with pytest.raises(exception.InvalidToken):
            objects.ConsoleAuthToken.validate(cctxt, token)


def test_console_auth_redeem_finds_the_cell_and_refuses_reuse_and_gone_servers(dbs, frozen):
    server, other = dbs.add_instance('h1'), dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        _obj, token = _authorize(cctxt, server, ttl=60)
        _obj, expiring = _authorize(cctxt, server, ttl=5)
        _obj, orphan = _authorize(cctxt, other)
        objects.Instance.get_by_uuid(cctxt, other).destroy()
    info = auth.redeem(dbs.context, token)
    assert (info.instance_uuid, info.console_type, info.host, info.port) == (
        server, 'novnc', '10.0.0.5', 5901)
    assert info.expires.timestamp() == timeutils.utcnow_ts() + 60
    assert info.context.is_admin
    # The context reaches the token's cell.
    assert objects.Instance.get_by_uuid(info.context, server).uuid == server
    with pytest.raises(exception.InvalidToken):
        auth.redeem(dbs.context, token)
    with pytest.raises(exception.InvalidToken):
        auth.redeem(dbs.context, orphan)
    frozen.advance_time_seconds(5)
    with pytest.raises(exception.InvalidToken):
        auth.redeem(dbs.context, expiring)


def test_cleanups_per_server_and_of_expired_tokens(dbs, frozen):
    one, two = dbs.add_instance('h1'), dbs.add_instance('h1')
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        _obj, short = _authorize(cctxt, one, ttl=5)
        _obj, long = _authorize(cctxt, one, ttl=50)
        _obj, other = _authorize(cctxt, two, ttl=5)
        frozen.advance_time_seconds(5)
        assert objects.ConsoleAuthToken.clean_expired_console_auths(cctxt) == 2
        assert objects.ConsoleAuthToken.validate(cctxt, long).instance_uuid == one
        objects.ConsoleAuthToken.clean_console_auths_for_instance(cctxt, one)
        for token in (short, long, other):
            with pytest.raises(exception.InvalidToken):
                objects.ConsoleAuthToken.validate(cctxt, token)
