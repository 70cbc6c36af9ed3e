"""The transient states of an instance (``task_state``): what is being done to it."""

SCHEDULING = 'scheduling'
BLOCK_DEVICE_MAPPING = 'block_device_mapping'
NETWORKING = 'networking'
SPAWNING = 'spawning'
DELETING = 'deleting'
REBOOTING = 'rebooting'
REBOOTING_HARD = 'rebooting_hard'
POWERING_OFF = 'powering-off'
POWERING_ON = 'powering-on'
