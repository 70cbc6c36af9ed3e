"""Database access: the API database (``db/api``) and the cell databases (``db/main``)."""
