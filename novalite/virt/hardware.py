"""What the hypervisor reports about an instance (``InstanceInfo``), and about its host."""
from __future__ import annotations

import dataclasses
import subprocess

from novalite.compute import power_state


@dataclasses.dataclass
class InstanceInfo:
    state: int = power_state.NOSTATE
    internal_id: str | None = None


def host_uptime() -> str:
    """This machine's ``uptime`` line ("HH:MM:SS up D days, HH:MM, N users, load
    average: a, b, c"), as Nova's drivers return it: by running ``uptime``."""
    result = subprocess.run(['uptime'], capture_output=True, text=True,
                            env={'LANG': 'C', 'PATH': '/usr/bin:/bin'}, timeout=10, check=True)
    return result.stdout.rstrip('\n')
