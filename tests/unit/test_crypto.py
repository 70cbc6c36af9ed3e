"""Fingerprints and generated key pairs."""
from __future__ import annotations

import base64
import hashlib

import pytest

from novalite import crypto, exception


def test_generated_ssh_key_fingerprint_is_md5_of_the_blob():
    private, public, fingerprint = crypto.generate_key_pair(bits=1024)
    assert private.startswith('-----BEGIN RSA PRIVATE KEY-----')
    blob = base64.b64decode(public.split()[1])
    digest = hashlib.md5(blob, usedforsecurity=False).hexdigest()
    assert fingerprint.replace(':', '') == digest
    assert crypto.fingerprint(public, 'ssh') == fingerprint


def test_x509_certificate_fingerprint():
    _private, cert, fingerprint = crypto.generate_x509_cert('user1', bits=1024)
    assert cert.startswith('-----BEGIN CERTIFICATE-----')
    assert len(fingerprint.split(':')) == 20
    assert crypto.fingerprint(cert, 'x509') == fingerprint


@pytest.mark.parametrize('key,key_type', [('ssh-rsa AAAA', 'ssh'), ('nonsense', 'ssh'),
                                          ('-----BEGIN CERTIFICATE-----', 'x509')])
def test_invalid_keys(key, key_type):
    with pytest.raises(exception.InvalidKeypair):
        crypto.fingerprint(key, key_type)
