"""Key pairs: fingerprints of public keys and certificates, and generated key pairs."""
from __future__ import annotations

import base64
import datetime
import hashlib
from typing import TYPE_CHECKING

from novalite import exception

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

# cryptography is imported by the functions that use it, on the first key pair a
# process imports or creates: loaded with the API (keypairs imports this module), it
# would add 8 MB to the resident memory of every API process (its Rust extension and
# libcrypto), for a request most clouds see rarely.


def _colons(digest: str) -> str:
    return ':'.join(a + b for a, b in zip(digest[::2], digest[1::2], strict=True))


def ssh_fingerprint(public_key: str) -> str:
    """The MD5 fingerprint (``aa:bb:...``) of an OpenSSH public key, as ``ssh-keygen -l
    -E md5`` shows it.

    :raises InvalidKeypair: the text is no OpenSSH public key
    """
    from cryptography.hazmat.primitives import serialization
    try:
        serialization.load_ssh_public_key(public_key.strip().encode('utf-8'))
        blob = base64.b64decode(public_key.split()[1])
    except (ValueError, IndexError, TypeError) as exc:
        raise exception.InvalidKeypair(
            reason='failed to generate fingerprint') from exc
    return _colons(hashlib.md5(blob, usedforsecurity=False).hexdigest())


def x509_fingerprint(pem: str) -> str:
    """The SHA-1 fingerprint of a PEM certificate, as Nova computes it.

    :raises InvalidKeypair: the text is no PEM certificate
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    try:
        cert = x509.load_pem_x509_certificate(pem.encode('utf-8'))
    except ValueError as exc:
        raise exception.InvalidKeypair(
            reason='failed to generate X509 fingerprint') from exc
    return _colons(cert.fingerprint(hashes.SHA1()).hex())  # noqa: S303 (Nova's format)


def fingerprint(public_key: str, key_type: str) -> str:
    return x509_fingerprint(public_key) if key_type == 'x509' else ssh_fingerprint(public_key)


def _private_pem(key: rsa.RSAPrivateKey) -> str:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode('utf-8')


def generate_key_pair(bits: int = 2048) -> tuple[str, str, str]:
    """A new RSA key pair: (private key PEM, OpenSSH public key, fingerprint)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH)
    public_key = public.decode('utf-8') + ' Generated-by-Nova'
    return _private_pem(key), public_key, ssh_fingerprint(public_key)


def generate_x509_cert(user_id: str, bits: int = 2048) -> tuple[str, str, str]:
    """A new self-signed client certificate for WinRM: (private key PEM, certificate
    PEM, fingerprint)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM).decode('utf-8')
    return _private_pem(key), pem, x509_fingerprint(pem)
