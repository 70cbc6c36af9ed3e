"""Alembic migrations of the cell databases (cell0 and every cell)."""
