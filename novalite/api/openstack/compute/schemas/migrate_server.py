"""Schemas of the move actions: resize, confirmResize, revertResize, migrate,
os-migrateLive and evacuate (Nova's, by microversion)."""
from __future__ import annotations

from novalite.api.validation import parameter_types as pt


def _action(name: str, value: dict) -> dict:
    return {'type': 'object', 'properties': {name: value}, 'required': [name],
            'additionalProperties': False}


def _object(properties: dict, required: list[str] | None = None,
            nullable: bool = False) -> dict:
    schema = {'type': ['object', 'null'] if nullable else 'object',
              'properties': properties, 'additionalProperties': False}
    if required:
        schema['required'] = required
    return schema


_host = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': '^[a-zA-Z0-9-._]*$'}
_host_or_none = {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255,
                 'pattern': '^[a-zA-Z0-9-._]*$'}
_admin_password = {'type': 'string'}

resize = _action('resize', _object({
    'flavorRef': pt.resource_ref,
    'OS-DCF:diskConfig': {'type': 'string', 'enum': ['AUTO', 'MANUAL']},
}, ['flavorRef']))
# Any value, as Nova: clients send null, {} or anything else.
confirm_resize = _action('confirmResize', {})
revert_resize = _action('revertResize', {})

# Any value: the handler checks it against the schema of the request's microversion.
migrate_any = _action('migrate', {})
migrate_v256 = _action('migrate', _object({'host': _host_or_none}, nullable=True))

migrate_live_any = _action('os-migrateLive', {})
migrate_live = _action('os-migrateLive', _object({
    'block_migration': pt.boolean, 'disk_over_commit': pt.boolean,
    'host': _host_or_none}, ['block_migration', 'disk_over_commit', 'host']))
migrate_live_v225 = _action('os-migrateLive', _object({
    'block_migration': {'type': ['boolean', 'string'], 'enum': [*pt.boolean['enum'], 'auto']},
    'host': _host_or_none}, ['block_migration', 'host']))
migrate_live_v230 = _action('os-migrateLive', _object({
    'block_migration': migrate_live_v225['properties']['os-migrateLive']['properties'][
        'block_migration'],
    'host': _host_or_none, 'force': pt.boolean}, ['block_migration', 'host']))
migrate_live_v268 = migrate_live_v225

evacuate_any = _action('evacuate', {})
evacuate = _action('evacuate', _object({
    'host': _host, 'onSharedStorage': pt.boolean, 'adminPass': _admin_password},
    ['onSharedStorage']))
evacuate_v214 = _action('evacuate', _object({'host': _host, 'adminPass': _admin_password}))
evacuate_v229 = _action('evacuate', _object({
    'host': _host, 'adminPass': _admin_password, 'force': pt.boolean}))
evacuate_v268 = evacuate_v214
