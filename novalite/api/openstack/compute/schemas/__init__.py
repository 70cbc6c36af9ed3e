"""JSON Schemas of the Compute API request bodies and query strings."""
