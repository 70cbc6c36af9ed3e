"""Column types and mixins shared by both schemas."""
from __future__ import annotations

import datetime

from oslo_utils import timeutils
from sqlalchemy import DateTime, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import Mapped, mapped_column

# MySQL's TEXT stops at 64 KiB; serialized objects (flavors, request specs) may pass that.
MediumText = Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


class TimestampMixin:
    created_at: Mapped[datetime.datetime | None] = mapped_column(
        DateTime, default=timeutils.utcnow)
    updated_at: Mapped[datetime.datetime | None] = mapped_column(
        DateTime, onupdate=timeutils.utcnow)
