"""A server's ports following it: their binding moved to the host that now runs it.

Resize, cold migration and its revert, evacuation and unshelve call ``move_ports`` on
the host that takes the server, before its guest is made there (as Nova's
``migrate_instance_finish`` and ``setup_instance_network_on_host``). The new network
info is put in the instance's cache, written with the flow's next save.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.network import model

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def move_ports(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
               host: str) -> model.NetworkInfo:
    """Bind the instance's cached ports to ``host``; returns the network info there.

    :raises PortBindingFailed: Neutron cannot bind a port to ``host``.
    :raises NeutronConnectionFailed: Neutron could not be reached.
    """
    current = instance.info_cache.network_info
    if not current:
        return []
    network_info = mgr.network_api.bind_ports_to_host(context, instance, host, current)
    instance.info_cache.network_info = network_info
    LOG.info('Ports of %s bound to %s', instance.uuid, host)
    return network_info
