"""VIFs of libvirt guests: Neutron ports plugged into Open vSwitch with os-vif.

A port bound to this host by ML2/OVN arrives in the network info as a VIF of type
``ovs`` whose ``details`` name the bridge (``br-int``), its datapath (``netdev``, OVS's
userspace datapath here) and ``ovs_create_tap: true``: the compute host makes the tap.
The flow, as in Nova (``nova/network/os_vif_util.py`` and the libvirt driver's VIF
code):

1. :func:`os_vif_vif` turns the VIF into os-vif objects: a ``VIFOpenVSwitch`` named
   after the tap (``devname``), on an os-vif ``Network`` with the bridge and the MTU, and
   a ``VIFPortProfileOpenVSwitch`` with the port id as ``interface_id``, the datapath
   type, ``create_port`` and ``create_tap``.
2. :func:`plug` hands them to ``os_vif.plug``. os-vif 5.3's OVS plugin then does the
   whole plug: it makes sure the bridge exists with that datapath type, adds the port
   with ``external_ids`` ``iface-id`` (the port id, which ovn-controller claims),
   ``attached-mac``, ``vm-uuid`` and ``iface-status=active``, creates the tap (a
   persistent ``tuntap`` device), turns IPv6 off on it, sets its MAC to the port's and
   brings it up, and sets its MTU. Plugging again changes nothing that is in place.
   novalite adds nothing to that; it only checks the binding first.
3. :func:`guest_interface` gives the NIC of the domain XML: ``<interface
   type='ethernet'>`` on that tap with ``managed='no'``, so libvirt opens the tap for
   QEMU and leaves it, and the OVS port, alone. On OVS's userspace datapath (``netdev``)
   the guest's checksum offload is off (``<driver><host csum='off'/>``): libvirt opens
   a virtio NIC's tap with a virtio-net header, so a guest leaves its TCP and UDP
   checksums to the host; the kernel would complete them on its way, but OVS's
   userspace datapath reads the tap as raw frames and sends them on unfinished, and
   every receiver drops them (ping and DHCP, whose checksums the guest's software
   makes, still work).
4. :func:`unplug` (``os_vif.unplug``) deletes the OVS port and the tap; either may be
   gone already.

``create_port`` and ``create_tap`` are always set: the domain's NIC is always an
unmanaged tap, so no one else would create them (Nova lets libvirt add the port through
``<virtualport type='openvswitch'>`` when Neutron does not ask for the tap).

Configuration: ``os_vif.initialize()`` (called once, on the first plug or unplug)
registers the OVS plugin's options in the ``[os_vif_ovs]`` group of the process-global
``CONF``, which novalite's config files were parsed into, so ``novalite.conf`` sets them
like any other group: ``ovsdb_connection`` (``tcp:127.0.0.1:6640`` by default; a host
with a private ovsdb-server uses ``unix:/abs/path/db.sock``) and ``ovs_vsctl_timeout``.
They are read once, at that initialization.

Privileges: os-vif creates and deletes taps through oslo.privsep entrypoints (context
``vif_plug_ovs.privsep.vif_plug``). When novalite-compute runs as root, as it does in
the tests and on hosts where it drives libvirt and OVS directly, those functions run in
the compute process itself (privsep's in-process mode): it has every capability
already, and a second, privileged process would only add a daemon to start and to lose.
Otherwise oslo.privsep starts its daemon on the first call, as in Nova: ``sudo
privsep-helper ...`` or the command set in ``[vif_plug_ovs_privileged] helper_command``
(e.g. ``sudo /opt/novalite/.venv/bin/privsep-helper``).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Protocol

import os_vif
from os_vif import exception as osv_exception
from os_vif.objects import fixed_ip as osv_fixed_ip
from os_vif.objects import instance_info as osv_instance_info
from os_vif.objects import network as osv_network
from os_vif.objects import route as osv_route
from os_vif.objects import subnet as osv_subnet
from os_vif.objects import vif as osv_vif
from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF
from novalite.network import model
from novalite.virt.libvirt import config

LOG = logging.getLogger(__name__)

# The os-vif plugin that plugs VIFOpenVSwitch objects.
OVS_PLUGIN = 'ovs'
# Keys of a port binding's vif_details (Neutron's portbindings names).
DETAIL_DATAPATH_TYPE = 'datapath_type'
DETAIL_BRIDGE_NAME = 'bridge_name'
DETAIL_HYBRID_PLUG = 'ovs_hybrid_plug'
VNIC_TYPE_NORMAL = 'normal'
# OVS's userspace datapath (a binding's vif_details datapath_type).
DATAPATH_NETDEV = 'netdev'

_init_lock = threading.Lock()
_initialized = False


class Instance(Protocol):
    """What plugging needs of an instance (``objects.Instance`` has it)."""

    @property
    def uuid(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def project_id(self) -> str | None: ...


class Plugger(Protocol):
    """What the libvirt driver plugs VIFs with: this module, or a test double."""

    def plug(self, instance: Instance, vif: model.VIF) -> None: ...

    def unplug(self, instance: Instance, vif: model.VIF) -> None: ...


def initialize() -> None:
    """Load os-vif's plugins (registering ``[os_vif_ovs]``) and choose how privileged
    calls run; only the first call does anything."""
    global _initialized
    with _init_lock:
        if _initialized:
            return
        os_vif.initialize()
        if os.geteuid() == 0:
            from vif_plug_ovs import privsep
            privsep.vif_plug.set_client_mode(False)
        LOG.info('os-vif initialized; OVS database at %s, privileged calls %s',
                 CONF.os_vif_ovs.ovsdb_connection,
                 'in-process' if os.geteuid() == 0 else 'through privsep-helper')
        _initialized = True


# -- checks ---------------------------------------------------------------------------

def check_plugable(vif: model.VIF) -> None:
    """:raises VirtualInterfaceCreateException: the port is not bound to this host
        (``binding_failed``, ``unbound``), or bound in a way novalite cannot plug"""
    vif_type = vif.get('type')
    if vif_type in (model.VIF_TYPE_BINDING_FAILED, model.VIF_TYPE_UNBOUND):
        raise exception.VirtualInterfaceCreateException(
            reason='port %s has binding:vif_type %s; its binding to this host failed'
                   % (vif['id'], vif_type))
    if vif_type != model.VIF_TYPE_OVS:
        raise exception.VirtualInterfaceCreateException(
            reason='port %s has binding:vif_type %s; the libvirt driver plugs only ovs'
                   % (vif['id'], vif_type))
    vnic_type = vif.get('vnic_type') or VNIC_TYPE_NORMAL
    if vnic_type != VNIC_TYPE_NORMAL:
        raise exception.VirtualInterfaceCreateException(
            reason='port %s has vnic_type %s; only normal is supported'
                   % (vif['id'], vnic_type))
    if vif.get('details', {}).get(DETAIL_HYBRID_PLUG):
        raise exception.VirtualInterfaceCreateException(
            reason='port %s asks for hybrid plugging (a Linux bridge per port), which '
                   'novalite does not do' % vif['id'])


def is_bound(vif: model.VIF) -> bool:
    return vif.get('type') not in (model.VIF_TYPE_BINDING_FAILED, model.VIF_TYPE_UNBOUND)


# -- novalite (Nova) network model → os-vif objects ------------------------------------

def devname(vif: model.VIF) -> str:
    """The tap of ``vif``: the name Neutron gave it, else Nova's rule."""
    return vif.get('devname') or model.devname(vif['id'])


def mtu(vif: model.VIF) -> int | None:
    value = vif.get('network', {}).get('meta', {}).get('mtu')
    return int(value) if value else None


def bridge(vif: model.VIF) -> str:
    return (vif.get('network', {}).get('bridge')
            or vif.get('details', {}).get(DETAIL_BRIDGE_NAME)
            or CONF.neutron.ovs_bridge)


def os_vif_instance(instance: Instance) -> osv_instance_info.InstanceInfo:
    return osv_instance_info.InstanceInfo(uuid=instance.uuid, name=instance.name,
                                          project_id=instance.project_id)


def _os_vif_fixed_ip(ip: model.IP) -> osv_fixed_ip.FixedIP:
    floating = [fip['address'] for fip in ip.get('floating_ips', [])]
    return osv_fixed_ip.FixedIP(address=ip['address'], floating_ips=floating)


def _os_vif_route(route: dict[str, Any]) -> osv_route.Route:
    obj = osv_route.Route(cidr=route['cidr'])
    gateway = route.get('gateway') or {}
    if gateway.get('address'):
        obj.gateway = gateway['address']
    return obj


def _os_vif_subnet(subnet: model.Subnet) -> osv_subnet.Subnet:
    obj = osv_subnet.Subnet(
        cidr=subnet['cidr'],
        dns=[dns['address'] for dns in subnet.get('dns', [])],
        ips=osv_fixed_ip.FixedIPList(
            objects=[_os_vif_fixed_ip(ip) for ip in subnet.get('ips', [])]),
        routes=osv_route.RouteList(
            objects=[_os_vif_route(route) for route in subnet.get('routes', [])]))
    gateway = subnet.get('gateway')
    if gateway and gateway.get('address'):
        obj.gateway = gateway['address']
    return obj


def os_vif_network(vif: model.VIF) -> osv_network.Network:
    network = vif.get('network', {})
    obj = osv_network.Network(
        id=network['id'], bridge=bridge(vif),
        subnets=osv_subnet.SubnetList(
            objects=[_os_vif_subnet(s) for s in network.get('subnets', [])]),
        mtu=mtu(vif))
    if network.get('label'):
        obj.label = network['label']
    return obj


def os_vif_vif(vif: model.VIF) -> osv_vif.VIFOpenVSwitch:
    """The os-vif object of an ``ovs`` VIF (see the module docstring).

    :raises VirtualInterfaceCreateException: see :func:`check_plugable`
    """
    check_plugable(vif)
    profile = osv_vif.VIFPortProfileOpenVSwitch(
        interface_id=vif.get('ovs_interfaceid') or vif['id'],
        datapath_type=vif.get('details', {}).get(DETAIL_DATAPATH_TYPE),
        create_port=True, create_tap=True)
    return osv_vif.VIFOpenVSwitch(
        id=vif['id'], address=vif['address'], network=os_vif_network(vif),
        plugin=OVS_PLUGIN, active=vif.get('active', True),
        preserve_on_delete=vif.get('preserve_on_delete', False),
        has_traffic_filtering=vif.get('details', {}).get('port_filter', False),
        port_profile=profile, vif_name=devname(vif), bridge_name=bridge(vif))


# -- plugging ---------------------------------------------------------------------------

def plug(instance: Instance, vif: model.VIF) -> None:
    """Create the tap of ``vif`` and add it to its bridge (again: nothing changes).

    :raises VirtualInterfaceCreateException: the VIF cannot be plugged
    """
    obj = os_vif_vif(vif)
    initialize()
    try:
        os_vif.plug(obj, os_vif_instance(instance))
    except osv_exception.ExceptionBase as exc:
        raise exception.VirtualInterfaceCreateException(
            reason='os-vif could not plug port %s (%s) of instance %s: %s'
                   % (vif['id'], obj.vif_name, instance.uuid, exc)) from exc


def unplug(instance: Instance, vif: model.VIF) -> None:
    """Remove the OVS port and the tap of ``vif``; either may be gone already. A VIF
    that was never bound has nothing to unplug.

    :raises NovaliteException: os-vif failed (e.g. the OVS database is unreachable)
    """
    if not is_bound(vif):
        LOG.debug('VIF %s of %s is %s: nothing to unplug', vif['id'], instance.uuid,
                  vif.get('type'))
        return
    obj = os_vif_vif(vif)
    initialize()
    try:
        os_vif.unplug(obj, os_vif_instance(instance))
    except osv_exception.ExceptionBase as exc:
        raise exception.NovaliteException(
            'os-vif could not unplug port %s (%s) of instance %s: %s'
            % (vif['id'], obj.vif_name, instance.uuid, exc)) from exc


# -- the guest's NIC ----------------------------------------------------------------

def guest_interface(vif: model.VIF) -> config.GuestInterface:
    """The domain's NIC on the tap :func:`plug` made: virtio, the port's MAC, the
    network's MTU when Neutron gives one (so the guest does not need DHCP to learn it),
    and no checksum offload on the userspace datapath (see the module docstring).

    :raises VirtualInterfaceCreateException: see :func:`check_plugable`
    """
    check_plugable(vif)
    datapath = vif.get('details', {}).get(DETAIL_DATAPATH_TYPE)
    return config.GuestInterface(mac=vif['address'], target_dev=devname(vif), mtu=mtu(vif),
                                 checksum_offload=datapath != DATAPATH_NETDEV)


def guest_interfaces(network_info: model.NetworkInfo | None) -> list[config.GuestInterface]:
    return [guest_interface(vif) for vif in network_info or []]
