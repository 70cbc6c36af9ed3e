"""novalite: a faithful, compact compute controller in the shape of OpenStack Nova."""
import warnings as _warnings

# eventlet warns on import that it is deprecated; whoever picks the eventlet backend knows
# (a process of the threading default never imports it: see novalite.concurrency).
_warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')

from novalite import concurrency as _concurrency  # noqa: E402

_concurrency.choose()
