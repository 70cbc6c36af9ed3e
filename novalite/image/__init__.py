"""The Image service (Glance v2) as the compute API and hosts see it."""
