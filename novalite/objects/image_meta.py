"""ImageMeta: the parts of a Glance image that scheduling and building look at."""
from __future__ import annotations

from typing import Any

from oslo_versionedobjects import fields

from novalite.objects import base

_INT_KEYS = ('min_ram', 'min_disk', 'size', 'virtual_size')


@base.NovaliteObjectRegistry.register
class ImageMeta(base.NovaliteObject):
    VERSION = '1.0'
    id: str | None
    name: str | None
    status: str | None
    visibility: str | None
    owner: str | None
    checksum: str | None
    container_format: str | None
    disk_format: str | None
    min_ram: int
    min_disk: int
    size: int
    virtual_size: int | None
    properties: dict[str, str | None]

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.UUIDField(nullable=True),
        'name': fields.StringField(nullable=True),
        'status': fields.StringField(nullable=True),
        'visibility': fields.StringField(nullable=True),
        'owner': fields.StringField(nullable=True),
        'checksum': fields.StringField(nullable=True),
        'container_format': fields.StringField(nullable=True),
        'disk_format': fields.StringField(nullable=True),
        'min_ram': fields.IntegerField(default=0),
        'min_disk': fields.IntegerField(default=0),
        'size': fields.IntegerField(default=0),
        'virtual_size': fields.IntegerField(nullable=True),
        'properties': fields.DictOfNullableStringsField(default={}),
    }

    @classmethod
    def from_dict(cls, image: dict[str, Any]) -> ImageMeta:
        """Build from a Glance v2 image body (unknown top-level keys become properties)."""
        obj = cls()
        props = {}
        for key, value in image.items():
            if key in _INT_KEYS:
                setattr(obj, key, int(value) if value is not None else
                        (None if key == 'virtual_size' else 0))
            elif key in cls.fields and key != 'properties':
                setattr(obj, key, value if value is None else str(value))
            elif key == 'properties' and isinstance(value, dict):
                props.update({k: None if v is None else str(v) for k, v in value.items()})
            elif isinstance(value, (str, int, float, bool)) or value is None:
                props[key] = None if value is None else str(value)
        obj.properties = props
        obj.obj_reset_changes()
        return obj

    def to_dict(self) -> dict[str, Any]:
        """A Glance v2 image body again (what ``from_dict`` read), for a build re-driven
        from its RequestSpec: the fields set, the properties at the top level."""
        image: dict[str, Any] = {name: getattr(self, name) for name in self.fields
                                 if name != 'properties' and self.obj_attr_is_set(name)}
        if self.obj_attr_is_set('properties'):
            image.update(self.properties)
        return image
