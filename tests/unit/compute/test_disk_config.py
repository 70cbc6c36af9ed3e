"""A server's disk config against its image's auto_disk_config property."""
from __future__ import annotations

import pytest

from novalite import exception, objects
from novalite.compute import disk_config

IMAGE = 'a2459075-d96c-40d5-893e-577ff92e721c'


def _image(**props):
    return dict({'id': IMAGE, 'name': 'img', 'status': 'active'}, **props)


@pytest.mark.parametrize('prop,asked,expected', [
    (None, None, False), (None, True, True), (None, False, False),
    ('True', None, True), ('true', False, False), ('False', None, False),
    ('disabled', None, False), ('Disabled ', False, False), ('junk', None, False)])
def test_for_image(prop, asked, expected):
    props = {} if prop is None else {'auto_disk_config': prop}
    assert disk_config.for_image(_image(**props), asked) is expected


@pytest.mark.parametrize('prop', ['disabled', ' DISABLED'])
def test_auto_on_an_image_that_disables_it_is_refused(prop):
    with pytest.raises(exception.AutoDiskConfigDisabledByImage) as caught:
        disk_config.for_image(_image(auto_disk_config=prop), True)
    assert caught.value.format_message() == (
        'Requested image %s has automatic disk resize disabled.' % IMAGE)


def test_a_resize_checks_the_image_the_server_was_built_from():
    objects.register_all()
    instance = objects.Instance(system_metadata={'image_auto_disk_config': 'disabled',
                                                 'image_base_image_ref': IMAGE})
    disk_config.check_instance(instance, None)
    disk_config.check_instance(instance, False)
    with pytest.raises(exception.AutoDiskConfigDisabledByImage):
        disk_config.check_instance(instance, True)
    disk_config.check_instance(objects.Instance(system_metadata={}), True)
