"""The volume operations compute needs from Cinder (v3): volumes, snapshots and the
attachment API, with Nova's method names and meanings.

Every method takes the request context first and returns Cinder's own JSON (plain
dicts with Cinder's keys). How a call reaches Cinder, with whose credentials and at
which microversion, is ``novalite.volume.client``'s business.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import availability_zones, exception, transient
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.volume import client

if TYPE_CHECKING:
    from novalite.objects.instance import Instance

LOG = logging.getLogger(__name__)

# Tries of an attachment's update or delete that Cinder answered 500 or 504 (its
# backend or a lock timing out for a moment), as Nova's.
ATTACHMENT_TRIES = 5
_RETRY_STATUSES = (500, 504)
# The attach mode that 3.54 lets an attachment's creation set.
_MODE_VERSION = (3, 54)
# ``os-reimage`` of a volume (with ``reimage_reserved``), as Nova's reimage_volume.
REIMAGE_VERSION = (3, 68)


def configured() -> bool:
    """Whether Cinder is configured at all (an ``endpoint_template`` or Keystone)."""
    return bool(CONF.cinder.endpoint_template or CONF.cinder.auth_type)


class _NotYet(Exception):
    """The volume is not in a wanted status yet (``wait_for_status`` tries again)."""


def _connection_info(attachment: dict[str, Any]) -> dict[str, Any]:
    """The attachment's connection_info in the shape volume drivers read (Nova's):
    ``driver_volume_type`` and the driver's ``data``; empty until a connector was
    given."""
    raw = dict(attachment.get('connection_info') or {})
    if not raw:
        return {}
    raw.pop('attachment_id', None)
    return {'driver_volume_type': raw.pop('driver_volume_type', None), 'data': raw,
            'attachment_id': attachment.get('id'), 'volume_id': attachment.get('volume_id')}


def _with_connection_info(attachment: dict[str, Any]) -> dict[str, Any]:
    return dict(attachment, connection_info=_connection_info(attachment))


def _with_mountpoint(connector: Mapping[str, Any], mountpoint: str | None) -> dict[str, Any]:
    """The connector carrying the mount point: Cinder's attachment API has no field of
    its own for it (as Nova works around it)."""
    result = copy.deepcopy(dict(connector))
    if mountpoint and 'mountpoint' not in result:
        result['mountpoint'] = mountpoint
    return result


def _instance_zone(context: RequestContext, instance: Instance) -> str | None:
    """The server's availability zone: its host's, once it has one, else the zone the
    boot asked for."""
    host = instance.host if instance.obj_attr_is_set('host') else None
    if not host:
        return instance.availability_zone if \
            instance.obj_attr_is_set('availability_zone') else None
    return availability_zones.host_zone(context.elevated(), host)


class API:
    """Cinder's volumes, snapshots and attachments, on behalf of a request context."""

    # -- volumes -------------------------------------------------------------------

    def get(self, context: RequestContext, volume_id: str) -> dict[str, Any]:
        """The volume as Cinder shows it (id, status, size, availability_zone,
        attachments, multiattach, bootable 'true'/'false', volume_image_metadata,
        encrypted, volume_type, name...).

        :raises VolumeNotFound:
        """
        return client.call(context, 'GET', '/volumes/%s' % volume_id,
                           not_found=exception.VolumeNotFound(volume_id=volume_id)
                           ).body['volume']

    def get_all(self, context: RequestContext,
                search_opts: Mapping[str, object] | None = None) -> list[dict[str, Any]]:
        """The detailed list of the caller's volumes, filtered by ``search_opts``
        (Cinder's query parameters)."""
        return client.call(context, 'GET', '/volumes/detail',
                           query=search_opts).body['volumes']

    def create(self, context: RequestContext, size: int, name: str | None,
               description: str | None, snapshot: str | Mapping[str, Any] | None = None,
               image_id: str | None = None, volume_type: str | None = None,
               metadata: Mapping[str, str] | None = None,
               availability_zone: str | None = None) -> dict[str, Any]:
        """Ask for a volume of ``size`` GiB, empty or from a snapshot or an image; it is
        ``creating`` at first (see :meth:`wait_for_status`).

        :param snapshot: the snapshot's id (or the snapshot, as Nova passes it)
        :raises VolumeOverQuota: the project has no room for it.
        :raises NotFound: no such snapshot, image or volume type.
        :raises InvalidInput: Cinder refused the request (its message).
        """
        snapshot_id = snapshot.get('id') if isinstance(snapshot, Mapping) else snapshot
        volume: dict[str, Any] = {'size': size, 'name': name, 'description': description,
                                  'snapshot_id': snapshot_id, 'imageRef': image_id,
                                  'volume_type': volume_type,
                                  'availability_zone': availability_zone,
                                  'metadata': dict(metadata or {})}
        return client.call(context, 'POST', '/volumes', body={'volume': volume},
                           bad_request=exception.InvalidInput).body['volume']

    def delete(self, context: RequestContext, volume_id: str) -> None:
        """:raises VolumeNotFound:
        :raises InvalidVolume: Cinder will not delete it now (attached, busy).
        """
        client.call(context, 'DELETE', '/volumes/%s' % volume_id,
                    not_found=exception.VolumeNotFound(volume_id=volume_id))

    def begin_detaching(self, context: RequestContext, volume_id: str) -> None:
        """Mark the volume ``detaching`` (fails unless it is ``in-use``)."""
        self._action(context, volume_id, 'os-begin_detaching')

    def roll_detaching(self, context: RequestContext, volume_id: str) -> None:
        """Undo :meth:`begin_detaching` after a detach that failed."""
        self._action(context, volume_id, 'os-roll_detaching')

    def migrate_volume_completion(self, context: RequestContext, old_volume_id: str,
                                  new_volume_id: str, error: bool = False) -> dict[str, Any]:
        """Tell Cinder that the swap it asked for (its migration or retype of an in-use
        volume) is over; answers ``{'save_volume_id': <the id the server keeps>}``.

        :raises VolumeNotFound:
        """
        return client.call(
            context, 'POST', '/volumes/%s/action' % old_volume_id,
            body={'os-migrate_volume_completion': {'new_volume': new_volume_id,
                                                   'error': error}},
            not_found=exception.VolumeNotFound(volume_id=old_volume_id)).body

    def reimage_volume(self, context: RequestContext, volume_id: str, image_id: str,
                       reimage_reserved: bool = False) -> None:
        """Have Cinder write the image onto the volume (``os-reimage``, 3.68), which it
        does in the background: ``downloading``, then its status before. A ``reserved``
        volume (a server's root volume being rebuilt) is re-imaged only with
        ``reimage_reserved``, and Cinder then tells the compute API with the event
        ``volume-reimaged`` (tag: the volume id); a failure sends nothing and leaves
        the volume in ``error``.

        :raises CinderAPIVersionNotAvailable: Cinder is older than 3.68.
        :raises VolumeNotFound:
        :raises InvalidVolume: Cinder refused (the volume's status, an image that does
            not fit, a volume attached to more than one server).
        """
        try:
            client.call(context, 'POST', '/volumes/%s/action' % volume_id,
                        body={'os-reimage': {'image_id': image_id,
                                             'reimage_reserved': reimage_reserved}},
                        not_found=exception.VolumeNotFound(volume_id=volume_id),
                        microversion=REIMAGE_VERSION)
        except exception.VolumeError as exc:
            if exc.kwargs.get('status') != 409:
                raise
            # A volume attached to more than one server (Cinder's 409).
            raise exception.InvalidVolume(reason=exc.kwargs.get('detail')) from exc

    def supports_reimage(self, context: RequestContext) -> bool:
        """Whether Cinder can re-image a volume (3.68).

        :raises CinderConnectionFailed:
        """
        return client.supports(context, REIMAGE_VERSION)

    def _action(self, context: RequestContext, volume_id: str, action: str) -> None:
        client.call(context, 'POST', '/volumes/%s/action' % volume_id, body={action: {}},
                    not_found=exception.VolumeNotFound(volume_id=volume_id))

    def wait_for_status(self, context: RequestContext, volume_id: str,
                        wanted: Collection[str], timeout: float,
                        interval: float = 1.0) -> dict[str, Any]:
        """The volume, once it is in one of the ``wanted`` statuses (looked at every
        ``interval`` seconds, by ``novalite.transient``, for up to ``timeout``
        seconds).

        :raises VolumeNotCreated: it went to ``error`` (unless wanted), or the time ran
            out first.
        :raises VolumeNotFound: it disappeared.
        """
        started = time.monotonic()
        looks = [0]
        last: dict[str, Any] = {}

        def look() -> dict[str, Any]:
            looks[0] += 1
            last.update(self.get(context, volume_id))
            if last['status'] in wanted:
                return dict(last)
            if last['status'] == 'error':
                raise exception.VolumeNotCreated(
                    volume_id=volume_id, seconds=int(time.monotonic() - started),
                    attempts=looks[0], volume_status='error')
            raise _NotYet()

        try:
            return transient.call('Waiting for volume %s' % volume_id, look,
                                  until=started + timeout, max_pause=interval,
                                  retryable=lambda exc: isinstance(exc, _NotYet),
                                  quiet=True)
        except _NotYet:
            raise exception.VolumeNotCreated(
                volume_id=volume_id, seconds=int(time.monotonic() - started),
                attempts=looks[0], volume_status=last.get('status')) from None

    # -- checks before an attach ---------------------------------------------------

    def check_available(self, volume: Mapping[str, Any]) -> None:
        """Whether the volume can take an attachment: ``available``, or ``in-use`` when
        it is multiattach.

        :raises InvalidVolume: with Nova's wording.
        """
        status = volume['status']
        if status == 'available' or (status == 'in-use' and volume.get('multiattach')):
            return
        if status == 'in-use':
            reason = 'volume %s already attached' % volume['id']
        else:
            reason = "volume '%s' status must be 'available'. Currently in '%s'" % (
                volume['id'], status)
        raise exception.InvalidVolume(reason=reason)

    def check_attached(self, context: RequestContext, volume: Mapping[str, Any]) -> None:
        """:raises InvalidVolume: the volume is not ``in-use``."""
        if volume['status'] != 'in-use':
            raise exception.InvalidVolume(
                reason="volume '%s' status must be 'in-use'. Currently in '%s' status" % (
                    volume['id'], volume['status']))

    def check_availability_zone(self, context: RequestContext, volume: Mapping[str, Any],
                                instance: Instance | None = None) -> None:
        """With ``[cinder] cross_az_attach = false``, the server and the volume must be
        in the same availability zone.

        :raises InvalidVolume: they are not.
        """
        if instance is None or CONF.cinder.cross_az_attach:
            return
        instance_zone = _instance_zone(context, instance)
        if instance_zone != volume['availability_zone']:
            raise exception.InvalidVolume(reason=(
                'Instance %s and volume %s are not in the same availability_zone. '
                'Instance is in %s. Volume is in %s' % (
                    instance.uuid, volume['id'], instance_zone,
                    volume['availability_zone'])))

    # -- snapshots -----------------------------------------------------------------

    def get_snapshot(self, context: RequestContext, snapshot_id: str) -> dict[str, Any]:
        """:raises SnapshotNotFound:"""
        return client.call(context, 'GET', '/snapshots/%s' % snapshot_id,
                           not_found=exception.SnapshotNotFound(snapshot_id=snapshot_id)
                           ).body['snapshot']

    def get_all_snapshots(self, context: RequestContext,
                          search_opts: Mapping[str, object] | None = None
                          ) -> list[dict[str, Any]]:
        return client.call(context, 'GET', '/snapshots/detail',
                           query=search_opts).body['snapshots']

    def create_snapshot(self, context: RequestContext, volume_id: str, name: str | None,
                        description: str | None) -> dict[str, Any]:
        """Snapshot a volume that is not attached.

        :raises VolumeNotFound:
        :raises VolumeOverQuota:
        :raises InvalidVolume: Cinder refused (an attached volume, say).
        """
        return self._create_snapshot(context, volume_id, name, description, force=False)

    def create_snapshot_force(self, context: RequestContext, volume_id: str,
                              name: str | None, description: str | None) -> dict[str, Any]:
        """Snapshot a volume even while it is attached (``in-use``)."""
        return self._create_snapshot(context, volume_id, name, description, force=True)

    def _create_snapshot(self, context: RequestContext, volume_id: str, name: str | None,
                         description: str | None, force: bool) -> dict[str, Any]:
        snapshot = {'volume_id': volume_id, 'force': force, 'name': name,
                    'description': description}
        return client.call(context, 'POST', '/snapshots', body={'snapshot': snapshot},
                           not_found=exception.VolumeNotFound(volume_id=volume_id)
                           ).body['snapshot']

    def delete_snapshot(self, context: RequestContext, snapshot_id: str) -> None:
        """:raises SnapshotNotFound:"""
        client.call(context, 'DELETE', '/snapshots/%s' % snapshot_id,
                    not_found=exception.SnapshotNotFound(snapshot_id=snapshot_id))

    # -- attachments (3.44+) -------------------------------------------------------

    def attachment_create(self, context: RequestContext, volume_id: str, instance_id: str,
                          connector: Mapping[str, Any] | None = None,
                          mountpoint: str | None = None) -> dict[str, Any]:
        """Attach the volume to the server in Cinder's books: ``reserved`` without a
        ``connector``; with one, Cinder also exports the volume to that host, and
        ``connection_info`` says how to reach it (mode ``rw`` where Cinder has 3.54).

        :raises VolumeNotFound:
        :raises InvalidVolume: the volume cannot take it (attached, not available).
        """
        attachment: dict[str, Any] = {'volume_uuid': volume_id, 'instance_uuid': instance_id}
        if connector is not None:
            attachment['connector'] = _with_mountpoint(connector, mountpoint)
            if client.version(context) >= _MODE_VERSION:
                attachment['mode'] = 'rw'
        try:
            resp = client.call(context, 'POST', '/attachments',
                               body={'attachment': attachment},
                               not_found=exception.VolumeNotFound(volume_id=volume_id))
        except exception.NovaliteException as exc:
            # A refusal (400) is the caller's to report; anything else, the operator's.
            if not isinstance(exc, exception.Invalid):
                LOG.error('Create attachment failed for volume %s of server %s: %s',
                          volume_id, instance_id, exc)
            raise
        return _with_connection_info(resp.body['attachment'])

    def attachment_get(self, context: RequestContext, attachment_id: str) -> dict[str, Any]:
        """:raises VolumeAttachmentNotFound:"""
        return _with_connection_info(client.call(
            context, 'GET', '/attachments/%s' % attachment_id,
            not_found=exception.VolumeAttachmentNotFound(attachment_id=attachment_id)
        ).body['attachment'])

    def attachment_get_all(self, context: RequestContext, instance_id: str | None = None,
                           volume_id: str | None = None) -> list[dict[str, Any]]:
        """The attachments of a server or of a volume (or of both at once).

        :raises InvalidRequest: neither was given.
        """
        if not instance_id and not volume_id:
            raise exception.InvalidRequest('Either instance or volume id must be passed.')
        query = {k: v for k, v in (('instance_id', instance_id), ('volume_id', volume_id))
                 if v}
        return [_with_connection_info(a) for a in client.call(
            context, 'GET', '/attachments/detail', query=query).body['attachments']]

    def attachment_update(self, context: RequestContext, attachment_id: str,
                          connector: Mapping[str, Any],
                          mountpoint: str | None = None) -> dict[str, Any]:
        """Give the attachment this host's connector: Cinder exports the volume to it
        and answers with ``connection_info``. Tried again on a 500 or 504.

        :raises VolumeAttachmentNotFound:
        """
        body = {'attachment': {'connector': _with_mountpoint(connector, mountpoint)}}
        return _with_connection_info(client.call(
            context, 'PUT', '/attachments/%s' % attachment_id, body=body,
            not_found=exception.VolumeAttachmentNotFound(attachment_id=attachment_id),
            retry_statuses=_RETRY_STATUSES, status_retries=ATTACHMENT_TRIES - 1
        ).body['attachment'])

    def attachment_complete(self, context: RequestContext, attachment_id: str) -> None:
        """The host is connected: Cinder marks the volume ``in-use``.

        :raises VolumeAttachmentNotFound:
        """
        client.call(context, 'POST', '/attachments/%s/action' % attachment_id,
                    body={'os-complete': None},
                    not_found=exception.VolumeAttachmentNotFound(attachment_id=attachment_id))

    def attachment_delete(self, context: RequestContext, attachment_id: str) -> None:
        """Drop the attachment (and the export to its host); an attachment already gone
        counts as deleted. Tried again on a 500 or 504."""
        try:
            client.call(context, 'DELETE', '/attachments/%s' % attachment_id,
                        not_found=exception.VolumeAttachmentNotFound(
                            attachment_id=attachment_id),
                        retry_statuses=_RETRY_STATUSES, status_retries=ATTACHMENT_TRIES - 1)
        except exception.VolumeAttachmentNotFound:
            LOG.warning('Attachment %s does not exist. Ignoring.', attachment_id)
