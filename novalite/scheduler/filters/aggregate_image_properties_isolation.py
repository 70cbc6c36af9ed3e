"""AggregateImagePropertiesIsolation: image properties against aggregate metadata."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.scheduler import filters

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)


class AggregateImagePropertiesIsolation(filters.BaseHostFilter):
    """Refuse a host when an aggregate of it sets a key that the image also sets, to
    a different value (``os_distro=windows`` keeps other distros away, for example).

    ``[filter_scheduler] aggregate_image_properties_isolation_namespace`` (with its
    separator) restricts the keys compared.
    """

    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        opts = CONF.filter_scheduler
        prefix = (opts.aggregate_image_properties_isolation_namespace
                  + opts.aggregate_image_properties_isolation_separator
                  if opts.aggregate_image_properties_isolation_namespace else '')
        image = spec_obj.image if spec_obj.obj_attr_is_set('image') else None
        props = (image.properties if image is not None and image.obj_attr_is_set('properties')
                 else None) or {}
        for key, values in filters.aggregate_metadata(host_state).items():
            if not key.startswith(prefix):
                continue
            wanted = props.get(key)
            if wanted and str(wanted) not in values:
                LOG.debug('%s: aggregate metadata %s=%s does not allow image %s=%s',
                          host_state, key, sorted(values), key, wanted)
                return False
        return True
