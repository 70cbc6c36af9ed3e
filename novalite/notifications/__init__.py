"""Versioned notifications: ``instance.<action>.start|end|error`` on the notifier.

The payloads follow Nova's versioned notification shape (an envelope naming the payload
object, its namespace and version, and its data), so consumers written for Nova's
``versioned_notifications`` topic read them. They are sent through oslo.messaging's
notifier; ``[oslo_messaging_notifications] driver`` decides where they go (nowhere by
default, ``messagingv2`` for the bus, ``log`` or ``test`` for tests).
"""
from __future__ import annotations

import datetime
import traceback
import types
from typing import TYPE_CHECKING, Any

from oslo_log import log as logging

from novalite import objects, rpc

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

PAYLOAD_VERSION = '1.8'  # the InstanceActionPayload version whose fields this sends
START, END, ERROR = 'start', 'end', 'error'


def _iso(value: datetime.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _get(obj: objects.Instance | objects.Flavor, name: str) -> Any:
    """A field of ``obj``, None when it is not loaded (never lazy-load here)."""
    if hasattr(obj, 'obj_attr_is_set') and (
            name not in obj.fields or not obj.obj_attr_is_set(name)):
        return None
    return getattr(obj, name, None)


def _envelope(name: str, data: dict) -> dict:
    return {'nova_object.name': name, 'nova_object.namespace': 'nova',
            'nova_object.version': PAYLOAD_VERSION, 'nova_object.data': data}


def flavor_payload(flavor: objects.Flavor | None) -> dict | None:
    if flavor is None:
        return None
    return _envelope('FlavorPayload', {
        'flavorid': flavor.flavorid, 'name': flavor.name, 'memory_mb': flavor.memory_mb,
        'vcpus': flavor.vcpus, 'root_gb': flavor.root_gb,
        'ephemeral_gb': flavor.ephemeral_gb, 'swap': flavor.swap,
        'extra_specs': dict(_get(flavor, 'extra_specs') or {})})


def instance_payload(instance: objects.Instance, fault: BaseException | None = None,
                     **extra: object) -> dict:
    """The InstanceActionPayload of ``instance`` (and of ``fault`` on errors)."""
    from novalite.compute import power_state
    data = {
        'uuid': instance.uuid, 'display_name': _get(instance, 'display_name'),
        'display_description': _get(instance, 'display_description'),
        'host': _get(instance, 'host'), 'node': _get(instance, 'node'),
        'host_name': _get(instance, 'hostname'),
        'state': _get(instance, 'vm_state'), 'task_state': _get(instance, 'task_state'),
        'power_state': power_state.STATE_MAP.get(_get(instance, 'power_state'), 'pending'),
        'tenant_id': _get(instance, 'project_id'), 'user_id': _get(instance, 'user_id'),
        'image_uuid': _get(instance, 'image_ref'),
        'availability_zone': _get(instance, 'availability_zone'),
        'key_name': _get(instance, 'key_name'), 'locked': bool(_get(instance, 'locked')),
        'locked_reason': _get(instance, 'locked_reason'),
        'reservation_id': _get(instance, 'reservation_id'),
        'created_at': _iso(_get(instance, 'created_at')),
        'launched_at': _iso(_get(instance, 'launched_at')),
        'terminated_at': _iso(_get(instance, 'terminated_at')),
        'deleted_at': _iso(_get(instance, 'deleted_at')),
        'updated_at': _iso(_get(instance, 'updated_at')),
        'flavor': flavor_payload(_get(instance, 'flavor')),
        'metadata': dict(_get(instance, 'metadata') or {}),
        'ip_addresses': [], 'block_devices': [],
        'fault': None if fault is None else _envelope('ExceptionPayload', {
            'exception': type(fault).__name__, 'exception_message': str(fault),
            'function_name': _function_name(fault), 'module_name': _module_name(fault),
            'traceback': ''.join(traceback.format_exception(fault))}),
    }
    data.update(extra)
    return _envelope('InstanceActionPayload', data)


def _frame(fault: BaseException) -> types.FrameType | None:
    tb = fault.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame if tb is not None else None


def _function_name(fault: BaseException) -> str:
    frame = _frame(fault)
    return frame.f_code.co_name if frame is not None else ''


def _module_name(fault: BaseException) -> str:
    frame = _frame(fault)
    return frame.f_globals.get('__name__', '') if frame is not None else ''


def notify_about_instance_action(context: RequestContext, instance: objects.Instance, host: str,
                                 action: str, phase: str, exception: BaseException | None = None,
                                 binary: str = 'novalite-compute', **extra: object) -> None:
    """Send ``instance.<action>.<phase>`` (``phase``: start, end or error).

    A notification that cannot be sent is logged, never raised: the operation it
    describes goes on.
    """
    notifier = rpc.get_notifier('%s:%s' % (binary, host))
    if notifier is None:
        return
    event_type = 'instance.%s.%s' % (action, phase)
    payload = instance_payload(instance, exception, **extra)
    try:
        if phase == ERROR:
            notifier.error(context, event_type, payload)
        else:
            notifier.info(context, event_type, payload)
    except Exception:
        LOG.exception('Could not send notification %s of %s', event_type, instance.uuid)
