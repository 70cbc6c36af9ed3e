"""The image cache and the Glance download under it, against an HTTP Glance double."""
from __future__ import annotations

import os
import threading

import pytest

from novalite import exception
from novalite.image import glance
from novalite.virt import imagecache

DATA = os.urandom(300 * 1024)


def _hidden(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith('.') and n.endswith('.part')]


def test_download_streams_verified_data_to_the_path(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    dst = tmp_path / 'img'
    glance.API().download(ctxt, image['id'], str(dst))
    assert dst.read_bytes() == DATA
    assert _hidden(tmp_path) == []


def test_download_retries_a_server_error(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    image_server.fail_next[image['id']] = 1
    glance.API().download(ctxt, image['id'], str(tmp_path / 'img'))
    assert image_server.file_gets[image['id']] == 2
    assert (tmp_path / 'img').read_bytes() == DATA


def test_download_gives_up_after_the_retries(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    image_server.fail_next[image['id']] = 2
    with pytest.raises(exception.ImageServiceError, match='answered 500'):
        glance.API().download(ctxt, image['id'], str(tmp_path / 'img'))
    assert not (tmp_path / 'img').exists()
    assert _hidden(tmp_path) == []


def test_data_that_does_not_match_the_hash_never_lands(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    image_server.corrupt.add(image['id'])
    with pytest.raises(exception.ImageServiceError, match='sha512 of the data'):
        glance.API().download(ctxt, image['id'], str(tmp_path / 'img'))
    assert os.listdir(tmp_path) == []


def test_md5_checksum_is_used_without_os_hash(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA, os_hash_algo=None, os_hash_value=None)
    image_server.corrupt.add(image['id'])
    with pytest.raises(exception.ImageServiceError, match='md5 of the data'):
        glance.API().download(ctxt, image['id'], str(tmp_path / 'img'))


def test_size_mismatch_is_refused(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA, size=len(DATA) + 1)
    with pytest.raises(exception.ImageServiceError, match='got %d bytes' % len(DATA)):
        glance.API().download(ctxt, image['id'], str(tmp_path / 'img'))


def test_unknown_image_is_not_found(tmp_path, ctxt, image_server):
    with pytest.raises(exception.ImageNotFound):
        imagecache.ImageCache(str(tmp_path)).fetch(
            ctxt, '0d2c1f53-0e5e-4e4f-8c44-5f6a7b8c9d0e')


def test_glance_unreachable_is_a_connection_failure(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    image_server.stop()
    with pytest.raises(exception.GlanceConnectionFailed):
        glance.API().download(ctxt, image['id'], str(tmp_path / 'img'), image=image)


def test_cache_downloads_once_for_concurrent_fetches(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    image_server.delay = 0.3
    cache = imagecache.ImageCache(str(tmp_path))
    paths: list[str] = []
    threads = [threading.Thread(target=lambda: paths.append(cache.fetch(ctxt, image['id'])))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert image_server.file_gets == {image['id']: 1}
    assert len(paths) == 6 and set(paths) == {cache.path(image['id'])}
    with open(paths[0], 'rb') as f:
        assert f.read() == DATA
    assert cache.cached_images() == [imagecache.base_name(image['id'])]
    # A later fetch finds it without asking Glance for the data again.
    cache.fetch(ctxt, image['id'])
    assert image_server.file_gets == {image['id']: 1}


def test_caches_in_different_directories_download_on_their_own(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    imagecache.ImageCache(str(tmp_path / 'a')).fetch(ctxt, image['id'])
    imagecache.ImageCache(str(tmp_path / 'b')).fetch(ctxt, image['id'])
    assert image_server.file_gets[image['id']] == 2
