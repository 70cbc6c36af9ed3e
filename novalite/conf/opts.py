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
    return sorted(merged.items(), key=lambda kv: kv[0])


def set_defaults() -> None:
    """Defaults for library options that novalite changes."""
