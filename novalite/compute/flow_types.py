"""What the compute flows of a server's ports read of an instance, as Protocols.

``objects.Instance`` declares its fields at run time (oslo.versionedobjects), so a type
checker sees none of them: a flow names what it needs here instead, and a wrong
attribute fails the type check rather than a test run.
"""
from __future__ import annotations

import datetime
from typing import Protocol

from novalite.network import model


class InfoCache(Protocol):
    network_info: model.NetworkInfo

    def save(self) -> None: ...


class NetworkedInstance(Protocol):
    uuid: str
    project_id: str | None
    availability_zone: str | None
    host: str | None
    vm_state: str | None
    task_state: str | None
    launched_at: datetime.datetime | None
    deleted: bool
    info_cache: InfoCache

    def obj_reset_changes(self, fields: list[str] | None = None,
                          recursive: bool = False) -> None: ...
