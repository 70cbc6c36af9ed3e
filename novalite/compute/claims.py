"""A resource claim on one compute node: a test against free resources, then usage."""
from __future__ import annotations

import dataclasses

from novalite import exception, objects
from novalite.virt import driver as virt_driver


@dataclasses.dataclass(frozen=True)
class Usage:
    vcpus: int
    memory_mb: int
    disk_gb: int

    @classmethod
    def of_flavor(cls, flavor: objects.Flavor, volume_backed: bool = False) -> Usage:
        """What an instance of ``flavor`` uses here; a volume-backed one (its root disk
        a volume of the Block Storage service) takes no root disk from the host."""
        swap_gb = (flavor.swap + 1023) // 1024 if flavor.swap else 0
        return cls(flavor.vcpus, flavor.memory_mb,
                   (0 if volume_backed else flavor.root_gb) + flavor.ephemeral_gb + swap_gb)

    @classmethod
    def of_instance(cls, instance: objects.Instance) -> Usage:
        # A volume-backed server has no image of its own (Nova's shortcut too).
        return cls.of_flavor(instance.flavor, volume_backed=not instance.image_ref)


def test_claim(node: objects.ComputeNode, used: Usage, wanted: Usage) -> None:
    """Raise ``ComputeResourcesUnavailable`` when ``wanted`` does not fit on ``node``
    beside ``used``, with the same ratios and reservations reported to Placement."""
    from novalite.conf import CONF
    checks = (
        ('vcpus', node.vcpus * virt_driver.allocation_ratio('cpu', node.cpu_allocation_ratio)
         - CONF.reserved_host_cpus, used.vcpus, wanted.vcpus, 'VCPU'),
        ('memory_mb', node.memory_mb * virt_driver.allocation_ratio(
            'ram', node.ram_allocation_ratio) - CONF.reserved_host_memory_mb,
         used.memory_mb, wanted.memory_mb, 'MB of memory'),
        ('disk_gb', node.local_gb * virt_driver.allocation_ratio(
            'disk', node.disk_allocation_ratio), used.disk_gb, wanted.disk_gb, 'GB of disk'),
    )
    for _name, limit, in_use, asked, unit in checks:
        if asked and in_use + asked > limit:
            raise exception.ComputeResourcesUnavailable(
                reason='requested %d %s, %d free on %s' % (asked, unit, max(limit - in_use, 0),
                                                           node.hypervisor_hostname))
