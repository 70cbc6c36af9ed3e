"""Server actions that write a server's disk from or to an image: rebuild and
createImage (in Nova's servers controller), createBackup (Nova's create_backup)."""
from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

import webob.exc
from oslo_utils import strutils

from novalite import exception
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import servers
from novalite.api.openstack.compute.schemas import server_rebuild as schema
from novalite.api.openstack.compute.views import servers as views_servers
from novalite.api.validation import validators
from novalite.conf import CONF
from novalite.policies import create_backup as backup_policies
from novalite.policies.servers import SERVERS

if TYPE_CHECKING:
    from novalite import objects

_VALIDATORS = {version: validators.SchemaValidator(body)
               for version, body in schema.REBUILD_BY_VERSION}
# Rebuild fields the compute API takes as they are, by body key.
_REBUILD_FIELDS = {'name': 'name', 'metadata': 'metadata', 'accessIPv4': 'access_ip_v4',
                   'accessIPv6': 'access_ip_v6', 'key_name': 'key_name',
                   'user_data': 'user_data', 'hostname': 'hostname',
                   'description': 'description'}


def actions(controller: common.ComputeAPIUser) -> dict[str, tuple[str, dict, Any]]:
    return {
        'rebuild': ('rebuild', schema.any_rebuild,
                    lambda req, instance, args: _rebuild(controller, req, instance, args)),
        'createImage': ('createImage', schema.create_image,
                        lambda req, instance, args: _create_image(controller, req,
                                                                  instance, args)),
        'createBackup': ('createBackup', schema.create_backup,
                         lambda req, instance, args: _create_backup(controller, req,
                                                                    instance, args)),
    }


def _rebuild(controller: common.ComputeAPIUser, req: wsgi.Request, instance: objects.Instance,
             args: dict) -> wsgi.ResponseObject:
    context = req.context
    version = next(v for v, _s in schema.REBUILD_BY_VERSION if avr.is_supported(req, v))
    _VALIDATORS[version].validate({'rebuild': args})
    context.can(SERVERS % 'rebuild', common.instance_target(instance))
    if args.get('trusted_image_certificates'):
        raise webob.exc.HTTPBadRequest(explanation=(
            'Image certificate validation (trusted_image_certificates) is not supported '
            'by novalite.'))
    password = args.get('adminPass') or servers._generate_password()
    kwargs = {field: args[key] for key, field in _REBUILD_FIELDS.items() if key in args}
    kwargs['auto_disk_config'] = servers.disk_config_from_api(args.get('OS-DCF:diskConfig'))
    # From 2.93 the root volume of a volume-backed server is re-imaged.
    kwargs['reimage_boot_volume'] = avr.is_supported(req, '2.93')
    try:
        controller.compute_api.rebuild(
            context, instance, common.get_id_from_href(args['imageRef']), password,
            files_to_inject=_personality(args.get('personality') or []),
            preserve_ephemeral=strutils.bool_from_string(
                args.get('preserve_ephemeral', False), strict=True),
            **kwargs)
    except exception.ImageNotFound as exc:
        raise webob.exc.HTTPBadRequest(explanation='Cannot find image for rebuild') \
            from exc
    except exception.KeypairNotFound as exc:
        raise webob.exc.HTTPBadRequest(explanation='Invalid key_name provided.') from exc
    except exception.QuotaError as exc:
        raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
    except exception.CinderAPIVersionNotAvailable as exc:
        # A volume-backed server's rebuild needs Cinder's re-image (3.68).
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    except exception.Invalid as exc:
        if exc.code != 400:
            raise  # the 409s of a locked server or one in the wrong state
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    view = _rebuild_view(req, instance)
    if getattr(CONF.api, 'enable_instance_password', True):
        view['server']['adminPass'] = password
    return wsgi.ResponseObject(view, code=202)


def _rebuild_view(req: wsgi.Request, instance: objects.Instance) -> dict:
    """The server as Nova's rebuild shows it: the update view (from 2.75 the show
    view), with the key pair from 2.54 and the user data as ``user_data`` from 2.57."""
    view = views_servers.ViewBuilder().update(req, instance)
    server = view['server']
    if avr.is_supported(req, '2.54'):
        server['key_name'] = instance.key_name
    if avr.is_supported(req, '2.57'):
        server.pop('OS-EXT-SRV-ATTR:user_data', None)
        server['user_data'] = instance.user_data
    return view

def _personality(files: list[dict]) -> list[tuple[str, bytes]]:
    """(path, contents) of the files to inject (before 2.57)."""
    decoded = []
    for item in files:
        try:
            decoded.append((item['path'], base64.b64decode(item['contents'], validate=True)))
        except (binascii.Error, TypeError) as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Personality content for %s cannot be decoded' % item['path']
            ) from exc
    return decoded


def _image_response(req: wsgi.Request, controller: common.ComputeAPIUser,
                    image: dict) -> wsgi.ResponseObject:
    """2.45 and later: the image id in the body; before: its URL as the Location."""
    if avr.is_supported(req, '2.45'):
        return wsgi.ResponseObject({'image_id': image['id']}, code=202)
    return wsgi.ResponseObject(None, code=202, headers={
        'Location': controller.compute_api.image_api.image_url(image['id'])})


def _create_image(controller: common.ComputeAPIUser, req: wsgi.Request, instance: objects.Instance,
                  args: dict) -> wsgi.ResponseObject:
    context = req.context
    context.can(SERVERS % 'create_image', common.instance_target(instance))
    try:
        image = controller.compute_api.snapshot(context, instance, args['name'],
                                                extra_properties=args.get('metadata'))
    except exception.QuotaError as exc:
        raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
    return _image_response(req, controller, image)


def _create_backup(controller: common.ComputeAPIUser, req: wsgi.Request, instance: objects.Instance,
                   args: dict) -> wsgi.ResponseObject:
    context = req.context
    context.can(backup_policies.BASE_POLICY_NAME, common.instance_target(instance))
    try:
        image = controller.compute_api.backup(
            context, instance, args['name'], args['backup_type'], int(args['rotation']),
            extra_properties=args.get('metadata'))
    except exception.QuotaError as exc:
        raise webob.exc.HTTPForbidden(explanation=exc.format_message()) from exc
    if int(args['rotation']) == 0 and not avr.is_supported(req, '2.45'):
        # Nova gives no Location when the backup is rotated out at once.
        return wsgi.ResponseObject(None, code=202)
    return _image_response(req, controller, image)
