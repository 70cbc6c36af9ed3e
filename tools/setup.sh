#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for novalite development and tests:
# system packages, then a virtualenv in .venv with novalite and its pinned dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

# Services that packages installed here may have started: novalite's devstack network
# runs its own Open vSwitch and OVN daemons (own run folders and sockets), and a
# system-wide ovn-controller would make a br-int of its own.
OVS_SERVICES="ovn-host ovn-controller ovn-central ovn-northd ovn-ovsdb-server-nb ovn-ovsdb-server-sb openvswitch-switch ovs-vswitchd ovsdb-server"
# Likewise the Ceph clusters of the volume tests run their own mon, mgr and OSD (own
# folders and ports): none of the packages' own.
CEPH_SERVICES="ceph ceph.target ceph-mon.target ceph-mgr.target ceph-osd.target ceph-crash"

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
    # Neutron (ML2/OVN, userspace datapath); isc-dhcp-client: dhclient, for its tests;
    # novnc: the web client novalite-novncproxy serves ([DEFAULT] web = /usr/share/novnc);
    # chromium: the headless browser the console tests open it in.
    for pkg in gcc pkg-config python3-dev python3-venv libvirt-dev qemu-utils libvirt-daemon-system qemu-system-x86 \
            openvswitch-switch ovn-central ovn-host isc-dhcp-client novnc chromium; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
    done
    # ceph-*, python3-rados/rbd: the one-node Ceph cluster under the real Cinder (RBD),
    # and Debian's librados/librbd bindings for cinder-volume; qemu-block-extra: QEMU's
    # rbd driver, so guests open Cinder's volumes. Without their recommends (the mgr's
    # dashboard and the like: hundreds of MB the clusters here never use).
    ceph_need=""
    for pkg in ceph-mon ceph-mgr ceph-osd ceph-common python3-rados python3-rbd qemu-block-extra; do
        dpkg -s "$pkg" >/dev/null 2>&1 || ceph_need="$ceph_need $pkg"
    done
    if [ -n "$need$ceph_need" ]; then
        apt-get update -qq
    fi
    if [ -n "$ceph_need" ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $ceph_need >/dev/null
        for svc in $CEPH_SERVICES; do stop_service "$svc"; done
    fi
    if [ -n "$need" ]; then
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

# The real Cinder (RBD driver on a one-node Ceph), for the devstack-style stack with
# volumes and novalite-all --volumes, in a virtualenv of its own like Glance. Its RBD
# driver imports Debian's rados and rbd modules, which pyenv's python3 does not see
# (--system-site-packages reaches only its own site): they are built for CPython 3.11,
# so linking them into the venv is enough.
[ -x .venv-cinder/bin/python ] || "$PY" -m venv .venv-cinder
.venv-cinder/bin/pip install -q --upgrade pip >/dev/null
.venv-cinder/bin/pip install -q -c cinder-constraints.txt cinder gunicorn pymysql python-openstackclient
site=$(.venv-cinder/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
tag=$(.venv-cinder/bin/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for module in rados rbd; do
    if [ -e "/usr/lib/python3/dist-packages/$module$tag" ]; then
        ln -sf "/usr/lib/python3/dist-packages/$module$tag" "$site/"
    else
        echo "warning: Debian's $module module for $tag not found (python3-$module): Cinder's RBD driver will not load" >&2
    fi
done
echo "Cinder in $(pwd)/.venv-cinder"
