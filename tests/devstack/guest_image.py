"""A guest that boots in seconds under QEMU/TCG, for the tests that run real guests.

It is Debian's cloud kernel and an initramfs built here: busybox and an ``/init`` script
that loads the virtio modules, prints ``MARKER`` on the serial console, and then waits,
powering off when the ACPI power button is pressed (so a soft reboot and a clean stop
work as on a real guest). The packages are fetched with ``apt-get download`` (never
installed) into a cache outside the repository; the built files are kept there and made
again only when missing (the ramdisk's name carries a digest of what goes into it, so a
changed ``/init`` is built anew).

A guest with a NIC (virtio-net, ``eth0``) also configures it by DHCP (busybox
``udhcpc``) and prints ``DHCP_MARKER ip=<address> ...`` with the lease; it then answers
ping (the kernel does) and serves ``HTTP_BODY`` over HTTP on port 80 (busybox
``httpd``). Given ``novalite_ping=<address>`` on its kernel command line (the image's
``os_command_line``), it pings that address until it answers, or for ``PING_SECONDS``,
and prints ``PING_OK_MARKER`` or ``PING_FAIL_MARKER``; then it fetches that address's
page over TCP (busybox ``nc``) and prints ``TCP_OK_MARKER`` or ``TCP_FAIL_MARKER``. A
guest without a NIC prints none of these.

Given ``novalite_volume=<dev>`` on its kernel command line (``VOLUME_CMDLINE``), the
guest also waits for the disk ``/dev/<dev>`` (a volume, attached at boot or hot-plugged
later) and looks at its first sector: if it holds a ``VOLUME_MARKER`` line (a volume a
guest wrote before), it prints ``VOLUME_FOUND_MARKER dev=<dev> <that line>``; otherwise
it writes ``VOLUME_MARKER <random uuid>`` there, flushes it, drops its page cache, reads
the sector back from the disk and prints ``VOLUME_WROTE_MARKER dev=<dev> sectors=<size>
<what it read>``.
"""
from __future__ import annotations

import dataclasses
import glob
import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import tempfile

MARKER = 'NOVALITE-GUEST-BOOTED'
CACHE_DIR = os.environ.get('NOVALITE_GUEST_IMAGE_CACHE') or os.path.join(
    os.path.expanduser('~'), '.cache', 'novalite', 'guest-image')
KERNEL_META = 'linux-image-cloud-amd64'
KERNEL_PATTERN = re.compile(r'^linux-image-(6\.1\.0-\d+)-cloud-amd64$')
BUSYBOX = 'busybox-static'
# virtio_blk and virtio_net are modules in this kernel; these load them, in this order.
# evdev and button give the ACPI power button an input device that /init can wait on.
MODULES = ('virtio_ring', 'virtio', 'virtio_pci_modern_dev', 'virtio_pci_legacy_dev',
           'virtio_pci', 'virtio_blk', 'failover', 'net_failover', 'virtio_net', 'evdev',
           'button')
DHCP_MARKER = 'GUEST-DHCP-LEASE'
PING_OK_MARKER = 'GUEST-PING-OK'
PING_FAIL_MARKER = 'GUEST-PING-FAIL'
TCP_OK_MARKER = 'GUEST-TCP-OK'
TCP_FAIL_MARKER = 'GUEST-TCP-FAIL'
HTTP_BODY = 'NOVALITE-GUEST-HTTP'
# How long a guest given novalite_ping=<address> keeps trying (TCG: its peer may boot
# later than it does).
PING_SECONDS = 180
# The kernel command line of the image (os_command_line).
CMDLINE = 'console=ttyS0 loglevel=4'
# What a guest writes to (and looks for on) the volume of novalite_volume=<dev>.
VOLUME_MARKER = 'NL-VOLUME-MARKER'
VOLUME_WROTE_MARKER = 'GUEST-VOLUME-WROTE'
VOLUME_FOUND_MARKER = 'GUEST-VOLUME-FOUND'
# The command line of a guest that writes to, or reads from, its second disk.
VOLUME_CMDLINE = CMDLINE + ' novalite_volume=vdb'

INIT = '''#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in %(modules)s; do insmod /lib/modules/$m.ko 2>/dev/null; done
disk=none
[ -b /dev/vda ] && disk=vda
echo "%(marker)s disk=$disk uptime=$(cut -d' ' -f1 /proc/uptime)"
# Each power button: one input event (the key press) means "shut down".
for dev in /sys/class/input/event*; do
    if grep -q "Power Button" $dev/device/name 2>/dev/null; then
        ( dd if=/dev/input/${dev##*/} bs=24 count=1 >/dev/null 2>&1
          echo "power button: powering off"; poweroff -f ) &
    fi
done
[ -e /sys/class/net/eth0 ] && /network.sh &
grep -q novalite_volume= /proc/cmdline && /volume.sh &
while true; do sleep 3600; done
'''
# /network.sh: DHCP on eth0, the web server, then the ping and the page of
# novalite_ping=<address>, if given.
NETWORK = '''#!/bin/sh
ip link set lo up
ip link set eth0 up
echo "GUEST-NET-START mac=$(cat /sys/class/net/eth0/address) uptime=$(cut -d' ' -f1 /proc/uptime)"
udhcpc -i eth0 -s /udhcpc.sh -t 30 -T 1 -n -q || echo "GUEST-DHCP-NONE"
httpd -p 80 -h /www
for arg in $(cat /proc/cmdline); do
    case "$arg" in novalite_ping=*) target=${arg#novalite_ping=};; esac
done
[ -n "$target" ] || exit 0
tries=0
end=$(( $(cut -d. -f1 /proc/uptime) + %(ping_seconds)d ))
while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
    tries=$((tries + 1))
    rtt=$(ping -c 1 -W 2 $target 2>/dev/null | sed -n 's/.*time=//p')
    [ -n "$rtt" ] && break
    sleep 1
done
if [ -z "$rtt" ]; then
    echo "%(ping_fail)s target=$target tries=$tries"
    exit 0
fi
echo "%(ping_ok)s target=$target tries=$tries time=$rtt"
for try in 1 2 3; do
    if printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 $target 80 | grep -q %(http)s; then
        echo "%(tcp_ok)s target=$target tries=$try"
        exit 0
    fi
done
echo "%(tcp_fail)s target=$target"
'''
# /volume.sh: the marker on the disk of novalite_volume=<dev>, found or written (the
# sector read with NULs dropped; a fresh volume reads as nothing).
VOLUME = '''#!/bin/sh
for arg in $(cat /proc/cmdline); do
    case "$arg" in novalite_volume=*) dev=${arg#novalite_volume=};; esac
done
echo "GUEST-VOLUME-WAIT dev=$dev uptime=$(cut -d' ' -f1 /proc/uptime)"
while [ ! -b /dev/$dev ]; do sleep 1; done
first() { dd if=/dev/$dev bs=512 count=1 2>/dev/null | tr -d '\\000' | head -n 1; }
found=$(first)
case "$found" in
    %(marker)s*)
        echo "%(found)s dev=$dev $found"
        exit 0;;
esac
echo "%(marker)s $(cat /proc/sys/kernel/random/uuid)" |
    dd of=/dev/$dev bs=512 count=1 conv=sync,notrunc 2>/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
echo "%(wrote)s dev=$dev sectors=$(cat /sys/block/$dev/size) $(first)"
'''
# udhcpc's script: the address, MTU and default route; the lease on the console.
UDHCPC = '''#!/bin/sh
case "$1" in
    bound|renew)
        ip addr flush dev $interface
        ip addr add $ip/${mask:-24} dev $interface
        [ -n "$mtu" ] && ip link set $interface mtu $mtu
        [ -n "$router" ] && ip route replace default via ${router%%%% *} dev $interface
        echo "%(dhcp)s ip=$ip mask=$mask router=$router mtu=$mtu serverid=$serverid" \
            "lease=$lease uptime=$(cut -d' ' -f1 /proc/uptime)";;
esac
'''


@dataclasses.dataclass
class GuestImage:
    """The files to upload: a kernel (aki), a ramdisk (ari), a raw root disk."""

    kernel: str
    ramdisk: str
    root: str
    cmdline: str = CMDLINE
    marker: str = MARKER


def build(cache_dir: str = CACHE_DIR) -> GuestImage:
    """The guest's files in ``cache_dir``, downloading and building what is missing.

    :raises RuntimeError: apt cannot provide the packages.
    """
    image = GuestImage(kernel=os.path.join(cache_dir, 'vmlinuz'),
                       ramdisk=os.path.join(cache_dir, 'initramfs-%s.gz' % _digest()),
                       root=os.path.join(cache_dir, 'root.raw'))
    if all(os.path.exists(p) for p in (image.kernel, image.ramdisk, image.root)):
        return image
    os.makedirs(cache_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as work:
        tree = _extract(work, (kernel_package(), BUSYBOX))
        vmlinuz = sorted(glob.glob(os.path.join(tree, 'boot', 'vmlinuz-*')))[-1]
        version = os.path.basename(vmlinuz)[len('vmlinuz-'):]
        data = initramfs(os.path.join(tree, 'bin', 'busybox'),
                         os.path.join(tree, 'lib', 'modules', version))
        # Each file appears complete or not at all (a cache shared by test runs).
        _write(image.ramdisk, data)
        _write(image.root, b'\0' * (1 << 20))
        shutil.copyfile(vmlinuz, image.kernel + '.tmp')
        os.replace(image.kernel + '.tmp', image.kernel)
    return image


def kernel_package() -> str:
    """The cloud kernel package of this Debian: what the meta package depends on, else
    the newest 6.1 one apt knows (reading the package lists first if it knows none)."""
    try:
        return _kernel_package()
    except RuntimeError:
        _run('apt-get', 'update', '-qq')
        return _kernel_package()


def _kernel_package() -> str:
    out = _run('apt-cache', 'depends', KERNEL_META, check=False)
    for line in out.splitlines():
        name = line.strip().removeprefix('Depends:').strip()
        if KERNEL_PATTERN.match(name):
            return name
    names = [n for n in _run('apt-cache', 'pkgnames', 'linux-image-6.1.0-').split()
             if KERNEL_PATTERN.match(n)]
    if not names:
        raise RuntimeError('apt knows no linux-image-6.1.0-*-cloud-amd64 package '
                           '(run apt-get update)')
    return max(names, key=lambda n: int(KERNEL_PATTERN.match(n).group(1).split('-')[1]))


def _extract(work: str, packages: tuple[str, ...]) -> str:
    _run('apt-get', 'download', '-q', *packages, cwd=work)
    tree = os.path.join(work, 'tree')
    for deb in glob.glob(os.path.join(work, '*.deb')):
        _run('dpkg-deb', '-x', deb, tree)
    return tree


def _run(*cmd: str, cwd: str | None = None, check: bool = True) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise RuntimeError('%s failed (%s): %s' % (' '.join(cmd), result.returncode,
                                                   result.stderr.strip()))
    return result.stdout


def _write(path: str, data: bytes) -> None:
    with open(path + '.tmp', 'wb') as out:
        out.write(data)
    os.replace(path + '.tmp', path)


# -- the initramfs: a gzip'd "newc" cpio archive ------------------------------------------


def _find_module(modules_dir: str, name: str) -> str:
    for root, _dirs, files in os.walk(modules_dir):
        if name + '.ko' in files:
            return os.path.join(root, name + '.ko')
    raise RuntimeError('module %s not found under %s' % (name, modules_dir))


def _scripts() -> dict[str, str]:
    """The initramfs's own files (the scripts, the web page), by path."""
    return {
        'init': INIT % {'modules': ' '.join(MODULES), 'marker': MARKER},
        'network.sh': NETWORK % {'ping_seconds': PING_SECONDS, 'ping_ok': PING_OK_MARKER,
                                 'ping_fail': PING_FAIL_MARKER, 'http': HTTP_BODY,
                                 'tcp_ok': TCP_OK_MARKER, 'tcp_fail': TCP_FAIL_MARKER},
        'www/index.html': HTTP_BODY + '\n',
        'udhcpc.sh': UDHCPC % {'dhcp': DHCP_MARKER},
        'volume.sh': VOLUME % {'marker': VOLUME_MARKER, 'found': VOLUME_FOUND_MARKER,
                               'wrote': VOLUME_WROTE_MARKER},
    }


def _digest() -> str:
    """Names the ramdisk after what goes into it besides the packages."""
    content = repr((MODULES, sorted(_scripts().items()))).encode()
    return hashlib.sha256(content).hexdigest()[:12]


def initramfs(busybox: str, modules_dir: str) -> bytes:
    """The gzip'd cpio of busybox, the modules, ``/init`` and the network scripts."""
    archive = CpioWriter()
    for directory in ('bin', 'dev', 'proc', 'sys', 'lib', 'lib/modules', 'www'):
        archive.directory(directory)
    # The kernel opens /dev/console for init before anything mounts devtmpfs.
    archive.device('dev/console', stat.S_IFCHR | 0o600, 5, 1)
    with open(busybox, 'rb') as binary:
        archive.file('bin/busybox', binary.read(), 0o755)
    archive.symlink('bin/sh', 'busybox')
    for name in MODULES:
        with open(_find_module(modules_dir, name), 'rb') as module:
            archive.file('lib/modules/%s.ko' % name, module.read(), 0o644)
    for path, text in _scripts().items():
        archive.file(path, text.encode(), 0o755)
    return gzip.compress(archive.finish(), compresslevel=6, mtime=0)


class CpioWriter:
    """Writes the "newc" (SVR4, no CRC) cpio format that the kernel unpacks."""

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._ino = 1

    def directory(self, name: str) -> None:
        self._entry(name, stat.S_IFDIR | 0o755, b'', nlink=2)

    def file(self, name: str, data: bytes, perm: int) -> None:
        self._entry(name, stat.S_IFREG | perm, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def device(self, name: str, mode: int, major: int, minor: int) -> None:
        self._entry(name, mode, b'', rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry('TRAILER!!!', 0, b'', ino=0, nlink=1)
        return self._out.getvalue()

    def _entry(self, name: str, mode: int, data: bytes, nlink: int = 1,
               rdev: tuple[int, int] = (0, 0), ino: int | None = None) -> None:
        encoded = name.encode() + b'\0'
        if ino is None:
            ino, self._ino = self._ino, self._ino + 1
        fields = (ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(encoded), 0)
        header = b'070701' + b''.join(b'%08X' % value for value in fields)
        self._out.write(header + encoded)
        self._pad()
        self._out.write(data)
        self._pad()

    def _pad(self) -> None:
        self._out.write(b'\0' * (-self._out.tell() % 4))
