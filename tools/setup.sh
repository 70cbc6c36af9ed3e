#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for novalite development and tests:
# system packages, then a virtualenv in .venv with novalite and its pinned dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    need=""
    # qemu-utils: qemu-img, which makes the libvirt driver's qcow2 overlays (and its tests);
    # libvirt-daemon-system and qemu-system-x86: libvirtd and QEMU, for real (TCG) guests.
    for pkg in gcc pkg-config python3-dev python3-venv libvirt-dev qemu-utils libvirt-daemon-system qemu-system-x86; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
    if [ -n "$need" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
    fi
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -c upper-constraints.txt -r requirements.txt -r test-requirements.txt
.venv/bin/pip install -q --no-deps -e .

# The real Glance, for novalite-all and the devstack-style tests, in a virtualenv of its
# own: it pins versions of shared libraries that differ from novalite's.
[ -x .venv-glance/bin/python ] || "$PY" -m venv .venv-glance
.venv-glance/bin/pip install -q --upgrade pip >/dev/null
.venv-glance/bin/pip install -q -c glance-constraints.txt glance gunicorn
echo "novalite set up in $(pwd)/.venv (Glance in $(pwd)/.venv-glance)"

# The real Keystone, for the devstack-style tests with auth_strategy = keystone
# (tests/devstack/test_keystone.py), in a virtualenv of its own like Glance.
[ -x .venv-keystone/bin/python ] || "$PY" -m venv .venv-keystone
.venv-keystone/bin/pip install -q --upgrade pip >/dev/null
.venv-keystone/bin/pip install -q -c keystone-constraints.txt keystone gunicorn
echo "Keystone in $(pwd)/.venv-keystone"
