"""Names of the actions recorded in ``instance_actions`` (shown by os-instance-actions)."""

CREATE = 'create'
DELETE = 'delete'
REBOOT = 'reboot'
STOP = 'stop'
START = 'start'
RESIZE = 'resize'
MIGRATE = 'migrate'
CONFIRM_RESIZE = 'confirmResize'
REVERT_RESIZE = 'revertResize'
LIVE_MIGRATION = 'live-migration'
EVACUATE = 'evacuate'
REBUILD = 'rebuild'
CREATE_IMAGE = 'createImage'
BACKUP = 'createBackup'
SHELVE = 'shelve'
SHELVE_OFFLOAD = 'shelveOffload'
UNSHELVE = 'unshelve'
PAUSE = 'pause'
UNPAUSE = 'unpause'
SUSPEND = 'suspend'
RESUME = 'resume'
LOCK = 'lock'
UNLOCK = 'unlock'
RESCUE = 'rescue'
UNRESCUE = 'unrescue'
CHANGE_PASSWORD = 'changePassword'
TRIGGER_CRASH_DUMP = 'trigger_crash_dump'
RESET_STATE = 'resetState'
RESTORE = 'restore'

# The compute's event of a build: the conductor starts it when it hands the build to a
# host (conductor/tasks/build.py), the host finishes it (compute/build.py).
BUILD_EVENT = 'compute__do_build_and_run_instance'
# The compute's event of a delete: the API starts it with the delete action, the host
# finishes it (compute/build.py terminate_instance).
TERMINATE_EVENT = 'compute_terminate_instance'
