"""The SQLAlchemy constructs and models that object modules use, imported on first use.

Every process registers every object class, but a compute never queries a database:
its object methods run on the conductor. Importing SQLAlchemy, oslo.db's engines and
the models there would cost it 19 MB of memory and 0.3 s of start-up CPU for nothing.
So object modules take their query constructs and models from here; the first query of
a process imports the real ones (``importlib`` makes that first import thread-safe).
"""
from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """A module imported when one of its attributes is first read.

    Once imported, the module's names are copied into this object, so that reading
    one costs what reading a module attribute does (a name the module gains later is
    still found, through ``__getattr__``).
    """

    def __init__(self, name: str) -> None:
        self.__name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name)
        self.__dict__.update(vars(module))
        return getattr(module, attr)

    def __repr__(self) -> str:
        return '<lazy module %s>' % self.__name


class _Func:
    """``sqlalchemy.func``: ``func.count(...)``, ``func.max(...)``."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sqlalchemy.func, name)


sqlalchemy = LazyModule('sqlalchemy')
api_models = LazyModule('novalite.db.api.models')
main_models = LazyModule('novalite.db.main.models')
func = _Func()


def select(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.select(*args, **kwargs)


def insert(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.insert(*args, **kwargs)


def update(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.update(*args, **kwargs)


def delete(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.delete(*args, **kwargs)


def and_(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.and_(*args, **kwargs)


def or_(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.or_(*args, **kwargs)


def literal(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.literal(*args, **kwargs)


def null() -> Any:
    return sqlalchemy.null()


def union_all(*args: Any, **kwargs: Any) -> Any:
    return sqlalchemy.union_all(*args, **kwargs)
