"""Server actions that move a server: resize, confirmResize, revertResize (owner's),
migrate and os-migrateLive (administrators'), with Nova's answers and faults."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import strutils

from novalite import exception
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import flavors, servers
from novalite.api.openstack.compute.schemas import migrate_server as schema
from novalite.api.validation import validators
from novalite.policies import migrate_server as policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.api import API as ComputeAPI


def actions(controller: common.ComputeAPIUser) -> dict:
    handlers = _Handlers(controller)
    return {
        'resize': ('resize', schema.resize, handlers.resize),
        'confirmResize': ('confirmResize', schema.confirm_resize, handlers.confirm_resize),
        'revertResize': ('revertResize', schema.revert_resize, handlers.revert_resize),
        'migrate': ('migrate', schema.migrate_any, handlers.migrate),
        'os-migrateLive': ('os-migrateLive', schema.migrate_live_any,
                           handlers.migrate_live),
    }


def validate_for_version(req: wsgi.Request, body: dict, versions: list[tuple[str, dict]]) -> None:
    """Check ``body`` against the schema of the newest of ``versions`` (min version,
    schema; oldest first) that the request's microversion reaches."""
    chosen = versions[0][1]
    for min_version, candidate in versions:
        if avr.is_supported(req, min_version):
            chosen = candidate
    validators.SchemaValidator(chosen).validate(body)


class _Handlers:
    def __init__(self, controller: common.ComputeAPIUser) -> None:
        self.controller = controller

    @property
    def compute_api(self) -> ComputeAPI:
        return self.controller.compute_api

    # -- resize ------------------------------------------------------------------------

    def resize(self, req: wsgi.Request, instance: objects.Instance,
               args: dict) -> wsgi.ResponseObject:
        context = req.context
        context.can(policies.SERVERS % 'resize', common.instance_target(instance))
        flavor_id = common.get_id_from_href(str(args['flavorRef']))
        try:
            flavor = flavors.get_visible_flavor(context, flavor_id)
            if flavor.disabled:
                raise exception.FlavorNotFound(flavor_id=flavor_id)
        except exception.FlavorNotFound as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Unable to locate requested flavor.') from exc
        try:
            self.compute_api.resize(context, instance, flavor,
                                    auto_disk_config=servers.disk_config_from_api(
                                        args.get('OS-DCF:diskConfig')))
        except exception.CannotResizeToSameFlavor as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Resize requires a flavor change.') from exc
        except (exception.CannotResizeDisk, exception.AutoDiskConfigDisabledByImage) as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        except exception.QuotaError as exc:
            raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
        except exception.NoValidHost as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return wsgi.ResponseObject(None, code=202)

    def confirm_resize(self, req: wsgi.Request, instance: objects.Instance,
                       args: object) -> wsgi.ResponseObject:
        req.context.can(policies.SERVERS % 'confirm_resize',
                        common.instance_target(instance))
        try:
            self.compute_api.confirm_resize(req.context, instance)
        except exception.MigrationNotFound as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Instance has not been resized.') from exc
        return wsgi.ResponseObject(None, code=204)

    def revert_resize(self, req: wsgi.Request, instance: objects.Instance,
                      args: object) -> wsgi.ResponseObject:
        req.context.can(policies.SERVERS % 'revert_resize',
                        common.instance_target(instance))
        try:
            self.compute_api.revert_resize(req.context, instance)
        except exception.MigrationNotFound as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Instance has not been resized.') from exc
        return wsgi.ResponseObject(None, code=202)

    # -- migrate -----------------------------------------------------------------------

    def migrate(self, req: wsgi.Request, instance: objects.Instance,
                args: object) -> wsgi.ResponseObject:
        context = req.context
        host = None
        # Before 2.56 the body is not looked at (Nova has no schema for it there).
        if avr.is_supported(req, '2.56'):
            validators.SchemaValidator(schema.migrate_v256).validate({'migrate': args})
            host = args.get('host') if isinstance(args, dict) else None
        context.can(policies.MIGRATE % ('migrate:host' if host else 'migrate'),
                    {'project_id': instance.project_id})
        try:
            self.compute_api.resize(context, instance, None, host_name=host)
        except (exception.ComputeHostNotFound, exception.MigrationPreCheckError,
                exception.NoValidHost) as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return wsgi.ResponseObject(None, code=202)

    def migrate_live(self, req: wsgi.Request, instance: objects.Instance,
                     args: dict) -> wsgi.ResponseObject:
        context = req.context
        validate_for_version(req, {'os-migrateLive': args}, [
            ('2.1', schema.migrate_live), ('2.25', schema.migrate_live_v225),
            ('2.30', schema.migrate_live_v230), ('2.68', schema.migrate_live_v268)])
        host = args.get('host')
        context.can(policies.MIGRATE % ('migrate_live:host' if host else 'migrate_live'),
                    {'project_id': instance.project_id})
        block = args['block_migration']
        block_migration = None if block == 'auto' else \
            strutils.bool_from_string(block, strict=True)
        # Before 2.30 a named host is taken as it is (None); 2.30 to 2.67 ask with
        # ``force``; from 2.68 the scheduler always checks it (False).
        force: bool | None = None
        if avr.is_supported(req, '2.68'):
            force = False
        elif avr.is_supported(req, '2.30'):
            force = strutils.bool_from_string(args.get('force', False), strict=True)
            if force and not host:
                raise webob.exc.HTTPBadRequest(
                    explanation="Can't force to a non-provided destination")
        try:
            self.compute_api.live_migrate(context, instance, block_migration, host,
                                          force=force, async_=avr.is_supported(req, '2.34'))
        except (exception.ComputeHostNotFound, exception.MigrationError,
                exception.NoValidHost, exception.ComputeServiceUnavailable) as exc:
            # Before 2.34 the conductor's refusals come back here, as Nova's 400s.
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return wsgi.ResponseObject(None, code=202)
