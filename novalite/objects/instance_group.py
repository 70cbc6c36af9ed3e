"""InstanceGroup: a server group, its placement policy and its members (API database).

The group's ``hosts`` are not stored: they are the hosts of its members, read from the
cells (one query per cell) whenever they are asked for.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from novalite import context as nl_context
from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import delete, main_models, select
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy import Select
    from sqlalchemy.orm import Session

    from novalite.db.api import models as db_models

AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'
SOFT_AFFINITY = 'soft-affinity'
SOFT_ANTI_AFFINITY = 'soft-anti-affinity'
POLICIES = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)
# Seconds to wait for one cell when reading where the members run.
_CELL_TIMEOUT = 60


@base.NovaliteObjectRegistry.register
class InstanceGroup(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    name: str | None
    user_id: str | None
    project_id: str | None
    policy: str | None
    rules: dict[str, int]
    members: list[str]
    hosts: list[str] | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'policy': fields.StringField(nullable=True),
        # The only rule is max_server_per_host (anti-affinity).
        'rules': fields.DictOfIntegersField(default={}),
        'members': fields.ListOfStringsField(default=[]),
        # Derived from the members, never stored; see get_hosts().
        'hosts': fields.ListOfStringsField(nullable=True),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: db_models.InstanceGroup,
                        policy: db_models.InstanceGroupPolicy | None,
                        members: list[str]) -> InstanceGroup:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('policy', 'rules', 'members', 'hosts'))
        obj.policy = policy.policy if policy is not None else None
        obj.rules = base.from_json(policy.rules, {}) if policy is not None else {}
        obj.members = members
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _load(cls, context: RequestContext, session: Session,
              row: db_models.InstanceGroup) -> InstanceGroup:
        policy = session.scalars(select(models.InstanceGroupPolicy)
                                 .filter_by(group_id=row.id)).first()
        members = list(session.scalars(
            select(models.InstanceGroupMember.instance_uuid).filter_by(group_id=row.id)
            .order_by(models.InstanceGroupMember.id)))
        return cls._from_db_object(context, row, policy, members)

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context: RequestContext, uuid: str) -> InstanceGroup:
        """The group ``uuid``, if ``context`` may see it (see ``_visible``).

        :raises InstanceGroupNotFound: no such group, or one of another project
        """
        with engine.api_reader() as session:
            row = session.scalars(_visible(context, select(models.InstanceGroup)
                                           .filter_by(uuid=uuid))).first()
            if row is None:
                raise exception.InstanceGroupNotFound(group_uuid=uuid)
            return cls._load(context, session, row)

    @classmethod
    @base.remotable
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str) -> InstanceGroup:
        """The group ``instance_uuid`` is a member of, if ``context`` may see it."""
        with engine.api_reader() as session:
            row = session.scalars(_visible(
                context, select(models.InstanceGroup)).join(
                    models.InstanceGroupMember,
                    models.InstanceGroupMember.group_id == models.InstanceGroup.id)
                .where(models.InstanceGroupMember.instance_uuid == instance_uuid)).first()
            if row is None:
                raise exception.InstanceGroupNotFound(group_uuid='of instance %s' % instance_uuid)
            return cls._load(context, session, row)

    def obj_load_attr(self, attrname: str) -> None:
        if attrname != 'hosts':
            raise exception.ObjectActionError(action='obj_load_attr',
                                              reason='attribute %s not lazy-loadable'
                                              % attrname)
        self.hosts = self.get_hosts()
        self.obj_reset_changes(['hosts'])

    def create(self) -> None:
        """Insert the group with its policy, rules and initial members."""
        values = self.obj_get_changes()
        if 'id' in values:
            raise exception.ObjectActionError(action='create', reason='already created')
        policy = values.pop('policy', None)
        rules = values.pop('rules', {}) or {}
        members = values.pop('members', []) or []
        values.pop('hosts', None)
        values.setdefault('uuid', uuidutils.generate_uuid())
        if policy is not None and policy not in POLICIES:
            raise exception.Invalid(reason='Unknown server group policy %s; known: %s'
                                    % (policy, ', '.join(POLICIES)))
        with engine.api_writer() as session:
            if session.scalars(select(models.InstanceGroup.id)
                               .filter_by(uuid=values['uuid'])).first() is not None:
                raise exception.InstanceGroupIdExists(group_uuid=values['uuid'])
            row = models.InstanceGroup(**values)
            session.add(row)
            session.flush()
            if policy is not None:
                session.add(models.InstanceGroupPolicy(policy=policy, group_id=row.id,
                                                       rules=base.to_json(rules)))
            for uuid in dict.fromkeys(members):
                session.add(models.InstanceGroupMember(instance_uuid=uuid, group_id=row.id))
            session.flush()
            self._set_from_db(self, row, skip=('policy', 'rules', 'members', 'hosts'))
        self.policy = policy
        self.rules = rules
        self.members = list(dict.fromkeys(members))
        self.obj_reset_changes()

    @classmethod
    def add_members(cls, context: RequestContext, group_uuid: str, instance_uuids: list[str],
                    session: Session | None = None) -> list[str]:
        """Add ``instance_uuids`` to the group (in ``session``'s transaction if given).

        :returns: the uuids that were not members yet.
        """
        if session is None:
            with engine.api_writer() as own:
                return cls._add_members(own, group_uuid, instance_uuids)
        return cls._add_members(session, group_uuid, instance_uuids)

    @staticmethod
    def _add_members(session: Session, group_uuid: str, instance_uuids: list[str]) -> list[str]:
        group_id = session.scalars(select(models.InstanceGroup.id)
                                   .filter_by(uuid=group_uuid)).first()
        if group_id is None:
            raise exception.InstanceGroupNotFound(group_uuid=group_uuid)
        existing = set(session.scalars(select(models.InstanceGroupMember.instance_uuid)
                                       .filter_by(group_id=group_id)))
        added = [u for u in dict.fromkeys(instance_uuids) if u not in existing]
        for uuid in added:
            session.add(models.InstanceGroupMember(instance_uuid=uuid, group_id=group_id))
        session.flush()
        return added

    @base.remotable
    def get_hosts(self, exclude: list[str] | None = None) -> list[str]:
        """The hosts the members (less ``exclude``) run on, looked up in every cell.

        Members not scheduled yet (no host) and deleted ones are left out.
        """
        uuids = [u for u in self.members if u not in set(exclude or ())]
        if not uuids:
            return []
        from novalite.objects.cell_mapping import CellMappingList
        cells = [c for c in CellMappingList.get_all(self._context) if not c.is_cell0]
        results = nl_context.scatter_gather_cells(self._context, cells, _CELL_TIMEOUT,
                                                  _member_hosts, uuids)
        hosts: set[str] = set()
        for cell_uuid, result in results.items():
            if result is nl_context.did_not_respond_sentinel or isinstance(result, Exception):
                raise exception.NovaliteException(
                    'Cell %s did not say where the members of group %s run: %s'
                    % (cell_uuid, self.uuid, result))
            hosts.update(result)
        return sorted(hosts)

    def get_live_members(self) -> list[str]:
        """The members not deleted, in membership order.

        Deleting a server leaves its membership row (as in Nova, it goes when the
        instance is archived), so readers of the group ask the cells; a member still
        being scheduled counts unless its deletion was asked for.
        """
        if not self.members:
            return []
        from novalite.objects.instance_mapping import InstanceMappingList
        live: set[str] = set()
        by_cell: dict[str, tuple[Any, list[str]]] = {}
        for mapping in InstanceMappingList.get_by_instance_uuids(self._context,
                                                                 list(self.members)):
            if mapping.cell_mapping is None:
                if not mapping.queued_for_delete:
                    live.add(mapping.instance_uuid)
                continue
            by_cell.setdefault(mapping.cell_mapping.uuid,
                               (mapping.cell_mapping, []))[1].append(mapping.instance_uuid)
        for cell, uuids in by_cell.values():
            with nl_context.target_cell(self._context, cell) as cctxt:
                live.update(_not_deleted(cctxt, uuids))
        return [u for u in self.members if u in live]

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.InstanceGroup)
                                  .filter_by(uuid=self.uuid)).first()
            if row is None:
                raise exception.InstanceGroupNotFound(group_uuid=self.uuid)
            for table in (models.InstanceGroupMember, models.InstanceGroupPolicy):
                session.execute(delete(table).where(table.group_id == row.id))
            session.delete(row)


def _visible(context: RequestContext, query: Select[Any]) -> Select[Any]:
    """``query`` narrowed to the groups ``context`` may see: its project's, or every
    group for an administrator. Another project's group does not exist for a caller,
    as in Nova: a show or a ``group`` hint answers as for an unknown uuid, so group
    uuids cannot be probed and no project can put servers in another's group."""
    if context.is_admin:
        return query
    return query.filter(models.InstanceGroup.project_id == context.project_id)


def _not_deleted(cctxt: RequestContext, uuids: list[str]) -> set[str]:
    with engine.cell_reader(cctxt) as session:
        return set(session.scalars(
            select(main_models.Instance.uuid).where(
                main_models.Instance.uuid.in_(uuids), main_models.Instance.deleted == 0)))


def _member_hosts(cctxt: RequestContext, uuids: list[str]) -> set[str]:
    with engine.cell_reader(cctxt) as session:
        return set(session.scalars(
            select(main_models.Instance.host).where(
                main_models.Instance.uuid.in_(uuids), main_models.Instance.deleted == 0,
                main_models.Instance.host.is_not(None)).distinct()))


@base.NovaliteObjectRegistry.register
class InstanceGroupList(base.ObjectListBase['InstanceGroup'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('InstanceGroup')}

    @classmethod
    def _get(cls, context: RequestContext, project_id: str | None) -> InstanceGroupList:
        query = select(models.InstanceGroup).order_by(models.InstanceGroup.id)
        if project_id is not None:
            query = query.filter_by(project_id=project_id)
        with engine.api_reader() as session:
            rows = list(session.scalars(query))
            ids = [r.id for r in rows]
            policies = {p.group_id: p for p in session.scalars(
                select(models.InstanceGroupPolicy)
                .where(models.InstanceGroupPolicy.group_id.in_(ids)))}
            members: dict[int, list[str]] = {i: [] for i in ids}
            for group_id, uuid in session.execute(
                    select(models.InstanceGroupMember.group_id,
                           models.InstanceGroupMember.instance_uuid)
                    .where(models.InstanceGroupMember.group_id.in_(ids))
                    .order_by(models.InstanceGroupMember.id)):
                members[group_id].append(uuid)
        return cls(context, objects=[
            InstanceGroup._from_db_object(context, r, policies.get(r.id), members[r.id])
            for r in rows])

    @classmethod
    def get_all(cls, context: RequestContext) -> InstanceGroupList:
        return cls._get(context, None)

    @classmethod
    def get_by_project_id(cls, context: RequestContext, project_id: str) -> InstanceGroupList:
        return cls._get(context, project_id)
