"""The libvirt compute driver (``LibvirtDriver`` in ``driver``)."""
