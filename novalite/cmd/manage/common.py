"""What every ``novalite-manage`` category module shares: the ``args`` decorator."""
from __future__ import annotations

from collections.abc import Callable


def args(*names: str, **kwargs: object) -> Callable:
    """Declare one argparse argument of an action (decorators apply bottom-up)."""
    def decorator(fn: Callable) -> Callable:
        fn.__dict__.setdefault('args', []).insert(0, (names, kwargs))
        return fn
    return decorator
