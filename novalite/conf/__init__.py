"""Configuration options for novalite: one module per option group.

Every module exposes ``register_opts(conf)`` and ``list_opts()``. The process-global
``CONF`` is used because oslo.messaging registers some of its options only there.
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_service import opts as service_opts

from novalite.conf import (
    api,
    cinder,
    compute,
    conductor,
    console,
    database,
    default,
    fake,
    glance,
    libvirt,
    metrics,
    migrate,
    neutron,
    placement,
    quota,
    scheduler,
    service_user,
    shelve,
    usage_audit,
    workarounds,
    wsgi,
)

CONF = cfg.CONF

_MODULES = (default, api, database, scheduler, placement, glance, compute, libvirt,
            conductor, quota, fake, workarounds, shelve,
            migrate, neutron, usage_audit, wsgi, cinder, service_user, console,
            metrics)

for _mod in _MODULES:
    _mod.register_opts(CONF)
# graceful_shutdown_timeout and friends: services read them with or without a launcher.
service_opts.register_service_opts(CONF)
