"""PyMySQL imports cryptography only when an RSA exchange needs it (novalite.db.driver)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import types

from novalite.db import driver


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (this one may hold cryptography already)."""
    result = subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_pymysql_imported_without_cryptography():
    out = _run('''
        import sys
        import novalite.db
        import pymysql
        print('cryptography' in sys.modules, pymysql._auth._have_cryptography)
    ''')
    assert out == 'False False'


def test_rsa_exchange_imports_cryptography_and_encrypts():
    # caching_sha2_password's full authentication over plain TCP: the password, XORed
    # with the salt, encrypted with the server's public key (RSA-OAEP, SHA-1).
    out = _run('''
        import sys
        import novalite.db
        from pymysql import _auth
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        salt = b'0123456789abcdefghij'
        sealed = _auth.sha2_rsa_encrypt(b'secret', salt, pem)
        oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                            algorithm=hashes.SHA1(), label=None)
        print(key.decrypt(sealed, oaep) == _auth._xor_password(b'secret\\0', salt),
              _auth._have_cryptography)
    ''')
    assert out == 'True True'


def test_rsa_exchange_without_cryptography_says_what_is_missing():
    out = _run('''
        import sys
        import novalite.db
        from pymysql import _auth
        sys.modules['cryptography'] = None  # as if it were not installed
        try:
            _auth.sha2_rsa_encrypt(b'secret', b'0123456789abcdefghij', b'')
        except RuntimeError as exc:
            print(exc)
    ''')
    assert "'cryptography' package is required" in out


def test_unknown_module_shape_is_left_for_a_plain_import():
    # A PyMySQL whose _auth changed: not patched, so the loader executes it again as is.
    assert not driver._defer_rsa(types.ModuleType('pymysql._auth'))
    changed = types.ModuleType('pymysql._auth')
    changed._have_cryptography = True
    changed.sha2_rsa_encrypt = lambda *args: b''
    assert not driver._defer_rsa(changed)
