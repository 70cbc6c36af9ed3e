"""novalite: a faithful, compact compute controller in the shape of OpenStack Nova."""
from novalite import concurrency as _concurrency

_concurrency.choose()
