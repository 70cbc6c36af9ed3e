"""What novalite relies on inside its libraries, beyond their public API.

Each test names the override or the code that needs it. A test that fails after a
library upgrade means that code must change with the library (not that the test is
wrong): novalite/objects/base.py (oslo.versionedobjects' storage of field values and
changes, and the keys of a primitive) and novalite/db/engine.py (oslo.db's SQLite
transaction mark).
"""
from __future__ import annotations

import datetime
import inspect

import pytest
from oslo_versionedobjects import base as ovo_base
from sqlalchemy import event, text

from novalite import context as nl_context
from novalite import objects
from novalite.db import engine
from novalite.objects import base

objects.register_all()


def _flavor() -> objects.Flavor:
    return objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                          root_gb=1, ephemeral_gb=0, swap=0, extra_specs={'a': 'b'})


# -- oslo.versionedobjects: NovaliteObject.obj_attr_is_set / obj_what_changed /
#    obj_to_primitive, and base.fresh_copy ------------------------------------------

def test_a_field_value_is_stored_in_obj_underscore_name_of_the_instance_dict():
    assert ovo_base._get_attrname('memory_mb') == '_obj_memory_mb'
    flavor = _flavor()
    assert flavor.__dict__['_obj_memory_mb'] == 512
    assert '_obj_description' not in flavor.__dict__  # unset: absent, not None


def test_changed_field_names_are_the_set_changed_fields_of_the_instance_dict():
    flavor = _flavor()
    assert isinstance(flavor.__dict__['_changed_fields'], set)
    assert 'memory_mb' in flavor._changed_fields
    flavor.obj_reset_changes()
    assert flavor._changed_fields == set()
    flavor.vcpus = 2
    assert flavor._changed_fields == {'vcpus'}


def test_primitive_keys_come_from_obj_primitive_key():
    method = ovo_base.VersionedObject._obj_primitive_key
    assert list(inspect.signature(method).parameters) == ['field']
    assert objects.Flavor._obj_primitive_key('data') == 'novalite_object.data'
    assert set(ovo_base.VersionedObject.obj_to_primitive(_flavor())) == {
        'novalite_object.name', 'novalite_object.namespace', 'novalite_object.version',
        'novalite_object.data', 'novalite_object.changes'}


def test_the_library_methods_novalite_overrides_keep_their_signatures():
    """Ours call super() with these arguments (obj_to_primitive's backport path)."""
    signature = inspect.signature(ovo_base.VersionedObject.obj_to_primitive)
    assert list(signature.parameters) == ['self', 'target_version', 'version_manifest']
    assert list(inspect.signature(ovo_base.VersionedObject.obj_attr_is_set).parameters) \
        == ['self', 'attrname']
    assert list(inspect.signature(ovo_base.VersionedObject.obj_reset_changes).parameters) \
        == ['self', 'fields', 'recursive']
    assert list(inspect.signature(
        ovo_base.VersionedObjectRegistry.registration_hook).parameters) == [
        'self', 'cls', 'index']


def test_an_object_s_whole_state_is_its_instance_dict():
    """fresh_copy builds a copy from the __dict__ alone (no __slots__, no state kept
    elsewhere): it must answer as the library's own obj_clone."""
    ctxt = nl_context.RequestContext('u1', 'p1')
    instance = objects.Instance(ctxt, uuid='1c1c0f9a-0d0a-4e0e-9d5b-3c7e0b9f4a11',
                                host='h1', metadata={'k': 'v'}, flavor=_flavor(),
                                launched_at=datetime.datetime(2026, 1, 2,
                                                              tzinfo=datetime.UTC))
    instance.obj_reset_changes(['host'])
    assert not any('__slots__' in vars(cls) for cls in type(instance).__mro__
                   if cls is not object)
    copied, cloned = base.fresh_copy(instance), instance.obj_clone()
    assert copied.obj_to_primitive() == cloned.obj_to_primitive()
    assert copied.obj_what_changed() == cloned.obj_what_changed()
    assert copied._context is instance._context
    copied.metadata['k'] = 'changed'
    assert instance.metadata == {'k': 'v'}


def test_remotable_methods_read_indirection_api_from_the_class():
    """objects/base.py's _IndirectionAPI is a descriptor on that class attribute."""
    calls = []

    class Recording:
        def object_class_action_versions(self, context, objname, objmethod, versions,
                                         args, kwargs):
            calls.append((objname, objmethod))
            return 'remote'

    with base.indirection(Recording()):
        assert objects.ComputeNode.get_by_host_and_nodename(
            nl_context.get_admin_context(), 'h1', 'n1') == 'remote'
    assert calls == [('ComputeNode', 'get_by_host_and_nodename')]


# -- oslo.db: engine._sqlite_transactions ---------------------------------------------

def test_oslo_db_begins_sqlite_transactions_in_a_listener_named_sqlite_emit_begin(
        tmp_path):
    """engine._sqlite_transactions removes it by that name (SQLAlchemy offers no way to
    run a listener of ours before it: listen()'s insert=True is dropped for connection
    events), then checks that no other 'begin' listener is left."""
    from oslo_db.sqlalchemy import engines
    eng = engines.create_engine('sqlite:///%s' % (tmp_path / 'raw.db'), max_retries=0)
    try:
        assert [getattr(fn, '__name__', None) for fn in eng.dispatch.begin] == [
            '_sqlite_emit_begin']
    finally:
        eng.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'pins.db')
    yield url
    engine.dispose_all()


def _statements_of_one_transaction(url: str, writer: bool) -> list[str]:
    eng = engine.get_engine(url, writer=writer)
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)
    event.listen(eng, 'before_cursor_execute', record)
    try:
        with eng.begin() as conn:
            conn.execute(text('CREATE TABLE IF NOT EXISTS t (x INTEGER)'))
        return seen
    finally:
        event.remove(eng, 'before_cursor_execute', record)


def test_a_writer_begins_immediate_and_a_reader_deferred_once(sqlite_url):
    """Ours replaces oslo.db's deferred BEGIN: a writer begins IMMEDIATE, a reader
    deferred, once each."""
    assert _statements_of_one_transaction(sqlite_url, writer=True) == [
        'BEGIN IMMEDIATE', 'CREATE TABLE IF NOT EXISTS t (x INTEGER)']
    assert _statements_of_one_transaction(sqlite_url, writer=False) == [
        'BEGIN', 'CREATE TABLE IF NOT EXISTS t (x INTEGER)']


def test_the_transaction_mark_is_cleared_at_the_end(sqlite_url):
    eng = engine.get_engine(sqlite_url, writer=True)
    with eng.connect() as conn:
        with conn.begin():
            assert conn.info.get('in_transaction') is True
        assert 'in_transaction' not in conn.info
        with conn.begin():  # a second transaction on the same connection begins again
            conn.execute(text('SELECT 1'))
