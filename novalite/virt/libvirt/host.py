"""Host: the libvirt connection of one compute host, and its domain events.

libvirt delivers events only while somebody runs its event loop: one daemon thread per
process runs it (``virEventRegisterDefaultImpl`` must come before the first
``open()``). Lifecycle events are queued there and handed to the registered handler on
a thread of each Host, so a slow handler never holds up libvirt. A connection found dead
is opened again on the next use.
"""
from __future__ import annotations

import queue
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import libvirt
from oslo_log import log as logging

from novalite import exception, executor
from novalite.virt.libvirt.guest import Guest

LOG = logging.getLogger(__name__)

# What a guest did, as the compute manager hears it.
EVENT_STARTED = 'started'
EVENT_STOPPED = 'stopped'
EVENT_PAUSED = 'paused'
EVENT_RESUMED = 'resumed'
EVENT_SUSPENDED = 'suspended'

EventHandler = Callable[[str, str], None]


class DeviceRemoval:
    """A device removal the driver waits for: libvirt reports the guest released the
    device (``removed``) or refused (``failed``), by the device's alias."""

    def __init__(self, instance_uuid: str, alias: str) -> None:
        self.key = (instance_uuid, alias)
        self.failed = False
        self._done = threading.Event()

    def set(self, failed: bool) -> None:
        self.failed = failed
        self._done.set()

    def wait(self, timeout: float) -> bool:
        """True once libvirt reported the outcome, False after ``timeout`` seconds."""
        return self._done.wait(timeout)

_loop_lock = threading.Lock()
_loop_thread: threading.Thread | None = None


def _ignore_error(_ctx: object, _err: object) -> None:
    """libvirt prints every error to stderr unless a handler takes it; errors reach us
    as exceptions anyway."""


def _run_event_loop() -> None:
    while True:
        try:
            libvirt.virEventRunDefaultImpl()
        except Exception:  # noqa: BLE001 - the loop must outlive any one failure
            LOG.exception('libvirt event loop iteration failed')
            time.sleep(1)


def start_event_loop() -> None:
    """Register libvirt's default event implementation and run it on a daemon thread,
    once per process."""
    global _loop_thread
    with _loop_lock:
        if _loop_thread is not None:
            return
        libvirt.registerErrorHandler(_ignore_error, None)
        libvirt.virEventRegisterDefaultImpl()
        _loop_thread = executor.start_thread('libvirt-events', _run_event_loop)


_MIGRATION_EVENTS = {
    (libvirt.VIR_DOMAIN_EVENT_STARTED, libvirt.VIR_DOMAIN_EVENT_STARTED_MIGRATED),
    (libvirt.VIR_DOMAIN_EVENT_SUSPENDED, libvirt.VIR_DOMAIN_EVENT_SUSPENDED_MIGRATED),
    (libvirt.VIR_DOMAIN_EVENT_RESUMED, libvirt.VIR_DOMAIN_EVENT_RESUMED_MIGRATED),
    (libvirt.VIR_DOMAIN_EVENT_STOPPED, libvirt.VIR_DOMAIN_EVENT_STOPPED_MIGRATED),
}


def lifecycle_event(event: int, detail: int) -> str | None:
    """The novalite event of a libvirt lifecycle event (None: not a power change).

    A live migration's own events are none: the guest stops on the source because it
    runs on the destination, pauses there for the last copy, and starts or resumes on
    the destination before that host owns the instance (the migration's flow sets the
    power state)."""
    if (event, detail) in _MIGRATION_EVENTS:
        return None
    if event == libvirt.VIR_DOMAIN_EVENT_STARTED:
        return EVENT_STARTED
    if event == libvirt.VIR_DOMAIN_EVENT_RESUMED:
        return EVENT_RESUMED
    if event == libvirt.VIR_DOMAIN_EVENT_SUSPENDED:
        return EVENT_PAUSED
    if event == libvirt.VIR_DOMAIN_EVENT_PMSUSPENDED:
        return EVENT_SUSPENDED
    if event == libvirt.VIR_DOMAIN_EVENT_STOPPED:
        if detail == libvirt.VIR_DOMAIN_EVENT_STOPPED_SAVED:
            return EVENT_SUSPENDED
        return EVENT_STOPPED
    if event == libvirt.VIR_DOMAIN_EVENT_CRASHED:
        return EVENT_STOPPED
    return None


class Host:
    """The connection to ``uri`` (opened by ``initialize()``).

    :param event_handler: called as ``handler(instance_uuid, event)`` for each
        lifecycle event of a domain of this connection.
    """

    def __init__(self, uri: str, event_handler: EventHandler | None = None) -> None:
        self.uri = uri
        self._event_handler = event_handler
        self._conn: libvirt.virConnect | None = None
        self._callback_ids: list[int] = []
        self._removals: dict[tuple[str, str], DeviceRemoval] = {}
        self._removals_lock = threading.Lock()
        self._lock = threading.RLock()
        self._events: queue.Queue = queue.Queue()
        self._dispatcher: threading.Thread | None = None
        self._capabilities: str | None = None
        self._cpu_info: dict[str, Any] | None = None

    @property
    def is_test(self) -> bool:
        """Whether this is libvirt's test driver (which lacks some calls)."""
        return self.uri.startswith('test:')

    def initialize(self) -> None:
        start_event_loop()
        if self._dispatcher is None:
            self._dispatcher = executor.start_thread('libvirt-dispatch', self._dispatch)
        self.get_connection()

    def set_event_handler(self, handler: EventHandler | None) -> None:
        self._event_handler = handler

    # -- the connection ----------------------------------------------------------------

    def get_connection(self) -> libvirt.virConnect:
        """The open connection, opened again if it broke.

        :raises exception.HypervisorUnavailable: libvirt cannot be reached.
        """
        with self._lock:
            if self._conn is not None:
                try:
                    if self._conn.isAlive():
                        return self._conn
                except libvirt.libvirtError:
                    pass
                LOG.warning('Connection to %s is broken; reconnecting', self.uri)
                self._conn = None
                self._capabilities = self._cpu_info = None
            self._conn = self._connect()
            return self._conn

    def _connect(self) -> libvirt.virConnect:
        try:
            conn = libvirt.open(self.uri)
        except libvirt.libvirtError as exc:
            raise exception.HypervisorUnavailable(host=self.uri, reason=exc.get_error_message()) \
                from exc
        self._callback_ids = [conn.domainEventRegisterAny(
            None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, self._on_lifecycle, None)]
        for event_id, failed in ((libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED, False),
                                 (libvirt.VIR_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED, True)):
            try:
                self._callback_ids.append(conn.domainEventRegisterAny(
                    None, event_id, self._on_device_removal, failed))
            except libvirt.libvirtError:
                LOG.debug('%s sends no device removal events (%s); a detach is checked '
                          'in the domain XML', self.uri, event_id)
        try:
            conn.registerCloseCallback(self._on_close, None)
        except libvirt.libvirtError:
            LOG.debug('%s has no close callback; a broken connection is noticed on use',
                      self.uri)
        LOG.info('Connected to %s', self.uri)
        return conn

    def close(self) -> None:
        """Close the connection and stop handing out events."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    for callback_id in self._callback_ids:
                        conn.domainEventDeregisterAny(callback_id)
                    self._callback_ids = []
                    conn.close()
                except libvirt.libvirtError:
                    LOG.debug('Error closing %s', self.uri, exc_info=True)
        if self._dispatcher is not None:
            self._events.put(None)
            self._dispatcher.join(5)
            self._dispatcher = None

    # -- events ------------------------------------------------------------------------

    def _on_lifecycle(self, _conn: libvirt.virConnect, domain: libvirt.virDomain,
                      event: int, detail: int, _opaque: object) -> None:
        name = lifecycle_event(event, detail)
        if name is not None:
            self._events.put((domain.UUIDString(), name))

    def _on_device_removal(self, _conn: libvirt.virConnect, domain: libvirt.virDomain,
                           alias: str, failed: bool) -> None:
        with self._removals_lock:
            waiter = self._removals.get((domain.UUIDString(), alias))
        if waiter is not None:
            waiter.set(failed)
        else:
            LOG.debug('Device %s of %s: removal %s, not awaited', alias,
                      domain.UUIDString(), 'failed' if failed else 'done')

    def expect_device_removal(self, instance_uuid: str, alias: str) -> DeviceRemoval:
        """Register for the removal event of the device ``alias``; before the detach
        request, so a fast guest's event is not missed. ``forget_device_removal`` after."""
        waiter = DeviceRemoval(instance_uuid, alias)
        with self._removals_lock:
            self._removals[waiter.key] = waiter
        return waiter

    def forget_device_removal(self, waiter: DeviceRemoval) -> None:
        with self._removals_lock:
            if self._removals.get(waiter.key) is waiter:
                del self._removals[waiter.key]

    def _on_close(self, _conn: libvirt.virConnect, reason: int, _opaque: object) -> None:
        LOG.warning('libvirt closed the connection to %s (reason %s)', self.uri, reason)

    def _dispatch(self) -> None:
        while True:
            item = self._events.get()
            if item is None:
                return
            handler = self._event_handler
            if handler is None:
                continue
            try:
                handler(*item)
            except Exception:  # noqa: BLE001 - one bad event must not stop the others
                LOG.exception('Error handling libvirt event %s', item)

    # -- domains and host facts ----------------------------------------------------------

    def get_guest(self, instance_uuid: str) -> Guest:
        """:raises InstanceNotFound: libvirt has no such domain."""
        try:
            return Guest(self.get_connection().lookupByUUIDString(instance_uuid))
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise exception.InstanceNotFound(instance_id=instance_uuid) from exc
            raise

    def list_guests(self, only_running: bool = False) -> list[Guest]:
        flags = libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE if only_running else 0
        return [Guest(d) for d in self.get_connection().listAllDomains(flags)]

    def define(self, xml: str) -> Guest:
        """Define (persistently) the domain of ``xml``."""
        return Guest(self.get_connection().defineXML(xml))

    def get_capabilities(self) -> str:
        if self._capabilities is None:
            self._capabilities = self.get_connection().getCapabilities()
        return self._capabilities

    def get_info(self) -> list:
        """``virNodeGetInfo``: [arch, memory MiB, cpus, MHz, nodes, sockets, cores,
        threads]."""
        return self.get_connection().getInfo()

    def hostname(self) -> str:
        return self.get_connection().getHostname()

    # -- the host CPU ----------------------------------------------------------------------

    def cpu_info(self) -> dict[str, Any]:
        """The host CPU as Nova's ``cpu_info`` shows it: arch, model, vendor, topology,
        features; from the capabilities, else from the node info."""
        if self._cpu_info is None:
            self._cpu_info = self._read_cpu_info()
        return self._cpu_info

    def _read_cpu_info(self) -> dict[str, Any]:
        info = self.get_info()
        result: dict[str, Any] = {
            'arch': info[0], 'model': None, 'vendor': None,
            'topology': {'cells': info[4], 'sockets': info[5], 'cores': info[6],
                         'threads': info[7]},
            'features': []}
        cpu = ET.fromstring(self.get_capabilities()).find('host/cpu')
        if cpu is not None:
            result['model'] = cpu.findtext('model')
            result['vendor'] = cpu.findtext('vendor')
            result['features'] = sorted(self._cpu_features(cpu))
        return result

    def _cpu_features(self, cpu: ET.Element) -> set[str]:
        """Every feature of the host CPU: the model's own (expanded by libvirt) and the
        extra ones the capabilities list."""
        features = {name for f in cpu.findall('feature') if (name := f.get('name'))}
        if cpu.find('model') is None:
            LOG.info('%s names no host CPU model (the test driver does not); CPU traits '
                     'come from the listed features only', self.uri)
            return features
        try:
            expanded = self.get_connection().baselineCPU(
                [ET.tostring(cpu, encoding='unicode')],
                libvirt.VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES)
        except libvirt.libvirtError as exc:
            LOG.info('%s cannot expand the CPU model\'s features (%s); reporting the '
                     'listed ones only', self.uri, exc.get_error_message())
            return features
        return features | {name for f in ET.fromstring(expanded).findall('feature')
                           if f.get('policy', 'require') == 'require' and (name := f.get('name'))}


# libvirt CPU feature names whose trait is not simply HW_CPU_X86_<NAME>.
_TRAIT_ALIASES = {'pni': 'SSE3', 'pclmuldq': 'CLMUL', 'fma': 'FMA3', 'sse4.1': 'SSE41',
                  'sse4.2': 'SSE42', 'svm': 'AMD_SVM', 'aes': 'AESNI', 'bmi1': 'BMI',
                  'sha-ni': 'SHA'}


def cpu_traits(features: list[str]) -> set[str]:
    """The os-traits ``HW_CPU_X86_*`` traits of a list of libvirt CPU feature names."""
    import os_traits
    known = set(os_traits.get_traits('HW_CPU_X86_'))
    traits = set()
    for feature in features:
        name = _TRAIT_ALIASES.get(feature, feature.upper().replace('.', '').replace('-', '_'))
        trait = 'HW_CPU_X86_' + name
        if trait in known:
            traits.add(trait)
    return traits
