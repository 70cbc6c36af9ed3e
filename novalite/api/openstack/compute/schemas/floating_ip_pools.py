"""Query schema of the os-floating-ip-pools proxy (no parameters; unknown ones ignored)."""
from __future__ import annotations

index_query: dict = {'type': 'object', 'properties': {}, 'additionalProperties': True}
