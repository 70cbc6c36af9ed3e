"""novalite: a faithful, compact compute controller in the shape of OpenStack Nova."""
import warnings as _warnings

# futurist imports eventlet whenever it is installed (it is: the optional backend), and
# eventlet warns on import; in the threading default that warning is only noise.
_warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')

from novalite import concurrency as _concurrency  # noqa: E402

_concurrency.choose()
