"""A server's disk config (``OS-DCF:diskConfig``) against its image's ``auto_disk_config``.

AUTO asks the guest's root partition to be grown to the flavor's disk; an image whose
``auto_disk_config`` property is ``disabled`` refuses it. Without a choice in the
request the image's property decides (anything but a true value is MANUAL), as in Nova.
"""
from __future__ import annotations

from typing import Any

from oslo_utils import strutils

from novalite import exception
from novalite.compute import api_images
from novalite.objects.instance import Instance


def _image_value(image: dict[str, Any]) -> str | None:
    return api_images.image_properties(image).get('auto_disk_config')


def check(image_value: str | None, auto_disk_config: bool | None,
          image_ref: str | None) -> None:
    """:raises AutoDiskConfigDisabledByImage: AUTO asked of an image that disables it"""
    disabled = image_value is not None and image_value.strip().lower() == 'disabled'
    if disabled and auto_disk_config:
        raise exception.AutoDiskConfigDisabledByImage(image=image_ref)


def for_image(image: dict[str, Any] | None, auto_disk_config: bool | None) -> bool:
    """The disk config of a server (re)built from ``image``, checked against it."""
    if image is None:
        return bool(auto_disk_config)
    value = _image_value(image)
    check(value, auto_disk_config, image.get('id'))
    if auto_disk_config is None:
        return strutils.bool_from_string(value)
    return auto_disk_config


def check_instance(instance: Instance, auto_disk_config: bool | None) -> None:
    """Check a resize's disk config against the image the server was built from (its
    properties as the system metadata keeps them)."""
    if auto_disk_config is None:
        return
    sysmeta = instance.system_metadata or {}
    check(sysmeta.get('image_auto_disk_config'), auto_disk_config,
          sysmeta.get('image_base_image_ref'))
