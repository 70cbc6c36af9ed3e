"""Alembic environment of the API database (see novalite.db.migration.run_env)."""
from novalite.db import migration
from novalite.db.api import models

migration.run_env(models.Base.metadata)
