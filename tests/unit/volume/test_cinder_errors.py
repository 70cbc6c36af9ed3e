"""What Cinder's errors become (by noun and status), what is tried again (connection
failures; an attachment's update and delete answered 500), and the microversion
check."""
from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from novalite import exception
from novalite.conf import CONF
from novalite.volume import cinder as cinder_api
from novalite.volume import client
from tests.unit.volume.cinder_double import CinderDouble
from tests.unit.volume.conftest import user

MISSING = '00000000-1111-2222-3333-444444444444'
SERVER = '2f7d6d0a-6a53-4b8e-9b2a-6f0c1d3e4f50'
CONNECTOR = {'host': 'nl-compute', 'ip': '127.0.0.1'}


@pytest.fixture
def api(cinder: CinderDouble) -> cinder_api.API:
    return cinder_api.API()


def _available(api: cinder_api.API) -> str:
    volume_id: str = api.create(user(), 1, 'v', None)['id']
    api.get(user(), volume_id)
    return volume_id


@pytest.mark.parametrize('call, error', [
    (lambda api: api.get(user(), MISSING), exception.VolumeNotFound),
    (lambda api: api.delete(user(), MISSING), exception.VolumeNotFound),
    (lambda api: api.begin_detaching(user(), MISSING), exception.VolumeNotFound),
    (lambda api: api.create_snapshot(user(), MISSING, 's', None), exception.VolumeNotFound),
    (lambda api: api.attachment_create(user(), MISSING, SERVER), exception.VolumeNotFound),
    (lambda api: api.get_snapshot(user(), MISSING), exception.SnapshotNotFound),
    (lambda api: api.delete_snapshot(user(), MISSING), exception.SnapshotNotFound),
    (lambda api: api.attachment_get(user(), MISSING), exception.VolumeAttachmentNotFound),
    (lambda api: api.attachment_update(user(), MISSING, CONNECTOR),
     exception.VolumeAttachmentNotFound),
    (lambda api: api.attachment_complete(user(), MISSING), exception.VolumeAttachmentNotFound),
])
def test_a_404_names_the_missing_noun(api: cinder_api.API, call, error) -> None:
    with pytest.raises(error, match=MISSING):
        call(api)


def test_a_404_of_a_create_is_not_found(api: cinder_api.API) -> None:
    with pytest.raises(exception.NotFound, match='Snapshot %s' % MISSING):
        api.create(user(), 1, 'v', None, snapshot=MISSING)


def test_deleting_an_attachment_already_gone_succeeds(api: cinder_api.API,
                                                      cinder: CinderDouble) -> None:
    api.attachment_delete(user(), MISSING)
    assert cinder.requests('DELETE')[-1].path == '/v3/attachments/%s' % MISSING


def test_a_400_is_invalid_with_cinders_message(api: cinder_api.API) -> None:
    volume_id = _available(api)
    with pytest.raises(exception.InvalidVolume, match='Unable to detach volume') as caught:
        api.begin_detaching(user(), volume_id)
    assert caught.value.code == 400
    assert str(caught.value).count('Invalid volume:') == 1
    with pytest.raises(exception.InvalidInput, match='size must be a positive integer'):
        api.create(user(), 0, 'v', None)


def test_a_413_or_a_quota_message_is_over_quota(api: cinder_api.API,
                                                cinder: CinderDouble) -> None:
    cinder.volume_quota = 0
    with pytest.raises(exception.VolumeOverQuota, match="exceeded for quota 'volumes'"):
        api.create(user(), 1, 'v', None)
    cinder.fail_next(400, 'VolumeSizeExceedsAvailableQuota: Requested volume or snapshot '
                          'exceeds allowed gigabytes quota.')
    with pytest.raises(exception.VolumeOverQuota, match='gigabytes quota'):
        api.create(user(), 1, 'v', None)


@pytest.mark.parametrize('status', [403, 409, 500])
def test_any_other_error_is_a_volume_error_saying_what_was_asked(
        api: cinder_api.API, cinder: CinderDouble, status: int) -> None:
    cinder.fail_next(status, 'no way')
    with pytest.raises(exception.VolumeError) as caught:
        api.get(user(), MISSING)
    assert caught.value.kwargs['status'] == status
    assert str(caught.value) == ('The volume service (Cinder) answered %d to GET '
                                 '/volumes/%s: no way' % (status, MISSING))


def test_a_5xx_is_logged_as_a_warning(api: cinder_api.API, cinder: CinderDouble,
                                      caplog: pytest.LogCaptureFixture) -> None:
    cinder.fail_next(500, 'backend down')
    with caplog.at_level(logging.WARNING), pytest.raises(exception.VolumeError):
        api.get_all(user())
    assert any('backend down' in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


def test_attachment_update_and_delete_are_tried_again_on_500(
        api: cinder_api.API, cinder: CinderDouble) -> None:
    volume_id = _available(api)
    attachment = api.attachment_create(user(), volume_id, SERVER)
    cinder.fail_next(500, count=2, path='/attachments/')
    api.attachment_update(user(), attachment['id'], CONNECTOR)
    assert len(cinder.requests('PUT')) == 3
    cinder.fail_next(504, count=cinder_api.ATTACHMENT_TRIES - 1, path='/attachments/')
    api.attachment_delete(user(), attachment['id'])
    assert len(cinder.requests('DELETE')) == cinder_api.ATTACHMENT_TRIES
    assert attachment['id'] not in cinder.attachments


def test_attachment_delete_gives_up_after_its_tries(api: cinder_api.API,
                                                    cinder: CinderDouble) -> None:
    cinder.fail_next(500, count=cinder_api.ATTACHMENT_TRIES, path='/attachments/')
    with pytest.raises(exception.VolumeError, match='500'):
        api.attachment_delete(user(), MISSING)
    assert len(cinder.requests('DELETE')) == cinder_api.ATTACHMENT_TRIES


def test_other_calls_are_not_tried_again_on_500(api: cinder_api.API,
                                                cinder: CinderDouble) -> None:
    cinder.fail_next(500)
    with pytest.raises(exception.VolumeError):
        api.attachment_complete(user(), MISSING)
    assert len(cinder.requests()) == 1


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that nothing listens on (bound, never listening)."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_a_refused_connection_is_tried_http_retries_times_then_cinder_connection_failed(
        api: cinder_api.API, closed_port: int, caplog: pytest.LogCaptureFixture) -> None:
    CONF.set_override('http_retries', 2, group='cinder')
    CONF.set_override('endpoint_template', 'http://127.0.0.1:%d/v3' % closed_port,
                      group='cinder')
    with caplog.at_level(logging.WARNING, logger='keystoneauth'), \
            pytest.raises(exception.CinderConnectionFailed) as caught:
        api.get_all(user())
    assert 'volume service (Cinder) at http://127.0.0.1:%d/v3' % closed_port in str(caught.value)
    assert caught.value.code == 503
    retries = [r for r in caplog.records if 'Retrying' in r.getMessage()]
    assert len(retries) == 2


def test_the_version_document_is_asked_once(api: cinder_api.API,
                                            cinder: CinderDouble) -> None:
    for _ in range(3):
        api.get_all(user())
    assert [s.path for s in cinder.seen].count('/') == 1


def test_the_microversion_is_cinders_highest_up_to_ours(api: cinder_api.API,
                                                        cinder: CinderDouble) -> None:
    cinder.max_version = '3.50'
    volume_id = _available(api)
    attachment = api.attachment_create(user(), volume_id, SERVER, CONNECTOR)
    seen = cinder.requests('POST')[-1]
    assert seen.headers['Openstack-Api-Version'] == 'volume 3.50'
    # The mode is a 3.54 field: not sent to an older Cinder.
    assert 'mode' not in seen.body['attachment']
    assert attachment['connection_info']['driver_volume_type'] == 'rbd'


def test_a_cinder_older_than_3_44_is_refused(api: cinder_api.API,
                                             cinder: CinderDouble) -> None:
    cinder.max_version = '3.43'
    with pytest.raises(exception.CinderAPIVersionNotAvailable, match='3.44'):
        api.get_all(user())
    assert cinder.requests() == []
    # Asked again after a reset (the options or the Cinder changed).
    cinder.max_version = '3.71'
    client.reset()
    api.get_all(user())
    assert cinder.requests()[-1].headers['Openstack-Api-Version'] == 'volume 3.54'
