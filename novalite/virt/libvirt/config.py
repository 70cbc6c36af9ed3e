"""The libvirt domain XML of an instance, built from the instance and its flavor."""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from typing import Any

from oslo_utils import timeutils

from novalite import objects
from novalite.conf import CONF

# The namespace of novalite's <metadata> element (Nova writes the same shape under
# http://openstack.org/xmlns/libvirt/nova/1.1): who owns the guest, from which flavor.
NAMESPACE = 'http://novalite.org/xmlns/libvirt/novalite/1.0'
PREFIX = 'novalite'
VERSION = '0.1.0'

ET.register_namespace(PREFIX, NAMESPACE)


def _q(tag: str) -> str:
    return '{%s}%s' % (NAMESPACE, tag)


@dataclasses.dataclass
class NetworkSource:
    """Where a network disk lives (a Cinder RBD volume): QEMU opens it itself (librbd),
    with the monitors given here and the key of the libvirt secret ``secret_uuid``, so
    the host needs no ceph.conf, keyring or kernel client."""

    protocol: str
    name: str
    hosts: list[str] = dataclasses.field(default_factory=list)
    ports: list[str] = dataclasses.field(default_factory=list)
    auth_username: str | None = None
    secret_type: str | None = None
    secret_uuid: str | None = None


@dataclasses.dataclass
class GuestDisk:
    """A disk of the domain: a file of the instance directory (``path``), or a volume
    (``network`` set, ``path`` empty). ``serial`` is what the guest reads as the disk's
    serial number (a volume's id); ``alias`` a user alias (``ua-...``) that libvirt's
    device events name the disk by."""

    path: str
    format: str
    target_dev: str
    bus: str = 'virtio'
    network: NetworkSource | None = None
    device: str = 'disk'
    serial: str | None = None
    cache: str | None = None
    discard: str | None = None
    readonly: bool = False
    alias: str | None = None


@dataclasses.dataclass
class GuestInterface:
    """A NIC on a tap device that the compute host made and plugged (see ``vif.py``):
    libvirt opens the tap and hands it to QEMU, and leaves creating, configuring and
    deleting it to the host (``managed='no'``). Without ``checksum_offload`` the guest
    fills in its packets' checksums itself (QEMU's virtio-net ``csum=off``)."""

    mac: str
    target_dev: str
    model: str = 'virtio'
    mtu: int | None = None
    checksum_offload: bool = True


@dataclasses.dataclass
class GuestGraphics:
    """A VNC server of the guest's screen, on ``listen``, at a port libvirt picks
    when the guest starts (``autoport``); the live domain XML names the port."""

    listen: str
    type: str = 'vnc'


@dataclasses.dataclass
class TcpSerial:
    """The first serial port (the guest's console) listening on TCP at ``host``:``port``
    for the serial console proxy; what the guest writes there is also kept in
    ``log_file`` (libvirt's virtlogd), which the console log is read from."""

    host: str
    port: int
    log_file: str | None = None


@dataclasses.dataclass
class GuestMetadata:
    """What <metadata> says about the guest."""

    display_name: str
    flavor: dict[str, Any]
    user_id: str | None
    project_id: str | None
    image_id: str | None
    creation_time: str = ''

    def to_element(self) -> ET.Element:
        root = ET.Element(_q('instance'))
        ET.SubElement(root, _q('package'), version=VERSION)
        ET.SubElement(root, _q('name')).text = self.display_name
        ET.SubElement(root, _q('creationTime')).text = self.creation_time
        flavor = ET.SubElement(root, _q('flavor'), name=str(self.flavor.get('name', '')))
        for key in ('memory', 'disk', 'swap', 'ephemeral', 'vcpus'):
            ET.SubElement(flavor, _q(key)).text = str(self.flavor.get(key, 0))
        owner = ET.SubElement(root, _q('owner'))
        ET.SubElement(owner, _q('user'), uuid=self.user_id or '')
        ET.SubElement(owner, _q('project'), uuid=self.project_id or '')
        if self.image_id:
            ET.SubElement(root, _q('root'), type='image', uuid=self.image_id)
        return root


@dataclasses.dataclass
class GuestConfig:
    """One libvirt domain; ``to_xml()`` gives what ``defineXML`` takes."""

    virt_type: str
    name: str
    uuid: str
    memory_kib: int
    vcpus: int
    metadata: GuestMetadata
    disks: list[GuestDisk] = dataclasses.field(default_factory=list)
    interfaces: list[GuestInterface] = dataclasses.field(default_factory=list)
    console_log: str | None = None
    kernel: str | None = None
    initrd: str | None = None
    cmdline: str | None = None
    graphics: GuestGraphics | None = None
    video_model: str | None = None
    serial: TcpSerial | None = None
    # QEMU's machine type (<type machine=...>); None leaves it to the emulator.
    machine_type: str | None = None

    def to_xml(self) -> str:
        domain = ET.Element('domain', type=self.virt_type)
        ET.SubElement(domain, 'name').text = self.name
        ET.SubElement(domain, 'uuid').text = self.uuid
        ET.SubElement(domain, 'metadata').append(self.metadata.to_element())
        ET.SubElement(domain, 'memory', unit='KiB').text = str(self.memory_kib)
        ET.SubElement(domain, 'vcpu').text = str(self.vcpus)
        domain.append(self._os())
        features = ET.SubElement(domain, 'features')
        # Without ACPI a guest cannot be shut down cleanly (soft reboot, power off).
        ET.SubElement(features, 'acpi')
        ET.SubElement(features, 'apic')
        ET.SubElement(domain, 'clock', offset='utc')
        for event, action in (('on_poweroff', 'destroy'), ('on_reboot', 'restart'),
                              ('on_crash', 'destroy')):
            ET.SubElement(domain, event).text = action
        devices = ET.SubElement(domain, 'devices')
        for disk in self.disks:
            devices.append(self._disk(disk))
        for interface in self.interfaces:
            devices.append(self._interface(interface))
        if self.serial is not None:
            devices.append(self._tcp_serial(self.serial))
        elif self.console_log:
            serial = ET.SubElement(devices, 'serial', type='file')
            # Appended to, not truncated, each time QEMU starts: after a reboot or a
            # stop and start, the log still shows the boots before it.
            ET.SubElement(serial, 'source', path=self.console_log, append='on')
            ET.SubElement(serial, 'target', port='0')
        if self.graphics is not None:
            ET.SubElement(devices, 'graphics', type=self.graphics.type, autoport='yes',
                          listen=self.graphics.listen)
        if self.video_model:
            video = ET.SubElement(devices, 'video')
            ET.SubElement(video, 'model', type=self.video_model)
        ET.indent(domain)
        return ET.tostring(domain, encoding='unicode')

    def _os(self) -> ET.Element:
        os_el = ET.Element('os')
        os_type = ET.SubElement(os_el, 'type')
        os_type.text = 'hvm'
        if self.machine_type:
            os_type.set('machine', self.machine_type)
        if self.kernel:
            ET.SubElement(os_el, 'kernel').text = self.kernel
            if self.initrd:
                ET.SubElement(os_el, 'initrd').text = self.initrd
            if self.cmdline:
                ET.SubElement(os_el, 'cmdline').text = self.cmdline
        else:
            ET.SubElement(os_el, 'boot', dev='hd')
        return os_el

    @staticmethod
    def _tcp_serial(serial: TcpSerial) -> ET.Element:
        element = ET.Element('serial', type='tcp')
        # QEMU listens (bind) and does not wait for a client before the guest runs.
        ET.SubElement(element, 'source', mode='bind', host=serial.host,
                      service=str(serial.port))
        ET.SubElement(element, 'protocol', type='raw')
        if serial.log_file:
            ET.SubElement(element, 'log', file=serial.log_file, append='on')
        ET.SubElement(element, 'target', port='0')
        return element

    @staticmethod
    def _disk(disk: GuestDisk) -> ET.Element:
        source = disk.network
        element = ET.Element('disk', type='file' if source is None else 'network',
                             device=disk.device)
        driver = ET.SubElement(element, 'driver', name='qemu', type=disk.format)
        if disk.cache:
            driver.set('cache', disk.cache)
        if disk.discard:
            driver.set('discard', disk.discard)
        if source is None:
            ET.SubElement(element, 'source', file=disk.path)
        else:
            net = ET.SubElement(element, 'source', protocol=source.protocol,
                                name=source.name)
            for i, host in enumerate(source.hosts):
                port = source.ports[i] if i < len(source.ports) else None
                attrs = {'name': host} if port is None else {'name': host, 'port': str(port)}
                ET.SubElement(net, 'host', attrs)
            if source.auth_username:
                auth = ET.SubElement(element, 'auth', username=source.auth_username)
                if source.secret_uuid:
                    ET.SubElement(auth, 'secret', type=source.secret_type or 'ceph',
                                  uuid=source.secret_uuid)
        ET.SubElement(element, 'target', dev=disk.target_dev, bus=disk.bus)
        if disk.readonly:
            ET.SubElement(element, 'readonly')
        if disk.serial:
            ET.SubElement(element, 'serial').text = disk.serial
        if disk.alias:
            ET.SubElement(element, 'alias', name=disk.alias)
        return element

    @staticmethod
    def _interface(interface: GuestInterface) -> ET.Element:
        element = ET.Element('interface', type='ethernet')
        ET.SubElement(element, 'mac', address=interface.mac)
        ET.SubElement(element, 'target', dev=interface.target_dev, managed='no')
        ET.SubElement(element, 'model', type=interface.model)
        if not interface.checksum_offload:
            driver = ET.SubElement(element, 'driver', name='qemu')
            ET.SubElement(driver, 'host', csum='off')
        if interface.mtu:
            ET.SubElement(element, 'mtu', size=str(interface.mtu))
        return element


def interface_xml(interface: GuestInterface) -> str:
    """The ``<interface>`` element alone, as ``attachDeviceFlags`` and
    ``detachDeviceFlags`` take it (the same NIC the domain XML has)."""
    return ET.tostring(GuestConfig._interface(interface), encoding='unicode')


def disk_xml(disk: GuestDisk) -> str:
    """The ``<disk>`` element alone, as ``attachDeviceFlags`` takes it (the same disk
    the domain XML has)."""
    return ET.tostring(GuestConfig._disk(disk), encoding='unicode')


def guest_config(instance: objects.Instance, virt_type: str, disks: list[GuestDisk],
                 console_log: str | None, image_meta: objects.ImageMeta | None = None,
                 kernel: str | None = None, initrd: str | None = None,
                 interfaces: list[GuestInterface] | None = None,
                 serial_port: tuple[str, int] | None = None,
                 machine_type: str | None = None) -> GuestConfig:
    """The domain of ``instance``: named ``instance.name``, sized by its flavor, of
    QEMU machine type ``machine_type`` (the emulator's default when None), with
    a NIC per plugged VIF in ``interfaces``, a VNC server and its video card when
    ``[vnc] enabled``, and its console on the serial port: listening on TCP at
    ``serial_port`` (address, port) when given, its output kept in ``console_log``
    either way."""
    flavor = instance.flavor
    properties = (getattr(image_meta, 'properties', None) or {}) if image_meta else {}
    cmdline = None
    if kernel:
        cmdline = properties.get('os_command_line') or 'root=/dev/vda console=ttyS0'
    metadata = GuestMetadata(
        display_name=instance.display_name or '',
        flavor={'name': flavor.name, 'memory': flavor.memory_mb, 'disk': flavor.root_gb,
                'swap': flavor.swap, 'ephemeral': flavor.ephemeral_gb,
                'vcpus': flavor.vcpus},
        user_id=instance.user_id, project_id=instance.project_id,
        image_id=instance.image_ref or None,
        creation_time=timeutils.utcnow().strftime('%Y-%m-%d %H:%M:%S'))
    graphics, video_model = _display(properties)
    return GuestConfig(virt_type=virt_type, name=instance.name, uuid=instance.uuid,
                       memory_kib=flavor.memory_mb * 1024, vcpus=flavor.vcpus,
                       metadata=metadata, disks=disks, interfaces=interfaces or [],
                       console_log=console_log,
                       kernel=kernel, initrd=initrd, cmdline=cmdline,
                       serial=(TcpSerial(serial_port[0], serial_port[1], console_log)
                               if serial_port else None),
                       graphics=graphics, video_model=video_model,
                       machine_type=machine_type)


def _display(properties: dict[str, Any]) -> tuple[GuestGraphics | None, str | None]:
    """The VNC server and video card, as Nova adds them: none when ``[vnc]`` is off;
    the image's ``hw_video_model``, else ``virtio`` (which guests without its driver
    use as a VGA card)."""
    if not CONF.vnc.enabled:
        return None, None
    return (GuestGraphics(listen=CONF.vnc.server_listen),
            properties.get('hw_video_model') or 'virtio')


def metadata_of(xml: str) -> dict[str, str | None]:
    """Parse a domain's novalite metadata back (empty when the domain is not ours)."""
    domain = ET.fromstring(xml)
    element = domain.find('metadata/' + _q('instance'))
    if element is None:
        return {}
    flavor = element.find(_q('flavor'))
    project = element.find(_q('owner') + '/' + _q('project'))
    user = element.find(_q('owner') + '/' + _q('user'))
    return {
        'name': element.findtext(_q('name')),
        'flavor': flavor.get('name') if flavor is not None else None,
        'project_id': project.get('uuid') if project is not None else None,
        'user_id': user.get('uuid') if user is not None else None,
    }
