"""The checks of ``novalite-status upgrade check`` that look beyond the databases'
schemas, as nova-status's: Placement, Cinder, computes too old, machine types not
recorded, the service user's token. Each returns an ``upgradecheck.Result``."""
from __future__ import annotations

from typing import TYPE_CHECKING

import microversion_parse
from keystoneauth1 import exceptions as ks_exc
from oslo_upgradecheck import upgradecheck

from novalite import context as nl_context
from novalite import exception, objects
from novalite.conf import CONF
from novalite.objects import service as service_obj
from novalite.scheduler.client import report
from novalite.virt.libvirt import machine_type as mt_utils
from novalite.volume import cinder
from novalite.volume import client as cinder_client

if TYPE_CHECKING:
    from novalite.context import RequestContext

Code = upgradecheck.Code
Result = upgradecheck.Result

# The Placement microversion novalite's report client speaks.
MIN_PLACEMENT_MICROVERSION = report.PLACEMENT_VERSION
# The Cinder microversion novalite's volume client needs (the attachment API).
MIN_CINDER_MICROVERSION = cinder_client.MIN_VERSION
# Computes stay supported for one service version (Nova's N-1); version 1 is the first.
OLDEST_SUPPORTED_SERVICE_VERSION = max(1, service_obj.SERVICE_VERSION - 1)

_PLACEMENT_FAILURES = (
    (ks_exc.MissingAuthPlugin, 'No credentials specified for placement API in the '
                               'configuration ([placement] auth_type).'),
    (ks_exc.Unauthorized, 'Placement service credentials do not work.'),
    (ks_exc.EndpointNotFound, 'Placement API endpoint not found.'),
    (ks_exc.DiscoveryFailure, 'Discovery for placement API URI failed.'),
    (ks_exc.NotFound, 'Placement API does not seem to be running.'),
    (ks_exc.ConnectFailure, 'Placement API cannot be reached'),
)


def check_placement() -> Result:
    """Placement answers, at a microversion at least as high as novalite's client's."""
    try:
        versions = report._create_adapter().get('/', raise_exc=True).json()
        current = microversion_parse.parse_version_string(
            versions['versions'][0]['max_version'])
    except tuple(exc for exc, _msg in _PLACEMENT_FAILURES) as exc:
        msg = next(msg for cls, msg in _PLACEMENT_FAILURES if isinstance(exc, cls))
        if isinstance(exc, ks_exc.ConnectFailure):
            msg = '%s: %s' % (msg, exc)
        return Result(Code.FAILURE, msg)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return Result(Code.FAILURE, 'Placement API answered no version document (%s).'
                      % exc)
    needed = microversion_parse.parse_version_string(MIN_PLACEMENT_MICROVERSION)
    if current < needed:
        return Result(Code.FAILURE, 'Placement API version %s needed, you have %s.'
                      % (needed, current))
    return Result(Code.SUCCESS)


def check_cinder() -> Result:
    """With Cinder configured: its API offers the microversion novalite needs."""
    if not cinder.configured():
        return Result(Code.SUCCESS)
    wanted = '%d.%d' % MIN_CINDER_MICROVERSION
    try:
        supported = cinder_client.supports(nl_context.get_admin_context(),
                                           MIN_CINDER_MICROVERSION)
    except exception.CinderAPIVersionNotAvailable:
        supported = False
    except Exception as exc:
        # A configuration or connection problem is not the upgrade's business: warn.
        return Result(Code.WARNING, 'Unable to determine Cinder API version due to '
                      'error: %s' % exc)
    if not supported:
        return Result(Code.FAILURE, 'Cinder API %s or greater is required. Deploy at '
                      'least Cinder 12.0.0 (Queens).' % wanted)
    return Result(Code.SUCCESS)


def _cells(ctxt: RequestContext) -> list[objects.CellMapping]:
    return [c for c in objects.CellMappingList.get_all(ctxt) if not c.is_cell0]


def _old_computes(ctxt: RequestContext) -> list[str]:
    """'host (version N)' for each compute service below the oldest supported."""
    found = []
    for cell in _cells(ctxt):
        with nl_context.target_cell(ctxt, cell) as cctxt:
            for service in objects.ServiceList.get_by_binary(cctxt, 'novalite-compute'):
                if (service.version or 0) < OLDEST_SUPPORTED_SERVICE_VERSION:
                    found.append('%s (version %s, cell %s)'
                                 % (service.host, service.version or 0, cell.identity))
    return found


def check_old_computes(api_readable: bool) -> Result:
    """No compute service older than the previous service version."""
    if not api_readable:
        return Result(Code.WARNING, 'Not checked: the API database has no schema.')
    try:
        old = _old_computes(nl_context.get_admin_context())
    except Exception as exc:
        return Result(Code.WARNING, 'Not checked: a cell database cannot be read (%s).'
                      % exc)
    if old:
        return Result(Code.FAILURE, 'Current novalite-compute services have a service '
                      'version older than the oldest supported (%d, the current being '
                      '%d): %s. Upgrade them before the rest of the deployment.'
                      % (OLDEST_SUPPORTED_SERVICE_VERSION, service_obj.SERVICE_VERSION,
                         ', '.join(sorted(old))))
    return Result(Code.SUCCESS)


def check_machine_type_set(api_readable: bool) -> Result:
    """Every instance has its machine type recorded (libvirt)."""
    if not api_readable:
        return Result(Code.WARNING, 'Not checked: the API database has no schema.')
    try:
        unset = mt_utils.instances_without_type(nl_context.get_admin_context())
    except Exception as exc:
        return Result(Code.WARNING, 'Not checked: a cell database cannot be read (%s).'
                      % exc)
    if unset:
        return Result(Code.WARNING, 'Instances found without hw_machine_type set. This '
                      'warning can be ignored if your environment does not contain '
                      'libvirt based compute hosts. Use the "novalite-manage libvirt '
                      'list_unset_machine_type" command to list these instances, and '
                      '"novalite-manage libvirt update_machine_type" to record one.')
    return Result(Code.SUCCESS)


def check_service_user_token() -> Result:
    """[service_user] send_service_user_token is on, as Nova requires since 2023.2 (a
    keystone-less deployment has no tokens to send)."""
    if CONF.api.auth_strategy == 'noauth2':
        return Result(Code.SUCCESS, 'Not needed: the API does not use Keystone '
                      '([api] auth_strategy = noauth2).')
    if not CONF.service_user.send_service_user_token:
        return Result(Code.FAILURE, 'Service user token configuration is required for '
                      'all novalite services: set [service_user] '
                      'send_service_user_token = true and the [service_user] '
                      'credentials.')
    return Result(Code.SUCCESS)
