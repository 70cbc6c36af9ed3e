"""PyMySQL without cryptography until a connection needs it.

PyMySQL imports ``cryptography`` when ``pymysql._auth`` is imported, for one purpose: the
RSA exchange of the ``sha256_password`` and ``caching_sha2_password`` methods over a
connection without TLS. MariaDB authenticates with ``mysql_native_password`` (or ed25519),
which never needs it; MySQL 8's ``caching_sha2_password`` needs it only for a full
authentication over plain TCP (after a server restart or a password change; once the
server has cached the password, and over TLS, no RSA is used). Yet the import costs every
process that talks to MySQL or MariaDB 8 MB of resident memory (cryptography's Rust
extension and libcrypto, about 2 MB of it private to each worker process) and 0.1 s of
start-up CPU.

So ``install()`` puts an import hook before ``pymysql._auth``: the module is executed
with the ``cryptography`` import failing, as PyMySQL allows (it then says it has no
cryptography), and its RSA function is replaced by one that imports cryptography on the
first call and hands it to PyMySQL, then does what PyMySQL's own does. A deployment on
``caching_sha2_password`` thus works as before, paying the import on its first full
authentication; one without cryptography installed gets PyMySQL's own error, which names
the package and the two methods.

Why a hook and not a patch applied where an engine is made: whatever imports PyMySQL
first (an engine, the worker fork's preparation, alembic under ``novalite-manage``) gets
the same module, and nothing has to be called in the right order. The hook is one-shot
and checks what it replaces: a PyMySQL whose ``_auth`` no longer has that shape gets
its module executed again as it is, cryptography and all.
"""
from __future__ import annotations

import importlib.abc
import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec

AUTH_MODULE = 'pymysql._auth'
BLOCKED = 'cryptography'


class _DeferCryptography(importlib.abc.MetaPathFinder):
    """Finds ``pymysql._auth`` with the other finders and gives it a loader that
    executes it without cryptography (see the module docstring)."""

    def __init__(self) -> None:
        # Threads executing pymysql._auth's module body: only their imports of
        # cryptography fail, another thread may import it meanwhile.
        self.executing: set[int] = set()

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == BLOCKED or name.startswith(BLOCKED + '.'):
            if threading.get_ident() in self.executing:
                raise ImportError('cryptography is imported when PyMySQL first needs it '
                                  '(novalite.db.driver)', name=name)
            return None
        if name != AUTH_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, 'exec_module'):
                    spec.loader = _Loader(spec.loader, self)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    """The module's own loader (its source, its file name), but ``exec_module`` runs
    the body with cryptography out of reach, then defers the RSA function."""

    def __init__(self, loader: importlib.abc.Loader, finder: _DeferCryptography) -> None:
        self._loader = loader
        self._finder = finder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        me = threading.get_ident()
        self._finder.executing.add(me)
        try:
            self._loader.exec_module(module)
        finally:
            self._finder.executing.discard(me)
        if not _defer_rsa(module):
            self._loader.exec_module(module)


def _defer_rsa(module: ModuleType) -> bool:
    """Replace ``module``'s RSA function with one that imports cryptography first.

    :returns: False if ``module`` is not the shape this was written for (then it must be
        executed again, with cryptography)
    """
    original = getattr(module, 'sha2_rsa_encrypt', None)
    if getattr(module, '_have_cryptography', None) is not False or not callable(original):
        return False

    def sha2_rsa_encrypt(password: bytes, salt: bytes, public_key: bytes) -> bytes:
        try:
            from cryptography.hazmat.backends import default_backend
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
        except ImportError:
            pass  # PyMySQL's own function raises its error, which says what is missing
        else:
            vars(module).update(default_backend=default_backend, hashes=hashes,
                                serialization=serialization, padding=padding,
                                _have_cryptography=True, sha2_rsa_encrypt=original)
        return original(password, salt, public_key)

    sha2_rsa_encrypt.__doc__ = original.__doc__
    module.sha2_rsa_encrypt = sha2_rsa_encrypt  # type: ignore[attr-defined]
    return True


def install() -> None:
    """Defer PyMySQL's import of cryptography in this process (idempotent). Without
    effect if ``pymysql._auth`` or cryptography is imported already."""
    if AUTH_MODULE in sys.modules or BLOCKED in sys.modules:
        return
    if not any(isinstance(finder, _DeferCryptography) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DeferCryptography())
