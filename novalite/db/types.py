"""Column types shared by both schemas."""
from __future__ import annotations

from sqlalchemy import Text
from sqlalchemy.dialects import mysql

# MySQL's TEXT stops at 64 KiB; serialized objects (flavors, request specs) may pass that.
MediumText = Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')
