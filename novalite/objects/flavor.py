"""Flavor: the size of a server (API database)."""
from __future__ import annotations

import functools
import types
from typing import Any

from oslo_db import exception as db_exc
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import or_, select
from novalite.objects import base


@functools.cache
def _reads() -> types.SimpleNamespace:
    """One flavor by a unique column, and the extra specs and projects of flavors in one
    UNION: Core statements built once, on first use (every server create reads its
    flavor; the ORM's row, and a query for each of its two collections, cost three
    times as much)."""
    import sqlalchemy as sa

    from novalite.db.api import models as m
    flavors = m.Flavor.__table__
    specs, projects = m.FlavorExtraSpecs.__table__, m.FlavorProjects.__table__
    ids: sa.BindParameter[list[int]] = sa.bindparam('ids', expanding=True)
    return types.SimpleNamespace(
        by={column: sa.select(flavors).where(flavors.c[column] == sa.bindparam('value'))
            for column in ('id', 'flavorid', 'name')},
        parts=sa.union_all(
            sa.select(sa.literal('s').label('kind'), specs.c.flavor_id, specs.c.key,
                      specs.c.value).where(specs.c.flavor_id.in_(ids)),
            sa.select(sa.literal('p'), projects.c.flavor_id, projects.c.project_id,
                      sa.null()).where(projects.c.flavor_id.in_(ids))))


def _read_one(context: RequestContext, column: str, value: int | str) -> Flavor | None:
    with engine.api_connection() as connection:
        reads = _reads()
        row = connection.execute(reads.by[column], {'value': value}).first()
        if row is None:
            return None
        specs: dict[str, str] = {}
        projects: list[str] = []
        for kind, _flavor_id, key, spec in connection.execute(reads.parts, {'ids': [row.id]}):
            if kind == 's':
                specs[key] = spec
            else:
                projects.append(key)
    obj = Flavor(context)
    Flavor._set_from_db(obj, row, skip=('extra_specs', 'projects'))
    obj.extra_specs = specs
    obj.projects = projects
    obj.obj_reset_changes()
    return obj


@base.NovaliteObjectRegistry.register
class Flavor(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    name: str | None
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int
    flavorid: str
    swap: int
    rxtx_factor: float | None
    vcpu_weight: int | None
    disabled: bool
    is_public: bool
    extra_specs: dict[str, str]
    projects: list[str]
    description: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'name': fields.StringField(nullable=True),
        'memory_mb': fields.IntegerField(),
        'vcpus': fields.IntegerField(),
        'root_gb': fields.IntegerField(),
        'ephemeral_gb': fields.IntegerField(),
        'flavorid': fields.StringField(),
        'swap': fields.IntegerField(),
        'rxtx_factor': fields.FloatField(nullable=True, default=1.0),
        'vcpu_weight': fields.IntegerField(nullable=True),
        'disabled': fields.BooleanField(default=False),
        'is_public': fields.BooleanField(default=True),
        'extra_specs': fields.DictOfStringsField(default={}),
        'projects': fields.ListOfStringsField(default=[]),
        'description': fields.StringField(nullable=True),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row) -> Flavor:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('extra_specs', 'projects'))
        obj.extra_specs = {s.key: s.value for s in row.extra_specs}
        obj.projects = [p.project_id for p in row.projects]
        obj.obj_reset_changes()
        return obj

    @classmethod
    def _get_by(cls, context: RequestContext, not_found: dict, **filters: int | str) -> Flavor:
        [(column, value)] = filters.items()
        flavor = _read_one(context, column, value)
        if flavor is None:
            raise exception.FlavorNotFound(**not_found)
        return flavor

    @classmethod
    def get_by_id(cls, context: RequestContext, id: int) -> Flavor:
        return cls._get_by(context, {'flavor_id': id}, id=id)

    @classmethod
    def get_by_flavor_id(cls, context: RequestContext, flavorid: str,
                         read_deleted: str | None = None) -> Flavor:
        return cls._get_by(context, {'flavor_id': flavorid}, flavorid=flavorid)

    @classmethod
    def get_by_name(cls, context: RequestContext, name: str) -> Flavor:
        return cls._get_by(context, {'flavor_id': name}, name=name)

    def create(self) -> None:
        values = self.obj_get_changes()
        extra_specs = values.pop('extra_specs', {}) or {}
        projects = values.pop('projects', []) or []
        try:
            with engine.api_writer() as session:
                row = models.Flavor(**values)
                row.extra_specs = [models.FlavorExtraSpecs(key=k, value=v)
                                   for k, v in extra_specs.items()]
                row.projects = [models.FlavorProjects(project_id=p) for p in projects]
                session.add(row)
                session.flush()
                self._set_from_db(self, row, skip=('extra_specs', 'projects'))
        except db_exc.DBDuplicateEntry as exc:
            if 'flavorid' in (exc.columns or []):
                raise exception.FlavorIdExists(flavor_id=values['flavorid']) from exc
            raise exception.FlavorExists(name=values.get('name')) from exc
        self.extra_specs = extra_specs
        self.projects = projects
        self.obj_reset_changes()

    def save(self) -> None:
        changes = self.obj_get_changes()
        with engine.api_writer() as session:
            row = session.get(models.Flavor, self.id)
            if row is None:
                raise exception.FlavorNotFound(flavor_id=self.flavorid)
            if 'extra_specs' in changes:
                row.extra_specs = [models.FlavorExtraSpecs(key=k, value=v)
                                   for k, v in changes.pop('extra_specs').items()]
            if 'projects' in changes:
                row.projects = [models.FlavorProjects(project_id=p)
                                for p in changes.pop('projects')]
            for key, value in changes.items():
                setattr(row, key, value)
        self.obj_reset_changes()

    def update_extra_specs(self, specs: dict[str, str]) -> None:
        """Add or change extra specs in place (others are kept)."""
        with engine.api_writer() as session:
            rows = {r.key: r for r in session.scalars(select(models.FlavorExtraSpecs)
                                                      .filter_by(flavor_id=self.id))}
            for key, value in specs.items():
                if key in rows:
                    rows[key].value = value
                else:
                    session.add(models.FlavorExtraSpecs(flavor_id=self.id, key=key,
                                                        value=value))
        self.extra_specs = dict(self.extra_specs, **specs)
        self.obj_reset_changes(['extra_specs'])

    def delete_extra_spec(self, key: str) -> None:
        """Remove one extra spec; ``FlavorExtraSpecsNotFound`` if it is not set."""
        with engine.api_writer() as session:
            row = session.scalars(select(models.FlavorExtraSpecs).filter_by(
                flavor_id=self.id, key=key)).first()
            if row is None:
                raise exception.FlavorExtraSpecsNotFound(flavor_id=self.flavorid,
                                                         extra_specs_key=key)
            session.delete(row)
        self.extra_specs = {k: v for k, v in self.extra_specs.items() if k != key}
        self.obj_reset_changes(['extra_specs'])

    def add_access(self, project_id: str) -> None:
        """Share the flavor with a project; ``FlavorAccessExists`` if it already is."""
        with engine.api_writer() as session:
            if session.scalars(select(models.FlavorProjects.id).filter_by(
                    flavor_id=self.id, project_id=project_id)).first() is not None:
                raise exception.FlavorAccessExists(flavor_id=self.flavorid,
                                                   project_id=project_id)
            session.add(models.FlavorProjects(flavor_id=self.id, project_id=project_id))
        self.projects = sorted(set(self.projects) | {project_id})
        self.obj_reset_changes(['projects'])

    def remove_access(self, project_id: str) -> None:
        """Stop sharing; ``FlavorAccessNotFound`` if the project had no access."""
        with engine.api_writer() as session:
            row = session.scalars(select(models.FlavorProjects).filter_by(
                flavor_id=self.id, project_id=project_id)).first()
            if row is None:
                raise exception.FlavorAccessNotFound(flavor_id=self.flavorid,
                                                     project_id=project_id)
            session.delete(row)
        self.projects = [p for p in self.projects if p != project_id]
        self.obj_reset_changes(['projects'])

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.get(models.Flavor, self.id)
            if row is None:
                raise exception.FlavorNotFound(flavor_id=self.flavorid)
            session.delete(row)


@base.NovaliteObjectRegistry.register
class FlavorList(base.ObjectListBase['Flavor'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Flavor')}

    @classmethod
    def get_all(cls, context: RequestContext, inactive: bool = False, filters: dict | None = None,
                sort_key: str = 'flavorid', sort_dir: str = 'asc', limit: int | None = None,
                marker: str | None = None) -> FlavorList:
        """Flavors visible to ``context``.

        ``filters``: ``min_memory_mb``, ``min_root_gb``, ``name`` (a regular expression),
        ``is_public`` (True, False or None for both; non-admins also see private flavors
        shared with their project).
        """
        filters = filters or {}
        query = select(models.Flavor)
        if not inactive:
            query = query.where(models.Flavor.disabled.is_(False))
        if 'min_memory_mb' in filters:
            query = query.where(models.Flavor.memory_mb >= filters['min_memory_mb'])
        if 'min_root_gb' in filters:
            query = query.where(models.Flavor.root_gb >= filters['min_root_gb'])
        if 'name' in filters:
            query = query.where(models.Flavor.name.regexp_match(filters['name']))
        is_public = filters.get('is_public', True)
        if is_public is not None:
            visible = models.Flavor.is_public.is_(bool(is_public))
            if context is not None and not context.is_admin and is_public:
                shared = select(models.FlavorProjects.flavor_id).where(
                    models.FlavorProjects.project_id == context.project_id)
                visible = or_(visible, models.Flavor.id.in_(shared))
            query = query.where(visible)
        elif context is not None and not context.is_admin:
            shared = select(models.FlavorProjects.flavor_id).where(
                models.FlavorProjects.project_id == context.project_id)
            query = query.where(or_(models.Flavor.is_public.is_(True),
                                    models.Flavor.id.in_(shared)))
        column = getattr(models.Flavor, sort_key)
        order = column.desc() if sort_dir == 'desc' else column.asc()
        query = query.order_by(order, models.Flavor.id.asc())
        with engine.api_reader() as session:
            rows = list(session.scalars(query))
        if marker is not None:
            ids = [r.flavorid for r in rows]
            if marker not in ids:
                raise exception.MarkerNotFound(marker=marker)
            rows = rows[ids.index(marker) + 1:]
        if limit is not None:
            rows = rows[:limit]
        return cls(context, objects=[Flavor._from_db_object(context, r) for r in rows])
