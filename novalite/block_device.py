"""Block device mapping v2 as the API receives it, turned into mapping dicts.

Pure checks, no service is asked (``compute/api_volumes.py`` asks Cinder and Glance).
A mapping dict has the columns of ``objects.BlockDeviceMapping``; the ``uuid`` of the API
becomes ``image_id``, ``volume_id`` or ``snapshot_id`` by the source type, as in Nova.

What novalite does not take, said in the 400: ephemeral and swap disks given as
``blank``/``local`` mappings (the flavor's ephemeral and swap disks apply), and an image
mapped to a local disk other than the boot disk (Nova refuses that too).
"""
from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

from oslo_utils import strutils

from novalite import exception

# The device names a guest's disks get, in order (virtio: vda, vdb, ...).
_DEVICE_NAME = re.compile(r'^(/dev/)?[a-z]+[a-z0-9]*$')
_PREFIX = re.compile(r'^(/dev/)?(x?v|s|h)d')
DEFAULT_PREFIX = '/dev/vd'


def strip_dev(name: str | None) -> str | None:
    return name[5:] if name and name.startswith('/dev/') else name


def prepend_dev(name: str | None) -> str | None:
    return '/dev/' + name if name and not name.startswith('/dev/') else name


def _boot_index(value: object) -> int | None:
    if value is None or value == '':
        return None
    try:
        return int(str(value))
    except ValueError as exc:
        raise exception.InvalidBDMFormat(details='Boot index is invalid.') from exc


def from_api(api_bdm: dict[str, Any], image_uuid_specified: bool) -> dict[str, Any]:
    """One ``block_device_mapping_v2`` entry as a mapping dict (Nova's
    ``BlockDeviceDict.from_api`` rules).

    :raises InvalidBDMFormat: the entry makes no sense
    """
    bdm = dict(api_bdm)
    if bdm.get('no_device'):
        raise exception.InvalidBDMFormat(
            details='no_device mappings hide an image\'s own mappings, which novalite '
                    'images do not have.')
    source_type = bdm.get('source_type')
    destination_type = bdm.get('destination_type') or 'local'
    device_uuid = bdm.pop('uuid', None)
    if source_type not in ('image', 'volume', 'snapshot', 'blank'):
        raise exception.InvalidBDMFormat(details='Invalid source_type field.')
    if source_type == 'blank' and device_uuid:
        raise exception.InvalidBDMFormat(details='Invalid device UUID.')
    if source_type != 'blank':
        if not device_uuid and not (source_type == 'image' and bdm.get('image_id')):
            raise exception.InvalidBDMFormat(details='Missing device UUID.')
        if device_uuid:
            bdm['%s_id' % source_type] = device_uuid
    boot_index = _boot_index(bdm.get('boot_index'))
    if source_type == 'image' and destination_type == 'local' and \
            not (image_uuid_specified and boot_index == 0):
        raise exception.InvalidBDMFormat(details='Mapping image to local is not supported.')
    if source_type == 'blank' and destination_type == 'local':
        raise exception.InvalidBDMFormat(
            details='Ephemeral and swap disks in block_device_mapping_v2 are not supported '
                    'by novalite: the flavor\'s ephemeral and swap disks apply.')
    if destination_type == 'local' and bdm.get('volume_type'):
        raise exception.InvalidBDMFormat(
            details='Specifying a volume_type with destination_type=local is not '
                    'supported.')
    if source_type == 'volume' and bdm.get('volume_type'):
        raise exception.InvalidBDMFormat(
            details='Specifying volume type to existing volume is not supported.')
    if source_type in ('volume', 'snapshot') and destination_type != 'volume':
        raise exception.InvalidBDMFormat(
            details='A %s can only be mapped to destination_type volume.' % source_type)
    if bdm.get('device_name') is not None:
        validate_device_name(bdm['device_name'])
        # Kept as the guest sees it, as Nova's host stores it ('vdb' is /dev/vdb).
        bdm['device_name'] = prepend_dev(bdm['device_name'])
    size = bdm.get('volume_size')
    if size is not None and size != '':
        try:
            bdm['volume_size'] = int(str(size))
        except ValueError as exc:
            raise exception.InvalidBDMFormat(details='Invalid volume_size.') from exc
    else:
        bdm['volume_size'] = None
    bdm['source_type'] = source_type
    bdm['destination_type'] = destination_type
    bdm['boot_index'] = boot_index if boot_index is None or boot_index >= 0 else None
    bdm['delete_on_termination'] = strutils.bool_from_string(
        bdm.get('delete_on_termination', False), strict=False)
    return bdm


def validate_device_name(name: str) -> None:
    if not name or len(name) > 255 or not _DEVICE_NAME.match(name):
        raise exception.InvalidBDMFormat(details='Device name contains spaces.'
                                         if name and ' ' in name else
                                         'Device name empty or too long.')


def check_boot_sequence(bdms: Iterable[dict[str, Any]]) -> None:
    """Boot indexes 0, 1, ... without gaps, and a boot device (Nova's rule).

    :raises InvalidBDMBootSequence:
    """
    indexes = sorted(b['boot_index'] for b in bdms if b.get('boot_index') is not None)
    if not indexes or any(i != v for i, v in enumerate(indexes)):
        raise exception.InvalidBDMBootSequence()


def parse(api_bdms: list[dict[str, Any]], image_href: str | None
          ) -> tuple[str | None, list[dict[str, Any]]]:
    """The boot image and the volume mappings of a create request.

    ``imageRef`` alone boots the image from local disk; openstackclient sends that same
    image as an image->local mapping with boot index 0, which adds nothing. A volume
    mapping with boot index 0 makes the server volume-backed: then no image is booted
    from local disk (an imageRef beside it is the image the volume is made from, as in
    Nova only when the mapping names no image itself).

    :returns: (the image to boot from local disk or None, the volume mappings)
    :raises InvalidBDMFormat, InvalidBDMBootSequence:
    """
    parsed = [from_api(b, bool(image_href) or _names_image_root(api_bdms))
              for b in api_bdms]
    volumes = [b for b in parsed if b['destination_type'] == 'volume']
    for local in (b for b in parsed if b['destination_type'] == 'local'):
        image_id = local.get('image_id')
        if image_href and image_id != image_href:
            raise exception.InvalidBDMFormat(
                details='imageRef %s and the boot image %s of block_device_mapping_v2 '
                        'differ.' % (image_href, image_id))
        image_href = image_id
    root_volume = next((b for b in volumes if b['boot_index'] == 0), None)
    if root_volume is not None and any(b['destination_type'] == 'local' for b in parsed):
        raise exception.InvalidBDMBootSequence()
    if root_volume is not None:
        image_href = None
    sequence = volumes + ([{'boot_index': 0}] if image_href else [])
    if volumes or not image_href:
        check_boot_sequence(sequence)
    _check_distinct(volumes, image_root=bool(image_href))
    return image_href, volumes


def _check_distinct(volumes: list[dict[str, Any]], image_root: bool) -> None:
    """One mapping per volume and per device name (the image booted from local disk
    is the first disk, ``/dev/vda``): a guest cannot have either twice.

    :raises InvalidBDMFormat:
    """
    seen_volumes: set[str] = set()
    seen_devices: set[str] = {DEFAULT_PREFIX + 'a'} if image_root else set()
    for bdm in volumes:
        volume_id, device = bdm.get('volume_id'), bdm.get('device_name')
        if volume_id and volume_id in seen_volumes:
            raise exception.InvalidBDMFormat(
                details='Volume %s is mapped more than once.' % volume_id)
        if device and device in seen_devices:
            raise exception.InvalidBDMFormat(
                details='Device name %s is used more than once.' % device)
        seen_volumes.add(volume_id or '')
        seen_devices.add(device or '')


def _names_image_root(api_bdms: list[dict[str, Any]]) -> bool:
    return any(b.get('source_type') == 'image' and
               (b.get('destination_type') or 'local') == 'local' and
               str(b.get('boot_index')) == '0' for b in api_bdms)


def next_device_name(used: Iterable[str | None], prefix: str = DEFAULT_PREFIX) -> str:
    """The first free device name after the used ones (``/dev/vdb`` after ``vda``).

    :raises InvalidBDMFormat: no letter is left
    """
    names = [strip_dev(n) or '' for n in used if n and _PREFIX.match(n)]
    taken = {name[-1:] for name in names if len(name) == 3}
    base = strip_dev(prefix) or 'vd'
    for letter in string.ascii_lowercase:
        if letter not in taken:
            return '/dev/' + base + letter
    raise exception.InvalidBDMFormat(details='No free device name is left.')
