"""``novalite-manage libvirt``: the machine types recorded for instances, as nova-manage's
(the work is in ``novalite.virt.libvirt.machine_type``)."""
from __future__ import annotations

from novalite import context as nl_context
from novalite import exception
from novalite.cmd.manage.common import NOT_FOUND, args, exit_code
from novalite.virt.libvirt import machine_type as mt_utils


class LibvirtCommands:
    """The libvirt machine types recorded for instances."""

    @args('instance_uuid', metavar='<instance_uuid>',
          help='UUID of the instance whose machine type to show')
    def get_machine_type(self, instance_uuid: str) -> int:
        """Show the machine type recorded for an instance. Exit 0: shown, 1: unexpected
        error, 2: no such instance, 3: none recorded."""
        try:
            found = mt_utils.get_machine_type(nl_context.get_admin_context(), instance_uuid)
        except Exception as exc:
            return exit_code(exc, [(NOT_FOUND, 2)])
        if not found:
            print('No machine type registered for instance %s' % instance_uuid)
            return 3
        print(found)
        return 0

    @args('instance_uuid', metavar='<instance_uuid>', help='UUID of the instance')
    @args('machine_type', metavar='<machine_type>', help='Machine type to record')
    @args('--force', action='store_true',
          help='Skip the checks of the instance\'s state and of the machine type')
    def update_machine_type(self, instance_uuid: str, machine_type: str,
                            force: bool = False) -> int:
        """Set or change the machine type recorded for an instance (STOPPED, SHELVED or
        SHELVED_OFFLOADED; a supported type of the recorded one's family, not older;
        its guest gets it when it is next defined). Exit 0: done, 1: unexpected error,
        2: no such instance, 3: wrong vm_state, 4: a change of family or an older
        version, 5: unsupported machine type."""
        if force:
            print('Forcing update of machine type.')
        try:
            new, previous = mt_utils.update_machine_type(
                nl_context.get_admin_context(), instance_uuid, machine_type, force=force)
        except Exception as exc:
            return exit_code(exc, [(mt_utils.UnsupportedMachineType, 5),
                                   (mt_utils.InvalidMachineTypeUpdate, 4),
                                   (exception.InstanceInvalidState, 3), (NOT_FOUND, 2)])
        print('Updated instance %s machine type to %s (previously %s)'
              % (instance_uuid, new, previous))
        return 0

    @args('--cell-uuid', metavar='<cell_uuid>', dest='cell_uuid',
          help='Only the instances of this cell')
    def list_unset_machine_type(self, cell_uuid: str | None = None) -> int:
        """List the instances with no machine type recorded. Exit 0: none, 1: unexpected
        error, 2: no such cell, 3: some found (listed)."""
        try:
            found = mt_utils.instances_without_type(
                nl_context.get_admin_context(), cell_uuid)
        except Exception as exc:
            return exit_code(exc, [(exception.CellMappingNotFound, 2)])
        if not found:
            print('No instances found without hw_machine_type set.')
            return 0
        print('\n'.join(found))
        return 3

