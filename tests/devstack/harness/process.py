"""Child processes of the devstack-style stack: the daemons' command lines, taken from
their systemd units (``novalite.allinone.process`` runs them)."""
from __future__ import annotations

import os
import shlex

from novalite.allinone.process import Process, child_env, group_alive, kill_group

__all__ = ['Process', 'child_env', 'group_alive', 'kill_group', 'unit_command',
           'unit_restart_delay']

# What the unit files in etc/systemd/ say, and what the harness puts in their place.
UNIT_BIN_DIR = '/opt/novalite/.venv/bin/'
UNIT_CONFIG_FILE = '/etc/novalite/novalite.conf'


def unit_command(unit_file: str, bin_dir: str, config_file: str) -> list[str]:
    """The ``ExecStart`` command of a systemd unit, aimed at this venv and config file.

    :raises ValueError: the unit has no ExecStart, or it no longer names the paths the
        harness replaces (so a changed unit file cannot go untested silently)
    """
    with open(unit_file) as unit:
        lines = [line.strip() for line in unit]
    starts = [line.split('=', 1)[1] for line in lines if line.startswith('ExecStart=')]
    if len(starts) != 1:
        raise ValueError('%s: expected one ExecStart line, found %d' % (unit_file, len(starts)))
    argv = shlex.split(starts[0])
    if not argv[0].startswith(UNIT_BIN_DIR) or UNIT_CONFIG_FILE not in argv:
        raise ValueError('%s: ExecStart %r does not run %s* with %s'
                         % (unit_file, starts[0], UNIT_BIN_DIR, UNIT_CONFIG_FILE))
    argv[0] = os.path.join(bin_dir, argv[0][len(UNIT_BIN_DIR):])
    return [config_file if arg == UNIT_CONFIG_FILE else arg for arg in argv]


def _unit_settings(unit_file: str) -> dict[str, str]:
    """The ``key=value`` lines of a unit file (the last one of a key wins)."""
    with open(unit_file) as unit:
        pairs = [line.strip().split('=', 1) for line in unit
                 if '=' in line and not line.lstrip().startswith(('#', ';'))]
    return {key.strip(): value.strip() for key, value in pairs}


def unit_restart_delay(unit_file: str) -> float:
    """Seconds after which systemd starts a unit's daemon again when it was killed.

    :raises ValueError: the unit does not restart a daemon killed by a signal
        (``Restart=`` neither ``on-failure``, ``on-abnormal`` nor ``always``), so a
        test that counts on it cannot pass silently
    """
    settings = _unit_settings(unit_file)
    restart = settings.get('Restart', 'no')
    if restart not in ('on-failure', 'on-abnormal', 'always'):
        raise ValueError('%s: Restart=%s does not restart a killed daemon'
                         % (unit_file, restart))
    # systemd's default RestartSec is 100 ms; the units name seconds ("2", "2s").
    value = settings.get('RestartSec', '100ms')
    if value.endswith('ms'):
        return float(value[:-2]) / 1000
    return float(value.rstrip('s'))
