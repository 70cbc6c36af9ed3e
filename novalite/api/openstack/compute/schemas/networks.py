"""Query schemas of the os-networks proxy (no parameters; unknown ones are ignored)."""
from __future__ import annotations

index_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
show_query = index_query
