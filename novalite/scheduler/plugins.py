"""Loading scheduler filters and weighers by entry point name, in the configured order."""
from __future__ import annotations

from typing import Any

from stevedore import named


def load(namespace: str, names: list[str], kind: str) -> list[Any]:
    """Instances of the plugins ``names`` of ``namespace``, in that order.

    :raises ValueError: when a name matches no entry point (a typo in the config must
        not silently drop a filter).
    """
    manager: named.NamedExtensionManager[Any] = named.NamedExtensionManager(
        namespace, names, invoke_on_load=True, name_order=True)
    missing = set(names) - set(manager.names())
    if missing:
        raise ValueError('Unknown scheduler %s: %s' % (kind, ', '.join(sorted(missing))))
    return [ext.obj for ext in manager]
