"""Two compute hosts of a live migration in one process: the compute RPC between their
managers (objects cross it serialized, as on the bus) and Neutron with multiple port
bindings (``binding-extended``), as recorders (test doubles)."""
from __future__ import annotations

import copy

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite.objects import base as obj_base

LOG = logging.getLogger(__name__)


class HostsRPC:
    """The compute RPC client of ``compute/rpcapi.py`` for the live migration methods,
    delivering to ``managers[host]``'s endpoint: arguments and answers go through the
    object serializer (each host gets its own copies), an expected exception reaches
    the caller as itself, a cast's failure stays with its receiver; a host with no
    manager does not answer (MessagingTimeout). ``sent`` records (method, host)."""

    def __init__(self, managers):
        self.managers = managers
        self.sent: list[tuple[str, str]] = []
        self._serializer = obj_base.NovaliteObjectSerializer()

    def _wire(self, context, value):
        return self._serializer.deserialize_entity(
            context, self._serializer.serialize_entity(context, value))

    def _deliver(self, host, method, context, cast, **kwargs):
        self.sent.append((method, host))
        manager = self.managers.get(host)
        if manager is None:
            raise messaging.MessagingTimeout('%s does not answer' % host)
        kwargs = {name: self._wire(context, value) for name, value in kwargs.items()}
        try:
            result = getattr(manager, method)(context, **kwargs)
        except messaging.ExpectedException as expected:
            if cast:
                return None
            raise expected.exc_info[1] from None
        except Exception:
            if cast:
                LOG.exception('%s on %s failed', method, host)
                return None
            raise
        return None if cast else self._wire(context, result)

    def check_can_live_migrate_destination(self, context, instance, host, block_migration,
                                           migration):
        return self._deliver(host, 'check_can_live_migrate_destination', context, False,
                             instance=instance, block_migration=block_migration,
                             migration=migration)

    def check_can_live_migrate_source(self, context, instance, migrate_data):
        return self._deliver(instance.host, 'check_can_live_migrate_source', context, False,
                             instance=instance, migrate_data=migrate_data)

    def live_migration(self, context, instance, dest, block_migration, migration,
                       migrate_data):
        self._deliver(instance.host, 'live_migration', context, True, instance=instance,
                      dest=dest, block_migration=block_migration, migration=migration,
                      migrate_data=migrate_data)

    def pre_live_migration(self, context, instance, host, migrate_data):
        return self._deliver(host, 'pre_live_migration', context, False, instance=instance,
                             migrate_data=migrate_data)

    def post_live_migration_at_destination(self, context, instance, host, block_migration,
                                           migrate_data):
        self._deliver(host, 'post_live_migration_at_destination', context, False,
                      instance=instance, block_migration=block_migration,
                      migrate_data=migrate_data)

    def rollback_live_migration_at_destination(self, context, instance, host, destroy_disks,
                                               migrate_data):
        self._deliver(host, 'rollback_live_migration_at_destination', context, True,
                      instance=instance, destroy_disks=destroy_disks,
                      migrate_data=migrate_data)

    def live_migration_abort(self, context, instance, migration_id):
        self._deliver(instance.host, 'live_migration_abort', context, True,
                      instance=instance, migration_id=migration_id)

    def live_migration_force_complete(self, context, instance):
        self._deliver(instance.host, 'live_migration_force_complete', context, True,
                      instance=instance)


class BindingNeutron:
    """Neutron with ``binding-extended``, as ML2 keeps it: each port's bindings by host,
    'ACTIVE' or 'INACTIVE' (``bindings``), and the binding calls in order (``calls``:
    (verb, host)). ``extension=False``: a Neutron without it, whose ports are rebound
    with ``bind_ports_to_host`` (a test double)."""

    def __init__(self, extension=True):
        self.extension = extension
        self.bindings: dict[str, dict[str, str]] = {}
        self.calls: list[tuple[str, str]] = []

    def port(self, port_id, host):
        """A port bound (active) to ``host``; its VIF as a network info cache has it."""
        self.bindings[port_id] = {host: 'ACTIVE'}
        return {'id': port_id, 'address': 'fa:16:3e:00:00:01', 'type': 'ovs',
                'vnic_type': 'normal', 'active': True, 'details': {'host': host},
                'profile': {}, 'network': {'id': 'net-1', 'label': 'private',
                                           'subnets': []}}

    def supports_port_binding_extension(self, context):
        return self.extension

    def _as_bound(self, network_info, host):
        info = copy.deepcopy(list(network_info))
        for vif in info:
            vif['details'] = {'host': host}
        return info

    def create_port_bindings(self, context, instance, host, network_info):
        self.calls.append(('create', host))
        for vif in network_info:
            self.bindings[vif['id']][host] = 'INACTIVE'
        return self._as_bound(network_info, host)

    def activate_port_bindings(self, context, instance, host, network_info):
        self.calls.append(('activate', host))
        for vif in network_info:
            bindings = self.bindings[vif['id']]
            for bound in bindings:
                bindings[bound] = 'ACTIVE' if bound == host else 'INACTIVE'
        return self._as_bound(network_info, host)

    def delete_port_bindings(self, context, instance, host, port_ids):
        self.calls.append(('delete', host))
        for port_id in port_ids:
            self.bindings[port_id].pop(host, None)

    def get_instance_nw_info(self, context, instance, current=None):
        return copy.deepcopy(list(current if current is not None
                                  else instance.info_cache.network_info or []))

    def bind_ports_to_host(self, context, instance, host, network_info):
        self.calls.append(('bind', host))
        for vif in network_info:
            self.bindings[vif['id']] = {host: 'ACTIVE'}
        return self._as_bound(network_info, host)
