#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for novalite development and tests:
# system packages, then a virtualenv in .venv with novalite and its pinned dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

# Services that packages installed here may have started: novalite's devstack network
# runs its own Open vSwitch and OVN daemons (own run folders and sockets), and a
# system-wide ovn-controller would make a br-int of its own.
OVS_SERVICES="ovn-host ovn-controller ovn-central ovn-northd ovn-ovsdb-server-nb ovn-ovsdb-server-sb openvswitch-switch ovs-vswitchd ovsdb-server"

stop_service() {
    if [ -d /run/systemd/system ]; then
        systemctl disable --now "$1" >/dev/null 2>&1 || true
    elif [ -x "/etc/init.d/$1" ]; then
        "/etc/init.d/$1" stop >/dev/null 2>&1 || true
        update-rc.d "$1" disable >/dev/null 2>&1 || true
    fi
}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    need=""
    # qemu-utils: qemu-img, which makes the libvirt driver's qcow2 overlays (and its tests);
    # libvirt-daemon-system and qemu-system-x86: libvirtd and QEMU, for real (TCG) guests;
    # openvswitch-switch, ovn-central, ovn-host: the switches and OVN under the real
    # Neutron (ML2/OVN, userspace datapath); isc-dhcp-client: dhclient, for its tests.
    for pkg in gcc pkg-config python3-dev python3-venv libvirt-dev qemu-utils libvirt-daemon-system qemu-system-x86 \
            openvswitch-switch ovn-central ovn-host isc-dhcp-client; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
    if [ -n "$need" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
        case " $need " in
            *" openvswitch-switch "*|*" ovn-central "*|*" ovn-host "*)
                for svc in $OVS_SERVICES; do stop_service "$svc"; done ;;
        esac
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

# The real Neutron (ML2/OVN), for the devstack-style stack with a network
# (tests.devstack.harness.neutron), in a virtualenv of its own like Glance.
[ -x .venv-neutron/bin/python ] || "$PY" -m venv .venv-neutron
.venv-neutron/bin/pip install -q --upgrade pip >/dev/null
.venv-neutron/bin/pip install -q -c neutron-constraints.txt neutron gunicorn pymysql
echo "Neutron in $(pwd)/.venv-neutron"
