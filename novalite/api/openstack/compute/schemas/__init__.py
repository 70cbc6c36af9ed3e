"""JSON Schemas of the Compute API request bodies and query strings."""

# The query string of a GET that takes no parameters: unknown ones are dropped until
# 2.101 and refused from 2.102, as Nova 34 does for most such routes.
empty_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
empty_query_v2102: dict = {'type': 'object', 'properties': {}, 'additionalProperties': False}
