"""The network info of an instance: Nova's network model, as plain JSON-able dicts.

An instance's network info is a list of VIFs, one per port, in the layout Nova keeps in
``instance_info_caches.network_info`` (so a cache written by one reads the same in the
other)::

    {"id": <port id>, "address": <MAC>, "type": "ovs", "devname": "tap<port id[:11]>",
     "ovs_interfaceid": <port id>, "vnic_type": "normal", "active": true,
     "details": <the port's binding:vif_details>, "profile": <binding:profile>,
     "preserve_on_delete": <the user passed the port in>, "tag": <device tag or null>,
     "network": {"id": <network id>, "label": <network name>, "bridge": "br-int",
                 "meta": {"mtu": 1442, "tenant_id": ..., "tunneled": true},
                 "subnets": [{"cidr": "10.0.0.0/24", "version": 4,
                              "gateway": {"address": "10.0.0.1", "type": "gateway",
                                          "version": 4},
                              "dns": [{"address": ..., "type": "dns", "version": 4}],
                              "ips": [{"address": "10.0.0.5", "type": "fixed",
                                       "version": 4, "floating_ips": [
                                           {"address": ..., "type": "floating",
                                            "version": 4}]}],
                              "routes": []}]}}
"""
from __future__ import annotations

from typing import Any, TypedDict

# A tap's name: "tap" and the start of the port id, within the kernel's 14 characters.
NIC_NAME_LEN = 14

VIF_TYPE_OVS = 'ovs'
VIF_TYPE_UNBOUND = 'unbound'
VIF_TYPE_BINDING_FAILED = 'binding_failed'


class IP(TypedDict, total=False):
    address: str
    type: str          # fixed, floating, gateway, dns
    version: int
    floating_ips: list[IP]


class Subnet(TypedDict, total=False):
    cidr: str
    version: int
    gateway: IP | None
    dns: list[IP]
    ips: list[IP]
    routes: list[dict[str, Any]]


class Network(TypedDict, total=False):
    id: str
    label: str
    bridge: str | None
    subnets: list[Subnet]
    meta: dict[str, Any]


class VIF(TypedDict, total=False):
    id: str
    address: str
    type: str
    devname: str
    ovs_interfaceid: str | None
    vnic_type: str
    active: bool
    details: dict[str, Any]
    profile: dict[str, Any]
    preserve_on_delete: bool
    tag: str | None
    network: Network
    # novalite's: the port's security groups as last seen ({'id', 'name'}), so a server
    # view names them without asking Neutron (Nova asks on every GET).
    security_groups: list[dict[str, str]]


NetworkInfo = list[VIF]


def devname(port_id: str) -> str:
    """The tap device name of a port (Nova's: ``tap`` + the first 11 characters)."""
    return ('tap' + port_id)[:NIC_NAME_LEN]


def fixed_ips(vif: VIF) -> list[IP]:
    """The fixed IPs of a VIF, subnet by subnet."""
    return [ip for subnet in vif.get('network', {}).get('subnets', [])
            for ip in subnet.get('ips', [])]


def floating_ips(vif: VIF) -> list[IP]:
    return [fip for ip in fixed_ips(vif) for fip in ip.get('floating_ips', [])]


def addresses(network_info: NetworkInfo) -> dict[str, list[dict[str, Any]]]:
    """The ``addresses`` of a server view: by network label, each fixed IP then its
    floating IPs, with their type and the port's MAC (Nova's extended IP attributes)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for vif in network_info:
        label = vif.get('network', {}).get('label') or vif.get('network', {}).get('id', '')
        entries = out.setdefault(label, [])
        for ip in fixed_ips(vif):
            for address in (ip, *ip.get('floating_ips', [])):
                entries.append({'version': address.get('version', 4),
                                'addr': address['address'],
                                'OS-EXT-IPS:type': address.get('type', 'fixed'),
                                'OS-EXT-IPS-MAC:mac_addr': vif.get('address')})
    return out


def security_group_names(network_info: NetworkInfo) -> list[dict[str, str]] | None:
    """``[{'name': ...}]`` of each port's groups in port order (a group on two ports
    twice, as Nova shows them); None when a VIF does not carry its groups."""
    if any('security_groups' not in vif for vif in network_info):
        return None
    return [{'name': group['name'] or group['id']} for vif in network_info
            for group in vif['security_groups']]


def port_ids(network_info: NetworkInfo) -> list[str]:
    return [vif['id'] for vif in network_info]


def find(network_info: NetworkInfo, port_id: str) -> VIF | None:
    for vif in network_info:
        if vif['id'] == port_id:
            return vif
    return None
