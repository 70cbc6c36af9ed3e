"""A detach whose attachment Cinder could not delete is finished by the host's next
start: only the mappings marked as let go by the guest (an attach under way or done is
left alone), a refusal ends the retries with the mark kept, and a stop ends its host's
retries only."""
from __future__ import annotations

import threading
import time
import uuid

import pytest
from oslo_serialization import jsonutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import volume_attach
from tests.unit.compute import hostdoubles
from tests.unit.compute.hostdoubles import FlakyReportClient, Manager


class VolumeAPI:
    """Deletes attachments, or fails each delete with ``error``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.deleted: list[str] = []
        self.asked = threading.Event()

    def attachment_delete(self, context, attachment_id):
        self.asked.set()
        if self.error is not None:
            raise self.error
        self.deleted.append(attachment_id)


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(volume_attach, 'DETACH_RETRY_INTERVAL', 0.01)


@pytest.fixture
def host(cloud, quick):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        mgr = Manager(FlakyReportClient(cloud.reportclient), cctxt)
        yield mgr, cctxt
        volume_attach.stop_detaches(mgr)


def _mapping(cctxt, instance, device, connection_info):
    bdm = objects.BlockDeviceMapping(
        cctxt, instance_uuid=instance.uuid, source_type='volume', destination_type='volume',
        volume_id=str(uuid.uuid4()), attachment_id=str(uuid.uuid4()), device_name=device,
        boot_index=None, delete_on_termination=False, no_device=False,
        connection_info=connection_info)
    bdm.create()
    return bdm


def _settled(timeout=30.0):
    """Wait until no loop finishes a detach any more."""
    deadline = time.monotonic() + timeout
    while volume_attach._finishing:
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.01)


def _stored(cctxt, instance):
    return {bdm.volume_id: bdm.connection_info for bdm in
            objects.BlockDeviceMappingList.get_by_instance_uuid(cctxt, instance.uuid)}


def test_a_start_finishes_only_the_detaches_the_guest_let_go(host):
    mgr, cctxt = host
    mgr.volume_api = VolumeAPI()
    instance = hostdoubles.instance_on_host(mgr, cctxt)
    let_go = _mapping(cctxt, instance, '/dev/vdb', volume_attach.DETACHED)
    reserved = _mapping(cctxt, instance, '/dev/vdc', None)
    attached = _mapping(cctxt, instance, '/dev/vdd', jsonutils.dumps({'serial': 'x'}))

    volume_attach.resume_detaches(mgr, cctxt)
    _settled()

    assert mgr.volume_api.deleted == [let_go.attachment_id]
    assert set(_stored(cctxt, instance)) == {reserved.volume_id, attached.volume_id}


def test_a_refused_delete_ends_the_retries_and_keeps_the_mark(host):
    mgr, cctxt = host
    mgr.volume_api = VolumeAPI(exception.VolumeError(
        status=400, method='DELETE', path='/attachments/x', detail='refused'))
    instance = hostdoubles.instance_on_host(mgr, cctxt)
    let_go = _mapping(cctxt, instance, '/dev/vdb', volume_attach.DETACHED)

    volume_attach.resume_detaches(mgr, cctxt)
    _settled()

    assert mgr.volume_api.asked.is_set()
    assert _stored(cctxt, instance) == {let_go.volume_id: volume_attach.DETACHED}


class OtherHost:
    """Another compute host of this process (what a detach's loop uses of it)."""

    host = 'other-host'

    def __init__(self, volume_api: VolumeAPI) -> None:
        self.volume_api = volume_api

    def instance_lock(self, instance_uuid):
        return threading.Lock()


def test_a_stop_ends_its_host_s_retries_and_no_other_s(host):
    mgr, cctxt = host
    down = exception.CinderConnectionFailed(server='cinder', reason='refused')
    mgr.volume_api = VolumeAPI(down)
    other = OtherHost(VolumeAPI(down))
    instance = hostdoubles.instance_on_host(mgr, cctxt)
    mine = _mapping(cctxt, instance, '/dev/vdb', volume_attach.DETACHED)
    theirs = _mapping(cctxt, instance, '/dev/vdc', volume_attach.DETACHED)
    volume_attach._finish_detach_later(mgr, cctxt, instance, mine, 0)
    volume_attach._finish_detach_later(other, cctxt, instance, theirs, 0)
    # A second start of the same detach in this process adds no second loop.
    volume_attach._finish_detach_later(mgr, cctxt, instance, mine, 0)
    assert set(volume_attach._finishing) == {mine.uuid, theirs.uuid}

    volume_attach.stop_detaches(mgr)

    assert set(volume_attach._finishing) == {theirs.uuid}
    volume_attach.stop_detaches(other)
    assert volume_attach._finishing == {}
    # Both stayed marked: the next start of each host finishes them.
    assert set(_stored(cctxt, instance).values()) == {volume_attach.DETACHED}
