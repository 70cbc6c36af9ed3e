"""NovaliteObject's obj_to_primitive, obj_what_changed and obj_attr_is_set answer as
oslo.versionedobjects' own do: the same primitives, the same changes."""
from __future__ import annotations

import datetime
import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.objects import base

objects.register_all()

OVERRIDDEN = ('obj_to_primitive', 'obj_what_changed', 'obj_attr_is_set')


def _library(monkeypatch, build):
    """What oslo.versionedobjects' own methods answer for the object ``build`` makes."""
    with monkeypatch.context() as patched:
        for name in OVERRIDDEN:
            patched.delattr(base.NovaliteObject, name)
        obj = build()
        return obj.obj_to_primitive(), obj.obj_what_changed()


def _ours(build):
    obj = build()
    return obj.obj_to_primitive(), obj.obj_what_changed()


def _flavor(**changes):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={'a': 'b'})
    flavor.obj_reset_changes()
    for name, value in changes.items():
        setattr(flavor, name, value)
    return flavor


def _instance(flavor):
    ctxt = nl_context.RequestContext('u1', 'p1')
    return objects.Instance(ctxt, uuid='1c1c0f9a-0d0a-4e0e-9d5b-3c7e0b9f4a11', host='h1',
                            project_id='p1', user_id='u1', vm_state='building',
                            launched_at=datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC),
                            metadata={'k': 'v'}, tags=['t'], flavor=flavor)


def _settled_instance_with_changed_flavor():
    instance = _instance(_flavor())
    instance.obj_reset_changes(recursive=True)
    instance.flavor.memory_mb = 1024
    return instance


def _build_request_and_spec():
    ctxt = nl_context.RequestContext('u1', 'p1')
    instance = _instance(_flavor())
    image = objects.ImageMeta.from_dict({'id': str(uuid.UUID(int=7)), 'name': 'img',
                                         'min_ram': 0, 'min_disk': 0, 'size': 10,
                                         'properties': {'hw_x': 'y'}})
    spec = objects.RequestSpec.from_components(ctxt, instance.uuid, image, instance.flavor,
                                               2, scheduler_hints={'group': 'g'})
    return objects.BuildRequest(ctxt, instance_uuid=instance.uuid, project_id='p1',
                                user_id='u1', instance=instance, tags=['t']), spec


BUILDS = {
    'new instance, nested flavor': lambda: _instance(_flavor()),
    'settled instance, its flavor changed': _settled_instance_with_changed_flavor,
    'settled instance, nothing changed': lambda: (
        lambda i: (i.obj_reset_changes(recursive=True), i)[1])(_instance(_flavor())),
    'fields left unset': lambda: objects.Flavor(name='x'),
    'build request with its instance': lambda: _build_request_and_spec()[0],
    'request spec with image and flavor': lambda: _build_request_and_spec()[1],
    'a list of instances': lambda: objects.InstanceList(
        objects=[_instance(_flavor()), _settled_instance_with_changed_flavor()]),
}


@pytest.mark.parametrize('build', list(BUILDS.values()), ids=list(BUILDS))
def test_primitive_and_changes_are_the_library_s(monkeypatch, build):
    expected_primitive, expected_changes = _library(monkeypatch, build)
    primitive, changes = _ours(build)
    assert primitive == expected_primitive
    assert changes == expected_changes


def test_a_nested_change_is_reported_by_the_parent():
    primitive, changes = _ours(_settled_instance_with_changed_flavor)
    assert changes == {'flavor'}
    assert primitive['novalite_object.changes'] == ['flavor']
    assert primitive['novalite_object.data']['flavor']['novalite_object.changes'] == [
        'memory_mb']


def test_primitive_round_trips():
    build_request, _spec = _build_request_and_spec()
    again = base.NovaliteObject.obj_from_primitive(build_request.obj_to_primitive())
    assert again.instance.flavor.extra_specs == {'a': 'b'}
    assert again.obj_to_primitive() == build_request.obj_to_primitive()


def test_an_older_target_version_takes_the_library_s_backport(monkeypatch):
    instance = objects.Instance(uuid=str(uuid.UUID(int=1)), host='h1')
    calls = []
    original = base.ovo_base.VersionedObject.obj_to_primitive

    def recorded(self, target_version=None, version_manifest=None):
        calls.append(target_version)
        return original(self, target_version, version_manifest)

    monkeypatch.setattr(base.ovo_base.VersionedObject, 'obj_to_primitive', recorded)
    assert instance.obj_to_primitive(target_version='1.0')[
        'novalite_object.version'] == '1.0'
    assert instance.obj_to_primitive(target_version=instance.VERSION)[
        'novalite_object.version'] == instance.VERSION
    assert calls == ['1.0']


def test_attr_is_set_of_an_unknown_name_raises():
    with pytest.raises(AttributeError):
        _flavor().obj_attr_is_set('no_such_field')
    assert _flavor().obj_attr_is_set('name')
    assert not objects.Flavor().obj_attr_is_set('name')
