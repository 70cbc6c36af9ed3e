"""Revisions of the cell database schema."""
