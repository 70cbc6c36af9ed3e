"""Alembic migrations of the API database."""
