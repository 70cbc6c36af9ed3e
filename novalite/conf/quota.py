"""Options of the [quota] group: default per-project limits (-1 is unlimited)."""
from __future__ import annotations

from oslo_config import cfg

quota_group = cfg.OptGroup('quota', title='Quota options')

opts = [
    cfg.IntOpt('instances', default=10, min=-1, help='Servers per project.'),
    cfg.IntOpt('cores', default=20, min=-1, help='vCPUs per project.'),
    cfg.IntOpt('ram', default=50 * 1024, min=-1, help='MiB of RAM per project.'),
    cfg.IntOpt('key_pairs', default=100, min=-1, help='Key pairs per user.'),
    cfg.IntOpt('metadata_items', default=128, min=-1, help='Metadata items per server.'),
    cfg.IntOpt('injected_files', default=5, min=-1,
               help='Files injected (personality) per server; the API takes them until '
                    'microversion 2.57.'),
    cfg.IntOpt('injected_file_content_bytes', default=10 * 1024, min=-1,
               help='Bytes of content of one injected file.'),
    cfg.IntOpt('injected_file_path_length', default=255, min=-1,
               help='Characters of the path of one injected file.'),
    cfg.IntOpt('server_groups', default=10, min=-1, help='Server groups per project.'),
    cfg.IntOpt('server_group_members', default=10, min=-1,
               help='Servers per server group.'),
    cfg.BoolOpt('recheck_quota', default=True,
                help='Check quota again in the conductor once the instances are created '
                     'in their cells: a limit lowered after the API accepted a request '
                     'then fails its servers (ERROR, "Quota exceeded"). Concurrent creates '
                     'of a project need no recheck: the API counts and writes each one '
                     'under the project\'s lock, so those that do not fit are refused '
                     'with 403.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(quota_group)
    conf.register_opts(opts, group=quota_group)


def list_opts() -> dict:
    return {quota_group: opts}
