"""What other services call on the conductor (thin wrappers over the RPC clients)."""
from __future__ import annotations

from novalite.conductor import rpcapi


class ComputeTaskAPI(rpcapi.ComputeTaskAPI):
    """Build and move tasks, as the compute API and compute hosts use them."""


class API(rpcapi.ConductorAPI):
    """Object indirection, as compute hosts use it."""
