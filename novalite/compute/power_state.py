"""Power states as the hypervisor reports them (stored in ``instances.power_state``)."""

NOSTATE = 0x00
RUNNING = 0x01
PAUSED = 0x03
SHUTDOWN = 0x04
CRASHED = 0x06
SUSPENDED = 0x07

STATE_MAP = {NOSTATE: 'pending', RUNNING: 'running', PAUSED: 'paused', SHUTDOWN: 'shutdown',
             CRASHED: 'crashed', SUSPENDED: 'suspended'}
