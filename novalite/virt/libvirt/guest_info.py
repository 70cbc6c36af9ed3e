"""What the libvirt driver tells about a running guest: its diagnostics."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_utils import timeutils

from novalite import objects
from novalite.compute import power_state
from novalite.virt import diagnostics

if TYPE_CHECKING:
    from novalite.virt.libvirt.driver import LibvirtDriver

_NIC_COUNTERS = ('rx_octets', 'rx_packets', 'rx_errors', 'rx_drop',
                 'tx_octets', 'tx_packets', 'tx_errors', 'tx_drop')


def diagnostics_of(drv: LibvirtDriver, instance: objects.Instance) -> dict[str, Any]:
    """Diagnostics from the domain's info and its vCPU, disk and NIC counters."""
    guest = drv.host.get_guest(instance.uuid)
    stats = guest.get_stats()
    _state, max_mem_kib, mem_kib, _vcpus, _cpu_time = stats['info']
    uptime = None
    if instance.launched_at is not None:
        uptime = int((timeutils.utcnow(with_timezone=True)
                      - instance.launched_at).total_seconds())
    diags = diagnostics.new(
        state=power_state.STATE_MAP.get(guest.get_power_state(), 'pending'),
        driver='libvirt', hypervisor=drv.virt_type, hypervisor_os='linux',
        uptime=uptime, config_drive=bool(instance.config_drive),
        memory_maximum_mb=max_mem_kib // 1024, memory_used_mb=mem_kib // 1024)
    for number, cpu_time in stats['vcpus']:
        diagnostics.add_cpu(diags, id=number, time=cpu_time)
    for _target, (rd_req, rd_bytes, wr_req, wr_bytes, errors) in stats['disks']:
        diagnostics.add_disk(diags, read_bytes=rd_bytes, read_requests=rd_req,
                             write_bytes=wr_bytes, write_requests=wr_req,
                             errors_count=errors)
    for mac, counters in stats['nics']:
        values: dict[str, Any] = {'mac_address': mac}
        if counters is not None:
            values.update(zip(_NIC_COUNTERS, counters, strict=False))
        diagnostics.add_nic(diags, **values)
    return diags
