"""Instance disks: a qcow2 overlay on the cached base image, or a raw copy of it.

``qemu-img`` makes and inspects the disks. Without it, the driver degrades explicitly:
on the ``test`` virt type (which never reads a disk) disks become plain sparse files;
for a real hypervisor only a raw copy of a raw base can be made.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import os
import shutil
from typing import Any

from oslo_concurrency import processutils
from oslo_log import log as logging

from novalite import exception

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3
# Glance disk formats that are raw data under another name.
_RAW_ALIASES = ('raw', 'ami', 'aki', 'ari')


class _Default(enum.Enum):
    """``qemu_img`` not given: look it up on ``PATH``."""
    TOKEN = 0


_DEFAULT = _Default.TOKEN


@dataclasses.dataclass
class Disk:
    """A disk file of an instance and the format libvirt must open it with."""

    path: str
    format: str


class Backend:
    """Makes the disks of instances.

    :param images_type: ``qcow2`` (overlay on the base) or ``raw`` (a full copy).
    :param virt_type: the libvirt virt type; ``test`` allows placeholder disks.
    :param qemu_img: path of the qemu-img binary; by default looked up on ``PATH``,
        ``None`` for none.
    """

    def __init__(self, images_type: str, virt_type: str,
                 qemu_img: str | None | _Default = _DEFAULT) -> None:
        self.images_type = images_type
        self.virt_type = virt_type
        self.qemu_img: str | None = (shutil.which('qemu-img') if qemu_img is _DEFAULT
                                     else qemu_img)
        if self.qemu_img is None:
            if virt_type == 'test':
                LOG.warning('qemu-img not found: instance disks will be plain sparse files '
                            '(enough for the libvirt test driver, which reads no disk)')
            else:
                LOG.warning('qemu-img not found: only raw copies of raw images can be '
                            'made (install qemu-utils for qcow2 overlays)')

    # -- inspection --------------------------------------------------------------------

    def info(self, path: str) -> dict[str, Any]:
        """``qemu-img info`` of ``path`` (format, virtual-size, backing file)."""
        assert self.qemu_img is not None
        out, _err = self._run('info', '--output=json', path, path=path)
        return json.loads(out)

    def check_base(self, base_path: str, disk_format: str | None) -> tuple[str, int]:
        """The base's real format and virtual size in bytes, refusing an image whose
        content does not match what Glance says it is (a 'raw' image holding a qcow2
        header could point the hypervisor at any file of the host)."""
        claimed = 'raw' if (disk_format or 'raw') in _RAW_ALIASES else disk_format
        if self.qemu_img is None:
            return claimed or 'raw', os.path.getsize(base_path)
        info = self.info(base_path)
        if info.get('format') != claimed:
            raise exception.ImageServiceError(
                reason='image data is %s but its disk_format is %s'
                % (info.get('format'), disk_format))
        if info.get('backing-filename'):
            raise exception.ImageServiceError(reason='image has a backing file of its own')
        return claimed or 'raw', int(info['virtual-size'])

    # -- creation ----------------------------------------------------------------------

    def create_root(self, base_path: str, disk_format: str | None, path: str,
                    size_gb: int) -> Disk:
        """The root disk at ``path`` from the base image, grown to ``size_gb`` (0 keeps
        the image's size).

        :raises FlavorDiskTooSmall: the image is bigger than the flavor's disk.
        """
        if self.qemu_img is None and self.virt_type == 'test':
            return self._placeholder(path, size_gb)
        base_format, virtual_size = self.check_base(base_path, disk_format)
        size = size_gb * GiB
        if size and size < virtual_size:
            raise exception.FlavorDiskTooSmall()
        if self.images_type == 'qcow2':
            if self.qemu_img is None:
                raise exception.DiskCreationFailed(path=path, reason='qemu-img is not installed')
            args = ['create', '-f', 'qcow2', '-F', base_format, '-b', base_path, path]
            self._run(*(args + ([str(size)] if size else [])), path=path)
            return Disk(path, 'qcow2')
        if base_format == 'raw':
            shutil.copyfile(base_path, path)
        elif self.qemu_img is not None:
            self._run('convert', '-f', base_format, '-O', 'raw', base_path, path, path=path)
        else:
            raise exception.DiskCreationFailed(
                path=path, reason='converting %s to raw needs qemu-img' % base_format)
        if size > os.path.getsize(path):
            os.truncate(path, size)
        return Disk(path, 'raw')

    def create_blank(self, path: str, size_gb: int) -> Disk:
        """An empty disk (ephemeral) of ``size_gb``, unformatted."""
        if self.images_type == 'qcow2' and self.qemu_img is not None:
            self._run('create', '-f', 'qcow2', path, str(size_gb * GiB), path=path)
            return Disk(path, 'qcow2')
        with open(path, 'wb'):
            pass
        os.truncate(path, size_gb * GiB)
        return Disk(path, 'raw')

    @staticmethod
    def _placeholder(path: str, size_gb: int) -> Disk:
        with open(path, 'wb'):
            pass
        os.truncate(path, size_gb * GiB)
        return Disk(path, 'raw')

    def _run(self, *args: str, path: str) -> tuple[str, str]:
        # Callers make the disk without qemu-img when there is none.
        assert self.qemu_img is not None
        try:
            return processutils.execute(self.qemu_img, *args)
        except processutils.ProcessExecutionError as exc:
            raise exception.DiskCreationFailed(path=path, reason=(exc.stderr or str(exc)).strip()) \
                from exc

    def snapshot_disk(self, disk: Disk, out_path: str, force_share: bool = False) -> Disk:
        """A standalone copy of ``disk`` at ``out_path`` in the disk's own format (a
        qcow2 overlay comes out flattened, without its backing file), as Nova's
        snapshots are when ``snapshot_image_format`` is unset.

        :param force_share: read a disk that a running QEMU holds open (``-U``).
        """
        if self.qemu_img is None:
            if self.virt_type != 'test':
                raise exception.DiskCreationFailed(
                    path=out_path, reason='snapshots need qemu-img (install qemu-utils)')
            # The test driver never wrote the placeholder: a small one stands for it.
            with open(out_path, 'wb') as out:
                out.write(b'\0' * 65536)
            return Disk(out_path, 'raw')
        args = ['convert', '-f', disk.format, '-O', disk.format]
        if force_share:
            args.append('-U')
        self._run(*(args + [disk.path, out_path]), path=out_path)
        return Disk(out_path, disk.format)
