"""Database access: the API database (``db/api``) and the cell databases (``db/main``)."""
from novalite.db import driver as _driver

# Before anything here can import PyMySQL: it imports cryptography only when a
# connection needs it (novalite.db.driver says why and when).
_driver.install()
