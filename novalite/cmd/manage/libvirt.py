"""``novalite-manage libvirt``."""
from __future__ import annotations


class LibvirtCommands:
    """The libvirt machine types recorded for instances."""
