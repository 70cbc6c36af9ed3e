"""Events other services report about this host's instances (os-server-external-events).

``power-update`` (a bare-metal node changed power on its own) is answered by reading
the guest's power state again and syncing the instance with it. The network and
volume events have nothing waiting for them yet (no Neutron or Cinder client): they
are logged.
"""
from __future__ import annotations

from typing import Any

from oslo_log import log as logging

from novalite.compute import power_sync

LOG = logging.getLogger(__name__)


def handle_event(mgr: Any, context: Any, instance: Any, event: dict) -> None:
    """Act on one event of ``instance`` (called with the instance lock held)."""
    if event['name'] == 'power-update':
        power_sync.handle_lifecycle_event(mgr, context, instance.uuid,
                                          'power-update %s' % event.get('tag'))
        return
    LOG.info('Received event %s:%s (%s) for instance %s', event['name'], event.get('tag'),
             event.get('status'), instance.uuid)
