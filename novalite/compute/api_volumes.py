"""The volume side of a server create, checked against Cinder and Glance in the API.

Before anything is written: every volume, snapshot and image a mapping names exists and
is visible to the caller, sizes fit, zones match (``[cinder] cross_az_attach``). Then,
per new server, the user's own volumes are reserved in Cinder (an attachment without a
connector, as Nova does), so nobody else attaches them meanwhile; a create that fails
after that deletes the reservations it made. Volumes the compute host makes (from an
image, a snapshot or nothing) are made at build time.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging
from oslo_utils import strutils, units

from novalite import exception, objects
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.context import RequestContext
    from novalite.image.glance import API as ImageAPI
    from novalite.volume.cinder import API as VolumeAPI

LOG = logging.getLogger(__name__)

# Keys of a volume's image metadata that are the image's own attributes, not properties.
_IMAGE_ATTRIBUTES = ('size', 'disk_format', 'container_format', 'checksum', 'min_ram',
                     'min_disk', 'image_id', 'image_name')


@dataclasses.dataclass
class CreateVolumes:
    """What the create's mappings come to."""

    mappings: list[dict[str, Any]]
    # The root's image metadata when the server is volume-backed (else None): the image
    # a volume is made from, or what Cinder kept of the image of the volume (snapshot).
    root_image: dict[str, Any] | None
    # The zone the server must be in (a volume's, when volumes cannot cross zones).
    availability_zone: str | None

    @property
    def volume_backed(self) -> bool:
        return any(m.get('boot_index') == 0 for m in self.mappings)


def check_create(context: RequestContext, image_api: ImageAPI, volume_api: VolumeAPI,
                 flavor: objects.Flavor, mappings: list[dict[str, Any]], max_count: int,
                 availability_zone: str | None) -> CreateVolumes:
    """Check the create's volume mappings (``block_device.parse`` made them) against
    Cinder and Glance, filling in sizes. Nothing is written.

    :raises InvalidBDM*, InvalidVolume, InvalidRequest, CinderConnectionFailed, ...
    """
    if max_count > 1 and any(m['source_type'] == 'volume' for m in mappings):
        raise exception.InvalidRequest(
            message='Cannot attach one or more volumes to multiple instances')
    images: dict[str, dict[str, Any]] = {}
    root_image: dict[str, Any] | None = None
    zone = availability_zone
    for mapping in mappings:
        source = mapping['source_type']
        root = mapping.get('boot_index') == 0
        if source == 'image':
            image_id = mapping['image_id']
            if image_id not in images:
                try:
                    images[image_id] = image_api.get(context, image_id)
                except exception.GlanceConnectionFailed:
                    raise
                except Exception as exc:
                    raise exception.InvalidBDMImage(id=image_id) from exc
            image = images[image_id]
            if not mapping.get('volume_size'):
                raise exception.InvalidBDM(
                    message="Images with destination_type 'volume' need to have a non-zero "
                            "size specified")
            if image.get('status') != 'active':
                raise exception.ImageNotActive(image_id=image_id)
            _check_min_disk(image, mapping['volume_size'])
            if root:
                root_image = image
        elif source == 'volume':
            volume = _volume(context, volume_api, mapping['volume_id'])
            zone = _check_zone(volume, zone)
            mapping['volume_size'] = volume.get('size')
            if root:
                if not strutils.bool_from_string(volume.get('bootable', True)):
                    raise exception.InvalidBDMVolumeNotBootable(id=volume['id'])
                root_image = image_from_volume(volume)
        elif source == 'snapshot':
            try:
                snapshot = volume_api.get_snapshot(context, mapping['snapshot_id'])
            except exception.CinderConnectionFailed:
                raise
            except Exception as exc:
                raise exception.InvalidBDMSnapshot(id=mapping['snapshot_id']) from exc
            mapping['volume_size'] = mapping.get('volume_size') or snapshot.get('size')
            if root:
                root_image = image_from_volume(
                    _volume(context, volume_api, snapshot['volume_id']))
        elif source == 'blank' and not mapping.get('volume_size'):
            raise exception.InvalidBDM(
                message="Blank volumes (source: 'blank', dest: 'volume') need to have "
                        "non-zero size")
    if root_image is not None and flavor.memory_mb < int(root_image.get('min_ram') or 0):
        raise exception.FlavorMemoryTooSmall()
    return CreateVolumes(mappings, root_image, zone)


def _volume(context: RequestContext, volume_api: VolumeAPI, volume_id: str) -> dict[str, Any]:
    try:
        return volume_api.get(context, volume_id)
    except exception.CinderConnectionFailed:
        raise
    except Exception as exc:
        raise exception.InvalidBDMVolume(id=volume_id) from exc


def _check_zone(volume: dict[str, Any], zone: str | None) -> str | None:
    """With ``cross_az_attach`` off a server goes to its volumes' zone (Nova's rule)."""
    if CONF.cinder.cross_az_attach:
        return zone
    volume_zone = volume.get('availability_zone')
    if zone and volume_zone and zone != volume_zone:
        raise exception.MismatchVolumeAZException(
            reason='Server and volumes are not in the same availability zone. Server is '
                   'in: %s. Volumes are in: %s' % (zone, volume_zone))
    return zone or volume_zone


def _check_min_disk(image: dict[str, Any], volume_size_gb: int) -> None:
    min_disk_gb = int(image.get('min_disk') or 0)
    image_size = int(image.get('size') or 0)
    if volume_size_gb * units.Gi < max(min_disk_gb * units.Gi, image_size):
        raise exception.VolumeSmallerThanMinDisk(
            volume_size=volume_size_gb * units.Gi,
            image_min_disk=max(min_disk_gb * units.Gi, image_size))


def image_from_volume(volume: dict[str, Any]) -> dict[str, Any]:
    """The image metadata Cinder kept of the image a volume was made from, in Glance's
    shape (Nova's ``get_image_metadata_from_volume``)."""
    properties = dict(volume.get('volume_image_metadata') or {})
    image: dict[str, Any] = {'size': int(volume.get('size') or 0) * units.Gi,
                             'status': 'active'}
    for attribute in _IMAGE_ATTRIBUTES:
        value = properties.pop(attribute, None)
        if attribute in ('min_ram', 'min_disk'):
            image[attribute] = int(value or 0)
        elif attribute in ('disk_format', 'container_format') and value:
            image[attribute] = value
    image['properties'] = properties
    return image


def reserve(context: RequestContext, volume_api: VolumeAPI, instance_uuid: str,
            mappings: list[dict[str, Any]]) -> list[objects.BlockDeviceMapping]:
    """The mappings of one new server, the user's volumes reserved for it (an
    attachment each); on a failure the reservations made are deleted again."""
    bdms = [objects.BlockDeviceMapping.from_request(context, dict(m,
                                                                  instance_uuid=instance_uuid))
            for m in mappings]
    try:
        for bdm in bdms:
            if bdm.source_type == 'volume' and bdm.volume_id:
                bdm.attachment_id = volume_api.attachment_create(
                    context, bdm.volume_id, instance_uuid)['id']
    except Exception:
        unreserve(context, volume_api, bdms)
        raise
    return bdms


def unreserve(context: RequestContext, volume_api: VolumeAPI,
              bdms: list[objects.BlockDeviceMapping], save: bool = False) -> None:
    """Delete the attachments of ``bdms`` (a create that failed, a server deleted before
    it reached a host or that will not be built); what cannot be deleted now is logged.

    :param save: write each stored mapping whose attachment went (it stays, without the
        attachment), as the conductor does for a server it will not build
    """
    for bdm in bdms:
        attachment_id = bdm.attachment_id if bdm.obj_attr_is_set('attachment_id') else None
        if not attachment_id:
            continue
        try:
            volume_api.attachment_delete(context, attachment_id)
        except Exception as exc:
            LOG.warning('Could not delete the attachment %s of volume %s: %s',
                        attachment_id, bdm.volume_id, exc)
            continue
        bdm.attachment_id = None
        if save and bdm.obj_attr_is_set('id'):
            try:
                bdm.save()
            except Exception as exc:
                LOG.warning('Could not save the mapping of volume %s: %s', bdm.volume_id,
                            exc)


def forget(context: RequestContext, volume_api: VolumeAPI,
           bdm: objects.BlockDeviceMapping) -> None:
    """Undo an attach that did not happen: the reservation deleted in Cinder, then the
    mapping; what cannot be done now is logged."""
    unreserve(context, volume_api, [bdm])
    try:
        bdm.destroy()
    except Exception as exc:
        LOG.warning('Could not delete the mapping of volume %s: %s', bdm.volume_id, exc)
