"""Networking for instances (networks "none" and "auto" today; Neutron later)."""
