"""POST /servers/{id}/action: the server actions (reboot, os-stop, os-start,
os-getConsoleOutput), each found by the one key of the body."""
from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import (
    admin_actions,
    admin_password,
    deferred_delete,
    evacuate,
    floating_ips,
    lock_server,
    migrate_server,
    multinic,
    pause_server,
    remote_consoles,
    rescue,
    security_groups,
    server_rebuild,
    shelve,
    suspend_server,
    trigger_crash_dump,
)
from novalite.api.openstack.compute.schemas import server_actions as schema
from novalite.api.validation import validators
from novalite.policies import console_output as co_policies
from novalite.policies import servers as srv_policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.api import API as ComputeAPI

SERVERS = srv_policies.SERVERS

# Modules with more actions, Nova's grouping (pause_server, lock_server, ...). Each has
# ``actions(controller) -> {body key: (name in 409 messages, body schema, handler)}``;
# a handler is ``handler(req, instance, body[key])`` and may use
# ``controller.compute_api``.
ACTION_MODULES: list[ModuleType] = [
    pause_server, suspend_server, lock_server, rescue, admin_actions, admin_password,
    trigger_crash_dump, deferred_delete, server_rebuild, shelve, migrate_server, evacuate,
    multinic, security_groups, floating_ips, remote_consoles,
]

# Control characters other than tab and newline would break clients' terminals.
_CONTROL_CHARS = re.compile('[\x00-\x08\x0B-\x1F]')


def _conflict(exc: exception.InstanceInvalidState, action: str,
              server_id: str) -> webob.exc.HTTPConflict:
    """Nova's wording of a 409 for a server in the wrong state."""
    if 'attr' not in exc.kwargs:  # the state changed under us (UnexpectedTaskStateError)
        return webob.exc.HTTPConflict(explanation=exc.format_message())
    return webob.exc.HTTPConflict(
        explanation="Cannot '%s' instance %s while it is in %s %s"
        % (action, server_id, exc.kwargs['attr'], exc.kwargs['state']))


class ServerActionsController(common.ComputeAPIUser, wsgi.Controller):
    """One handler per action name, each with a schema of its own."""

    def __init__(self, compute_api: ComputeAPI | None = None) -> None:
        super().__init__(compute_api)
        # body key → (name in 409 messages, schema, handler)
        self._actions: dict[str, tuple[str, validators.SchemaValidator, Callable]] = {
            'reboot': ('reboot', validators.SchemaValidator(schema.reboot), self._reboot),
            'os-stop': ('stop', validators.SchemaValidator(schema.stop), self._stop),
            'os-start': ('start', validators.SchemaValidator(schema.start), self._start),
            'os-getConsoleOutput': (
                'get_console_output', validators.SchemaValidator(schema.get_console_output),
                self._get_console_output),
        }
        for module in ACTION_MODULES:
            for key, (name, body_schema, handler) in module.actions(self).items():
                if key in self._actions:
                    raise ValueError('server action %s is defined twice' % key)
                self._actions[key] = (name, validators.SchemaValidator(body_schema), handler)
        # Through /v2 unknown keys of an action's body are dropped, as Nova's v2.0 mode.
        self._legacy_v2 = {key: validators.SchemaValidator(checker.validator.schema,
                                                           legacy_v2=True)
                           for key, (_name, checker, _handler) in self._actions.items()}

    @validation.schema(schema.action)
    def action(self, req: wsgi.Request, id: str, body: dict) -> Any:
        key = next(iter(body))
        if key not in self._actions:
            raise webob.exc.HTTPBadRequest(explanation='There is no such action: %s' % key)
        name, checker, handler = self._actions[key]
        (self._legacy_v2[key] if req.is_legacy_v2() else checker).validate(body)
        instance = common.get_instance(self.compute_api, req.context, id)
        try:
            return handler(req, instance, body[key])
        except exception.InstanceInvalidState as exc:
            raise _conflict(exc, name, id) from exc
        except exception.ServiceUnavailable as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc

    def _reboot(self, req: wsgi.Request, instance: objects.Instance,
                args: dict) -> wsgi.ResponseObject:
        req.context.can(SERVERS % 'reboot', common.instance_target(instance))
        self.compute_api.reboot(req.context, instance, args['type'].upper())
        return wsgi.ResponseObject(None, code=202)

    def _stop(self, req: wsgi.Request, instance: objects.Instance,
              args: object) -> wsgi.ResponseObject:
        req.context.can(SERVERS % 'stop', common.instance_target(instance))
        self.compute_api.stop(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    def _start(self, req: wsgi.Request, instance: objects.Instance,
               args: object) -> wsgi.ResponseObject:
        req.context.can(SERVERS % 'start', common.instance_target(instance))
        self.compute_api.start(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    def _get_console_output(self, req: wsgi.Request, instance: objects.Instance,
                            args: dict) -> dict:
        req.context.can(co_policies.BASE_POLICY_NAME, common.instance_target(instance))
        length = args.get('length')
        length = None if length is None or int(length) == -1 else int(length)
        try:
            output = self.compute_api.get_console_output(req.context, instance, length)
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(
                explanation='Unable to get console log, functionality not implemented'
            ) from exc
        return {'output': _CONTROL_CHARS.sub('', output)}
