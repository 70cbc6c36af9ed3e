"""Guest: one libvirt domain, with the operations the driver performs on it."""
from __future__ import annotations

import time

import libvirt
from oslo_log import log as logging

from novalite.compute import power_state
from novalite.virt import hardware

LOG = logging.getLogger(__name__)

# libvirt domain states → novalite power states (as Nova maps them: a domain being
# shut down already counts as shut down; "blocked" is running).
_POWER_STATES = {
    libvirt.VIR_DOMAIN_NOSTATE: power_state.NOSTATE,
    libvirt.VIR_DOMAIN_RUNNING: power_state.RUNNING,
    libvirt.VIR_DOMAIN_BLOCKED: power_state.RUNNING,
    libvirt.VIR_DOMAIN_PAUSED: power_state.PAUSED,
    libvirt.VIR_DOMAIN_SHUTDOWN: power_state.SHUTDOWN,
    libvirt.VIR_DOMAIN_SHUTOFF: power_state.SHUTDOWN,
    libvirt.VIR_DOMAIN_CRASHED: power_state.CRASHED,
    libvirt.VIR_DOMAIN_PMSUSPENDED: power_state.SUSPENDED,
}


def error_code(exc: libvirt.libvirtError) -> int | None:
    return exc.get_error_code()


class Guest:
    """Wraps a ``virDomain``; libvirt errors pass through unchanged."""

    def __init__(self, domain: libvirt.virDomain) -> None:
        self._domain = domain

    @property
    def uuid(self) -> str:
        return self._domain.UUIDString()

    @property
    def name(self) -> str:
        return self._domain.name()

    def is_active(self) -> bool:
        return bool(self._domain.isActive())

    def launch(self) -> None:
        """Start the domain (from its managed save image, if it has one)."""
        self._domain.create()

    def poweroff(self) -> None:
        """Stop the domain at once (pulls the plug); nothing to do if it is not running."""
        try:
            self._domain.destroy()
        except libvirt.libvirtError as exc:
            if error_code(exc) != libvirt.VIR_ERR_OPERATION_INVALID or self.is_active():
                raise

    def shutdown(self) -> None:
        """Ask the guest OS to shut down (ACPI power button); returns at once."""
        self._domain.shutdown()

    def pause(self) -> None:
        self._domain.suspend()

    def resume(self) -> None:
        self._domain.resume()

    def save(self) -> None:
        """Save the memory to a managed save image and stop (Nova's suspend)."""
        self._domain.managedSave(0)

    def has_saved_state(self) -> bool:
        return bool(self._domain.hasManagedSaveImage(0))

    def undefine(self) -> None:
        """Forget the domain, with its managed save image if any."""
        self._domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)

    def get_power_state(self) -> int:
        state, _reason = self._domain.state()
        if state == libvirt.VIR_DOMAIN_SHUTOFF and self.has_saved_state():
            # A managed save is Nova's "suspend"; reporting it as such keeps a
            # suspended guest from looking like one that shut down on its own.
            return power_state.SUSPENDED
        return _POWER_STATES.get(state, power_state.NOSTATE)

    def get_info(self) -> hardware.InstanceInfo:
        return hardware.InstanceInfo(state=self.get_power_state(), internal_id=self.uuid)

    def resources(self) -> tuple[int, int]:
        """(vcpus, memory in MiB) of the domain's definition."""
        _state, max_mem_kib, _mem, vcpus, _cpu_time = self._domain.info()
        return vcpus, max_mem_kib // 1024

    def xml(self) -> str:
        return self._domain.XMLDesc(0)

    def graphics_port(self, graphics_type: str = 'vnc') -> int | None:
        """The port the running guest's ``graphics_type`` server listens on; None when
        it has no such server, or it is not running (libvirt says -1 until QEMU has
        picked a port)."""
        from xml.etree import ElementTree
        graphics = ElementTree.fromstring(self.xml()).find(
            "devices/graphics[@type='%s']" % graphics_type)
        port = graphics.get('port') if graphics is not None else None
        if port is None or not port.isdigit():
            return None
        return int(port)

    def wait_for_state(self, wanted: tuple[int, ...], timeout: float,
                       interval: float = 0.1) -> bool:
        """Poll until the power state is one of ``wanted``; False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if self.get_power_state() in wanted:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval)

    def __repr__(self) -> str:
        return '<Guest %s>' % self.uuid

    def get_stats(self) -> dict:
        """Counters for diagnostics: ``info`` (libvirt's domain info tuple), ``vcpus``
        [(number, cpu time ns)], ``disks`` [(target, block stats tuple)] and ``nics``
        [(mac, interface stats tuple)]. A counter the hypervisor refuses is left out
        (the test driver lacks some)."""
        from xml.etree import ElementTree
        stats: dict = {'info': self._domain.info(), 'vcpus': [], 'disks': [], 'nics': []}
        try:
            stats['vcpus'] = [(v[0], v[2]) for v in self._domain.vcpus()[0]]
        except libvirt.libvirtError as exc:
            LOG.debug('No vCPU counters for %s: %s', self.uuid, exc)
        devices = ElementTree.fromstring(self.xml()).find('devices')
        for disk in devices.findall('disk') if devices is not None else []:
            target = disk.find('target')
            if target is None:
                continue
            try:
                stats['disks'].append((target.get('dev'),
                                       self._domain.blockStats(target.get('dev'))))
            except libvirt.libvirtError as exc:
                LOG.debug('No disk counters for %s: %s', self.uuid, exc)
        for nic in devices.findall('interface') if devices is not None else []:
            mac, target = nic.find('mac'), nic.find('target')
            counters = None
            if target is not None:
                try:
                    counters = self._domain.interfaceStats(target.get('dev'))
                except libvirt.libvirtError as exc:
                    LOG.debug('No interface counters for %s: %s', self.uuid, exc)
            stats['nics'].append((mac.get('address') if mac is not None else None,
                                  counters))
        return stats

    def inject_nmi(self) -> None:
        """Send a non-maskable interrupt (a guest set up for it dumps its kernel)."""
        self._domain.injectNMI(0)

    def set_user_password(self, user: str, password: str) -> None:
        """Set a guest user's password through the QEMU guest agent."""
        self._domain.setUserPassword(user, password, 0)

    def attach_device(self, xml: str, persistent: bool = True, live: bool = False) -> None:
        """Add the device ``xml`` to the domain's definition (``persistent``) and to the
        running domain (``live``)."""
        self._domain.attachDeviceFlags(xml, _affect(persistent, live))

    def detach_device(self, xml: str, persistent: bool = True, live: bool = False) -> None:
        """Remove the device ``xml`` from the definition and/or the running domain.
        A live detach asks the guest to release the device; libvirt returns once the
        request is made."""
        self._domain.detachDeviceFlags(xml, _affect(persistent, live))

    def has_interface(self, mac: str, persistent: bool = False) -> bool:
        """Whether the running domain (or its definition) has a NIC with ``mac``."""
        from xml.etree import ElementTree
        xml = self.persistent_xml() if persistent else self.xml()
        return any(el.get('address', '').lower() == mac.lower() for el in
                   ElementTree.fromstring(xml).findall('devices/interface/mac'))

    def persistent_xml(self) -> str:
        """The domain's definition, as it boots (not the live state of a running one)."""
        return self._domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)


def _affect(persistent: bool, live: bool) -> int:
    return ((libvirt.VIR_DOMAIN_AFFECT_CONFIG if persistent else 0) |
            (libvirt.VIR_DOMAIN_AFFECT_LIVE if live else 0))
