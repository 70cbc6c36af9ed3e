"""The per-host image cache: each Glance image downloaded once into ``_base``.

Concurrent builds of one image wait for the one download (a lock per image, which is
also a file lock, so two compute processes sharing the directory do not download twice
either); a file appears in the cache only complete and verified (the Glance client
writes a temporary file and renames it).
"""
from __future__ import annotations

import hashlib
import os

from oslo_concurrency import lockutils
from oslo_log import log as logging

from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.image import glance

LOG = logging.getLogger(__name__)


def base_name(image_id: str) -> str:
    """The cache file name of an image (a hash of its id, as Nova names base files)."""
    return hashlib.sha1(image_id.encode(), usedforsecurity=False).hexdigest()


class ImageCache:
    """Base images of one host under ``<instances_path>/<image_cache_subdirectory_name>``.

    :param image_api: the Glance client (``get`` and ``download``).
    """

    def __init__(self, instances_path: str | None = None,
                 image_api: glance.API | None = None) -> None:
        self.directory = os.path.join(instances_path or CONF.instances_path,
                                      CONF.image_cache_subdirectory_name)
        self.image_api = image_api or glance.API()

    def path(self, image_id: str) -> str:
        return os.path.join(self.directory, base_name(image_id))

    def fetch(self, context: RequestContext, image_id: str) -> str:
        """The path of the cached image, downloading it first if this host lacks it.

        :raises ImageNotFound, ImageServiceError, GlanceConnectionFailed: from Glance.
        """
        path = self.path(image_id)
        if os.path.exists(path):
            self._touch(path)
            return path
        os.makedirs(self.directory, exist_ok=True)
        # The lock name carries the directory: two simulated hosts in one process have
        # caches of their own and must not wait for each other.
        lock_name = 'image-cache-%s' % base_name(path)
        with lockutils.lock(lock_name, lock_file_prefix='.lock', external=True,
                            lock_path=self.directory):
            if os.path.exists(path):
                LOG.debug('Image %s arrived in the cache while waiting', image_id)
                return path
            image = self.image_api.get(context, image_id)
            LOG.info('Downloading image %s (%s bytes) into the cache of this host',
                     image_id, image.get('size'))
            self.image_api.download(context, image_id, path, image=image)
        return path

    def cache(self, context: RequestContext, image_id: str) -> bool:
        """Make sure the image is in the cache (a pre-cache request).

        :returns: True if it was downloaded now, False if it was there already (its
            time of use is renewed).
        :raises ImageNotFound, ImageServiceError, GlanceConnectionFailed: from Glance.
        """
        if os.path.exists(self.path(image_id)):
            LOG.info('Image %s is cached already; its time of use renewed', image_id)
            os.utime(self.path(image_id))
            return False
        LOG.info('Caching image %s by request', image_id)
        self.fetch(context, image_id)
        return True

    @staticmethod
    def _touch(path: str) -> None:
        """Mark the base as used now (what a cache cleaner would age files by)."""
        try:
            os.utime(path)
        except OSError:
            pass

    def cached_images(self) -> list[str]:
        """File names in the cache (completed downloads only)."""
        if not os.path.isdir(self.directory):
            return []
        # Lock files and partial downloads are hidden (dot) files.
        return sorted(name for name in os.listdir(self.directory) if not name.startswith('.'))
