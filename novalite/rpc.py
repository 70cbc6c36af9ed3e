"""The message bus: transports, RPC clients and servers, and the serializer they share.

``init(conf)`` sets up the default transport (``[DEFAULT] transport_url``). A cell
mapping names its own transport URL; ``get_cell_transport`` caches one transport per
URL so that several cells can use several brokers.

An endpoint that refuses a request (``EXPECTED_EXCEPTIONS``: a wrong state, a race
lost to a delete, no valid host, over quota) is logged at INFO without a traceback;
oslo.messaging's ERROR with a traceback is kept for faults.

With ``[DEFAULT] log_boot_hops`` on, the dispatcher also logs when each boot message
arrives and is done (``boot hop <topic>.<method>[.done] <uuid> <time>``): the boot's
timing is taken here, at the RPC boundary, and at the API's create, not inside the flow
(bench/boot_hops.py lines the hops up).

With ``[metrics] enabled``, the dispatcher times each message it handles, by topic,
method and kind (``novalite_rpc_duration_seconds``): the server's side of every
conversation, measured in the one place all daemons share.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher
from oslo_messaging.rpc import server as rpc_server

from novalite import concurrency, exception, metrics, utils
from novalite import context as nl_context
from novalite.conf import CONF
from novalite.objects import base as objects_base

LOG = logging.getLogger(__name__)

TRANSPORT: messaging.Transport | None = None
NOTIFICATION_TRANSPORT: messaging.Transport | None = None
NOTIFIER: messaging.Notifier | None = None
_CELL_TRANSPORTS: dict[str, messaging.Transport] = {}
_CLIENTS: dict[tuple, messaging.RPCClient] = {}
_LOCK = threading.Lock()

ALLOWED_EXMODS = ['novalite.exception']

# What an endpoint raises to say no, not to report a fault: its caller turns it into an
# answer (a 4xx, an instance fault, a reschedule), so a traceback in the server's log
# would only hide the real errors among hundreds of refusals.
EXPECTED_EXCEPTIONS: tuple[type[Exception], ...] = (
    exception.Invalid,  # InstanceInvalidState, UnexpectedTaskStateError, CannotResizeDisk...
    exception.NotFound,  # InstanceNotFound when a delete won the race
    exception.Conflict,
    exception.NotAuthorized,
    exception.QuotaError,
    exception.NoValidHost,
    exception.ComputeResourcesUnavailable,  # a claim lost to a concurrent one
)


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is a refusal (logged without a traceback) rather than a fault."""
    return isinstance(exc, EXPECTED_EXCEPTIONS)


class RequestContextSerializer(messaging.Serializer):
    """Serialize the RequestContext and pass entities through the object serializer."""

    def __init__(self, base: messaging.Serializer | None) -> None:
        self._base = base

    def serialize_entity(self, context: Any, entity: Any) -> Any:
        return self._base.serialize_entity(context, entity) if self._base else entity

    def deserialize_entity(self, context: Any, entity: Any) -> Any:
        return self._base.deserialize_entity(context, entity) if self._base else entity

    def serialize_context(self, context: Any) -> dict:
        return context.to_dict()

    def deserialize_context(self, context: dict) -> nl_context.RequestContext:
        return nl_context.RequestContext.from_dict(context)


def init(conf: cfg.ConfigOpts) -> None:
    """Create the default RPC and notification transports (idempotent)."""
    global TRANSPORT, NOTIFICATION_TRANSPORT, NOTIFIER
    if TRANSPORT is not None:
        return
    messaging.set_transport_defaults('novalite')
    TRANSPORT = messaging.get_rpc_transport(conf, allowed_remote_exmods=ALLOWED_EXMODS)
    NOTIFICATION_TRANSPORT = messaging.get_notification_transport(
        conf, allowed_remote_exmods=ALLOWED_EXMODS)
    # No driver configured means no notifications; naming 'noop' says so to
    # ``is_enabled``, which an empty driver list does not, so that nobody builds a
    # payload for nowhere.
    NOTIFIER = messaging.Notifier(
        NOTIFICATION_TRANSPORT, serializer=_serializer(),
        publisher_id='novalite', topics=['versioned_notifications'],
        driver=None if conf.oslo_messaging_notifications.driver else 'noop')
    if conf.transport_url:
        _CELL_TRANSPORTS[conf.transport_url] = TRANSPORT


def cleanup() -> None:
    global TRANSPORT, NOTIFICATION_TRANSPORT, NOTIFIER
    for transport in {id(t): t for t in _CELL_TRANSPORTS.values()}.values():
        if transport is not TRANSPORT:
            transport.cleanup()
    _CELL_TRANSPORTS.clear()
    _CLIENTS.clear()
    if TRANSPORT is not None:
        TRANSPORT.cleanup()
    if NOTIFICATION_TRANSPORT is not None:
        NOTIFICATION_TRANSPORT.cleanup()
    TRANSPORT = NOTIFICATION_TRANSPORT = NOTIFIER = None


def get_cell_transport(url: str | None) -> messaging.Transport:
    """The transport of a cell; the default one when the cell names none."""
    if not url or url == 'none:///':
        # cell0 has no bus; a process that never called rpc.init() only reads cells.
        return TRANSPORT
    transport = _CELL_TRANSPORTS.get(url)
    if transport is None:
        with _LOCK:
            transport = _CELL_TRANSPORTS.get(url)
            if transport is None:
                transport = messaging.get_rpc_transport(
                    cfg.CONF, url=url, allowed_remote_exmods=ALLOWED_EXMODS)
                _CELL_TRANSPORTS[url] = transport
    return transport


def _serializer() -> RequestContextSerializer:
    return RequestContextSerializer(objects_base.NovaliteObjectSerializer())


def get_client(target: messaging.Target, version_cap: str | None = None,
               transport: messaging.Transport | None = None,
               timeout: float | None = None) -> messaging.RPCClient:
    assert TRANSPORT is not None, 'rpc.init() was not called'
    return messaging.get_rpc_client(transport or TRANSPORT, target, version_cap=version_cap,
                                    serializer=_serializer(), timeout=timeout)


def get_shared_client(target: messaging.Target,
                      transport: messaging.Transport | None = None) -> messaging.RPCClient:
    """One client per transport and target, for callers that pick the transport per call
    (the compute API sends on the bus of the instance's cell).

    Building an ``RPCClient`` registers its options on the configuration, and
    registering empties oslo.config's cache of option values: a client built for every
    cast made every later option read in the process parse its value again.
    """
    transport = transport or TRANSPORT
    assert transport is not None, 'rpc.init() was not called'
    key = (id(transport), target.exchange, target.topic, target.namespace, target.version,
           target.server, target.fanout)
    client = _CLIENTS.get(key)
    if client is None:
        with _LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = _CLIENTS[key] = get_client(target, transport=transport)
    return client


def get_server(target: messaging.Target, endpoints: list,
               transport: messaging.Transport | None = None) -> messaging.MessageHandlingServer:
    assert TRANSPORT is not None, 'rpc.init() was not called'
    access_policy = dispatcher.DefaultRPCAccessPolicy
    # The executor follows the process's concurrency backend: green threads need the
    # eventlet executor, whose dispatch does not block the hub.
    executor = 'eventlet' if concurrency.choose() == 'eventlet' else 'threading'
    # messaging.get_rpc_server, with our dispatcher in place of its own.
    return rpc_server.RPCServer(
        transport or TRANSPORT, target,
        _Dispatcher(endpoints, _serializer(), access_policy, target.topic), executor)


class _Dispatcher(dispatcher.RPCDispatcher):
    """oslo.messaging's dispatcher, which hands the server an expected exception as
    ``ExpectedException``: the server then logs it at debug level only, and replies
    to a call with the original exception as before. The refusal is logged here once,
    at INFO, since a cast's refusal has no caller to report it."""

    def __init__(self, endpoints: list[Any], serializer: messaging.Serializer,
                 access_policy: type[dispatcher.RPCAccessPolicyBase],
                 topic: str | None = None) -> None:
        super().__init__(endpoints, serializer, access_policy)
        self._topic = topic or '?'

    def dispatch(self, incoming: Any) -> Any:
        boot = _boot_uuids(incoming.message) if CONF.log_boot_hops else None
        if boot:
            utils.hop('%s.%s' % (self._topic, boot[0]), boot[1])
        started = time.monotonic()
        try:
            return super().dispatch(incoming)
        except EXPECTED_EXCEPTIONS as exc:
            LOG.info('RPC %s refused: %s: %s', incoming.message.get('method'),
                     type(exc).__name__, exc)
            raise messaging.ExpectedException() from exc
        finally:
            metrics.observe_rpc(self._topic, str(incoming.message.get('method')),
                                message_kind(incoming), time.monotonic() - started)
            if boot:
                utils.hop('%s.%s.done' % (self._topic, boot[0]), boot[1])


def message_kind(incoming: Any) -> str:
    """``call`` when the sender waits for a reply, else ``cast``.

    oslo.messaging does not tell its dispatcher; the drivers keep where the reply goes
    (``reply_q`` for the AMQP drivers, ``_reply_q`` for the fake one), None for a cast.
    """
    reply_to = getattr(incoming, 'reply_q', None) or getattr(incoming, '_reply_q', None)
    return 'call' if reply_to is not None else 'cast'


def _object_data(primitive: Any) -> dict[str, Any]:
    """The fields of a serialized novalite object (empty for anything else)."""
    if not isinstance(primitive, dict):
        return {}
    data = primitive.get('novalite_object.data')
    return data if isinstance(data, dict) else {}


def _uuids(items: Any, field: str) -> Iterator[str]:
    for item in items if isinstance(items, list) else []:
        value = _object_data(item).get(field)
        if isinstance(value, str):
            yield value


def _boot_uuids(message: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(step, instance uuids) when ``message`` is a step of a boot, for the hop log:
    the conductor's build, the scheduler's selection, the host's build, and the save
    that makes the server ACTIVE (a compute's object call); None for anything else."""
    method = message.get('method')
    args = message.get('args') or {}
    if method == 'schedule_and_build_instances':
        return method, list(_uuids(args.get('build_requests'), 'instance_uuid'))
    if method == 'build_instances':
        return method, list(_uuids(args.get('instances'), 'uuid'))
    if method == 'select_destinations':
        return method, [u for u in args.get('instance_uuids') or [] if isinstance(u, str)]
    if method == 'build_and_run_instance':
        return method, list(_uuids([args.get('instance')], 'uuid'))
    if method == 'object_action' and args.get('objmethod') == 'save':
        objinst = args.get('objinst') or {}
        data = _object_data(objinst)
        changes = objinst.get('novalite_object.changes') or []
        if objinst.get('novalite_object.name') == 'Instance' and \
                data.get('vm_state') == 'active' and 'vm_state' in changes and \
                'launched_at' in changes:
            return 'active_save', list(_uuids([objinst], 'uuid'))
    return None


def get_notifier(publisher_id: str) -> messaging.Notifier | None:
    """The notifier of ``publisher_id``; None when notifications go nowhere."""
    if NOTIFIER is None or not NOTIFIER.is_enabled():
        return None
    return NOTIFIER.prepare(publisher_id=publisher_id)
