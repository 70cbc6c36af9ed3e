"""InstanceGroup and InstanceGroupList against migrated SQLite API and cell databases."""
from __future__ import annotations

import uuid

import pytest

from novalite import exception, objects
from novalite.objects import base


def _group(dbs, policy='anti-affinity', members=(), project_id='p1', **kwargs):
    group = objects.InstanceGroup(dbs.context, name='g', user_id='u1', project_id=project_id,
                                  policy=policy, members=list(members), **kwargs)
    group.create()
    return group


def test_create_and_get_by_uuid_round_trip(dbs):
    members = [str(uuid.uuid4()), str(uuid.uuid4())]
    group = _group(dbs, rules={'max_server_per_host': 2}, members=members)

    loaded = objects.InstanceGroup.get_by_uuid(dbs.context, group.uuid)

    assert (loaded.id, loaded.name, loaded.user_id, loaded.project_id) == (
        group.id, 'g', 'u1', 'p1')
    assert loaded.policy == 'anti-affinity'
    assert loaded.rules == {'max_server_per_host': 2}
    assert loaded.members == members
    assert loaded.created_at is not None


def test_unknown_policy_and_duplicate_uuid_are_refused(dbs):
    with pytest.raises(exception.Invalid, match='Unknown server group policy'):
        _group(dbs, policy='best-effort')
    group = _group(dbs)
    with pytest.raises(exception.InstanceGroupIdExists):
        _group(dbs, uuid=group.uuid)


def test_get_by_instance_uuid(dbs):
    member = str(uuid.uuid4())
    _group(dbs, members=[str(uuid.uuid4())])
    group = _group(dbs, members=[member])

    assert objects.InstanceGroup.get_by_instance_uuid(dbs.context, member).uuid == group.uuid
    with pytest.raises(exception.InstanceGroupNotFound):
        objects.InstanceGroup.get_by_instance_uuid(dbs.context, str(uuid.uuid4()))


def test_add_members_skips_existing_ones(dbs):
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    group = _group(dbs, members=[first])

    added = objects.InstanceGroup.add_members(dbs.context, group.uuid, [first, second, second])

    assert added == [second]
    assert objects.InstanceGroup.get_by_uuid(dbs.context, group.uuid).members == [first, second]
    with pytest.raises(exception.InstanceGroupNotFound):
        objects.InstanceGroup.add_members(dbs.context, str(uuid.uuid4()), [first])


def test_hosts_are_read_from_the_cells(dbs):
    on_h1 = dbs.add_instance('h1')
    also_h1 = dbs.add_instance('h1')
    on_h2 = dbs.add_instance('h2')
    unscheduled = dbs.add_instance(None)
    deleted = dbs.add_instance('h3', deleted=True)
    outsider = dbs.add_instance('h4')
    group = _group(dbs, members=[on_h1, also_h1, on_h2, unscheduled, deleted])

    assert outsider not in group.members
    assert group.get_hosts() == ['h1', 'h2']
    assert group.get_hosts(exclude=[on_h2]) == ['h1']
    # Not stored: loaded on first use.
    loaded = objects.InstanceGroup.get_by_uuid(dbs.context, group.uuid)
    assert not loaded.obj_attr_is_set('hosts')
    assert loaded.hosts == ['h1', 'h2']


def test_group_travels_inside_a_request_spec(dbs):
    group = _group(dbs, policy='affinity', members=[str(uuid.uuid4())])
    group.hosts = ['h1']
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    spec = objects.RequestSpec(instance_uuid=str(uuid.uuid4()), flavor=flavor,
                               instance_group=group)

    copy = base.obj_from_json(base.obj_to_json(spec))

    assert copy.instance_group.uuid == group.uuid
    assert copy.instance_group.policy == 'affinity'
    assert copy.instance_group.hosts == ['h1']


def test_destroy_and_list(dbs):
    kept = _group(dbs, members=[str(uuid.uuid4())])
    other = _group(dbs, project_id='p2', policy='soft-affinity')
    gone = _group(dbs, members=[str(uuid.uuid4())])

    gone.destroy()

    with pytest.raises(exception.InstanceGroupNotFound):
        objects.InstanceGroup.get_by_uuid(dbs.context, gone.uuid)
    with pytest.raises(exception.InstanceGroupNotFound):
        gone.destroy()
    assert [g.uuid for g in objects.InstanceGroupList.get_all(dbs.context)] == [
        kept.uuid, other.uuid]
    listed = objects.InstanceGroupList.get_by_project_id(dbs.context, 'p1')
    assert [(g.uuid, g.members, g.policy) for g in listed] == [
        (kept.uuid, kept.members, 'anti-affinity')]


def test_another_projects_group_is_not_found_for_non_admins(dbs):
    from novalite import context as nl_context
    member = str(uuid.uuid4())
    group = _group(dbs, members=[member], project_id='p1')
    owner = nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])
    other = nl_context.RequestContext(user_id='u2', project_id='p2', roles=['member'])

    assert objects.InstanceGroup.get_by_uuid(owner, group.uuid).uuid == group.uuid
    assert objects.InstanceGroup.get_by_instance_uuid(owner, member).uuid == group.uuid
    # As for a uuid nobody used: a show, a delete or a boot hint cannot tell them apart.
    with pytest.raises(exception.InstanceGroupNotFound):
        objects.InstanceGroup.get_by_uuid(other, group.uuid)
    with pytest.raises(exception.InstanceGroupNotFound):
        objects.InstanceGroup.get_by_instance_uuid(other, member)
    assert objects.InstanceGroup.get_by_uuid(dbs.context, group.uuid).uuid == group.uuid
