"""Alembic environment of the cell database (see novalite.db.migration.run_env)."""
from novalite.db import migration
from novalite.db.main import models

migration.run_env(models.Base.metadata)
