"""The options of every group, for oslo-config-generator."""
from __future__ import annotations

from oslo_config import cfg

from novalite import conf as novalite_conf


def list_opts() -> list[tuple]:
    merged: dict = {}
    for mod in novalite_conf._MODULES:
        for group, opts in mod.list_opts().items():
            key = group.name if isinstance(group, cfg.OptGroup) else group
            merged.setdefault(key, []).extend(opts)
    # Read by the API's own size-limit filter, in oslo.middleware's group (the name Nova's
    # deployers already use); [cors] comes from oslo.middleware's own namespace.
    from novalite.api.openstack import sizelimit
    for group, opts in sizelimit.list_opts().items():
        merged.setdefault(group, []).extend(opts)
    return sorted(merged.items(), key=lambda kv: kv[0])


def set_defaults() -> None:
    """Defaults for library options that novalite changes (the generator calls this, so
    the sample shows the values the daemons use): the RPC exchange, as ``novalite.rpc``
    sets it."""
    import oslo_messaging

    oslo_messaging.set_transport_defaults('novalite')
