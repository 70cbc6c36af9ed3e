"""Pre-caching images by request: the libvirt driver's image cache and the fake
driver's record, and what the compute host answers per image."""
from __future__ import annotations

import os
import types

import pytest

from novalite import exception
from novalite.compute import image_cache
from novalite.virt import fake, imagecache

DATA = os.urandom(64 * 1024)


def test_image_cache_downloads_once_then_reports_existing(tmp_path, ctxt, image_server):
    image = image_server.add_image(DATA)
    cache = imagecache.ImageCache(str(tmp_path))
    assert cache.cache(ctxt, image['id']) is True
    assert cache.cache(ctxt, image['id']) is False
    assert image_server.file_gets == {image['id']: 1}
    with open(cache.path(image['id']), 'rb') as cached:
        assert cached.read() == DATA


def test_image_cache_of_an_unknown_image_raises(tmp_path, ctxt, image_server):
    with pytest.raises(exception.ImageNotFound):
        imagecache.ImageCache(str(tmp_path)).cache(ctxt, 'no-such-image')
    assert imagecache.ImageCache(str(tmp_path)).cached_images() == []


def test_fake_driver_records_the_cached_images():
    drv = fake.FakeDriver()
    assert drv.cache_image(None, 'a') is True
    assert drv.cache_image(None, 'a') is False
    assert drv.cached_images == {'a'}


class _Driver:
    def __init__(self, answers):
        self.answers = answers

    def cache_image(self, context, image_id):
        answer = self.answers[image_id]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def test_compute_answers_per_image():
    mgr = types.SimpleNamespace(driver=_Driver({
        'new': True, 'old': False, 'gone': exception.ImageNotFound(image_id='gone')}))
    assert image_cache.cache_images(mgr, None, ['new', 'old', 'gone']) == {
        'new': 'cached', 'old': 'existing', 'gone': 'error'}


def test_compute_of_a_driver_without_image_cache_answers_unsupported():
    mgr = types.SimpleNamespace(driver=_Driver({'a': NotImplementedError()}))
    assert image_cache.cache_images(mgr, None, ['a']) == {'a': 'unsupported'}
