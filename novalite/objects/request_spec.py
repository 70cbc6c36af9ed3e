"""RequestSpec: what the scheduler needs to place one server (API database)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_utils import versionutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import select, update
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from novalite import objects


@base.NovaliteObjectRegistry.register
class RequestSpec(base.NovaliteObject):
    # 1.0: initial
    # 1.1: security_groups
    # 1.2: requested_networks
    # 1.3: requested_destination
    VERSION = '1.3'
    id: int
    instance_uuid: str
    project_id: str | None
    user_id: str | None
    flavor: objects.Flavor
    image: objects.ImageMeta | None
    num_instances: int
    availability_zone: str | None
    force_hosts: list[str] | None
    force_nodes: list[str] | None
    ignore_hosts: list[str] | None
    scheduler_hints: dict[str, list[str]] | None
    is_bfv: bool
    instance_group: objects.InstanceGroup | None
    security_groups: list[str]
    requested_networks: list[dict[str, str | None]]
    requested_destination: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'instance_uuid': fields.UUIDField(),
        'project_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'flavor': fields.ObjectField('Flavor', nullable=False),
        'image': fields.ObjectField('ImageMeta', nullable=True),
        'num_instances': fields.IntegerField(default=1),
        'availability_zone': fields.StringField(nullable=True),
        # force_hosts / force_nodes come from an admin's "zone:host:node".
        'force_hosts': fields.ListOfStringsField(nullable=True),
        'force_nodes': fields.ListOfStringsField(nullable=True),
        'ignore_hosts': fields.ListOfStringsField(nullable=True),
        'scheduler_hints': fields.DictOfListOfStringsField(nullable=True),
        'is_bfv': fields.BooleanField(default=False),
        # The server group the instance joins (from the ``group`` hint); the scheduler
        # refreshes its members and hosts before filtering.
        'instance_group': fields.ObjectField('InstanceGroup', nullable=True),
        # The security group names the create asked for; the compute host gives them to
        # the ports it creates (and again after a reschedule).
        'security_groups': fields.ListOfStringsField(default=[]),
        # The create's network requests as the API resolved them: a build the conductor
        # re-drives after its message was lost has nothing else to take them from.
        'requested_networks': fields.ListOfDictOfNullableStringsField(default=[]),
        # A move to a host the caller named (a live migration's ``host`` when not
        # forced): only that host is considered, and the filters still run on it (a
        # forced host, ``force_hosts``, skips them), as Nova's Destination.
        'requested_destination': fields.StringField(nullable=True),
    }

    def obj_make_compatible(self, primitive: dict, target_version: str) -> None:
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('security_groups', None)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            primitive.pop('requested_networks', None)

    @classmethod
    def from_components(cls, context: RequestContext, instance_uuid: str,
                        image: objects.ImageMeta | None, flavor: objects.Flavor,
                        num_instances: int,
                        availability_zone: str | None = None,
                        scheduler_hints: dict | None = None, project_id: str | None = None,
                        user_id: str | None = None, force_hosts: list | None = None,
                        force_nodes: list | None = None,
                        security_groups: list[str] | None = None) -> RequestSpec:
        hints = {k: v if isinstance(v, list) else [str(v)]
                 for k, v in (scheduler_hints or {}).items()}
        return cls(context, instance_uuid=instance_uuid, image=image, flavor=flavor,
                   num_instances=num_instances, availability_zone=availability_zone,
                   scheduler_hints=hints, project_id=project_id or context.project_id,
                   user_id=user_id or context.user_id, force_hosts=force_hosts or [],
                   force_nodes=force_nodes or [], ignore_hosts=[], is_bfv=False,
                   security_groups=list(security_groups or []))

    def get_scheduler_hint(self, name: str, default: object = None) -> Any:
        hints = self.scheduler_hints if self.obj_attr_is_set('scheduler_hints') else None
        values = (hints or {}).get(name)
        if not values:
            return default
        return values[0] if len(values) == 1 else values

    def _spec_json(self) -> str:
        return base.obj_to_json(self)

    @classmethod
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str) -> RequestSpec:
        with engine.api_reader() as session:
            row = session.scalars(select(models.RequestSpec)
                                  .filter_by(instance_uuid=instance_uuid)).first()
            if row is None:
                raise exception.RequestSpecNotFound(instance_uuid=instance_uuid)
            spec = base.obj_from_json(row.spec)
            spec._context = context
            spec.id = row.id
            spec.obj_reset_changes()
            return spec

    @classmethod
    def get_by_instance_uuids(cls, context: RequestContext, instance_uuids: list[str]) -> dict:
        """{instance uuid: RequestSpec} for many instances in one query."""
        if not instance_uuids:
            return {}
        with engine.api_reader() as session:
            rows = session.scalars(select(models.RequestSpec).where(
                models.RequestSpec.instance_uuid.in_(instance_uuids)))
            specs = {}
            for row in rows:
                spec = base.obj_from_json(row.spec)
                spec._context = context
                spec.id = row.id
                spec.obj_reset_changes()
                specs[row.instance_uuid] = spec
            return specs

    def create(self, session: Session | None = None) -> None:
        """Insert the row, in ``session``'s transaction when one is given."""
        self.id = base.insert_row(models.RequestSpec, {
            'instance_uuid': self.instance_uuid, 'spec': self._spec_json()}, session)
        self.obj_reset_changes()

    def save(self) -> None:
        with engine.api_writer() as session:
            session.execute(update(models.RequestSpec)
                            .where(models.RequestSpec.instance_uuid == self.instance_uuid)
                            .values(spec=self._spec_json()))
        self.obj_reset_changes()

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.RequestSpec)
                                  .filter_by(instance_uuid=self.instance_uuid)).first()
            if row is not None:
                session.delete(row)
