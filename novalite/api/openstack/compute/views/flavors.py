"""Views of flavors, per microversion."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common
from novalite.policies import flavors as fl_policies

if TYPE_CHECKING:
    from collections.abc import Callable

    from novalite import objects
    from novalite.api.openstack import wsgi


class ViewBuilder(common.ViewBuilder):
    _collection_name = 'flavors'

    def basic(self, req: wsgi.Request, flavor: objects.Flavor) -> dict:
        body = {'id': flavor.flavorid, 'name': flavor.name,
                'links': self._get_links(req, flavor.flavorid)}
        if avr.is_supported(req, '2.55'):
            body['description'] = flavor.description
        return {'flavor': body}

    def show(self, req: wsgi.Request, flavor: objects.Flavor,
             include_extra_specs: bool | None = None) -> dict:
        swap: int | str = flavor.swap
        if not swap and not avr.is_supported(req, '2.75'):
            swap = ''
        body: dict[str, object] = {
            'id': flavor.flavorid,
            'name': flavor.name,
            'ram': flavor.memory_mb,
            'disk': flavor.root_gb,
            'swap': swap,
            'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
            'OS-FLV-DISABLED:disabled': flavor.disabled,
            'vcpus': flavor.vcpus,
            'os-flavor-access:is_public': flavor.is_public,
            'rxtx_factor': flavor.rxtx_factor or '',
            'links': self._get_links(req, flavor.flavorid),
        }
        if avr.is_supported(req, '2.55'):
            body['description'] = flavor.description
        if avr.is_supported(req, '2.61'):
            if include_extra_specs is None:
                include_extra_specs = self.can_see_extra_specs(req)
            if include_extra_specs:
                body['extra_specs'] = dict(flavor.extra_specs)
        if avr.is_supported(req, '2.102'):
            del body['OS-FLV-DISABLED:disabled'], body['rxtx_factor']
        return {'flavor': body}

    @staticmethod
    def can_see_extra_specs(req: wsgi.Request) -> bool:
        context = req.context
        return context.can(fl_policies.EXTRA_SPECS_INDEX,
                           {'project_id': context.project_id}, fatal=False)

    def index(self, req: wsgi.Request, flavors: list) -> dict:
        return self._list(req, flavors, self.basic, 'flavors')

    def detail(self, req: wsgi.Request, flavors: list) -> dict:
        extra_specs = avr.is_supported(req, '2.61') and self.can_see_extra_specs(req)
        return self._list(req, flavors,
                          lambda r, f: self.show(r, f, include_extra_specs=extra_specs),
                          'flavors/detail')

    def _list(self, req: wsgi.Request, flavors: list[objects.Flavor],
              render: Callable[[wsgi.Request, objects.Flavor], dict], collection: str) -> dict:
        body: dict = {'flavors': [render(req, f)['flavor'] for f in flavors]}
        links = self._get_collection_links(req, flavors, collection, 'flavorid')
        if links:
            body['flavors_links'] = links
        return body
