"""The REST API of novalite: the Compute API v2.1 served through a paste pipeline."""
