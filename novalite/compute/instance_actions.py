"""Names of the actions recorded in ``instance_actions`` (shown by os-instance-actions)."""

CREATE = 'create'
DELETE = 'delete'
REBOOT = 'reboot'
STOP = 'stop'
START = 'start'
