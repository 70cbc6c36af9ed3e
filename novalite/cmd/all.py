"""novalite-all: the whole cloud in one process (reserved; it arrives with the
devstack-style issue). Until then this command says so and exits with status 2."""
from __future__ import annotations

import sys


def main() -> None:
    sys.stderr.write('novalite-all is not implemented yet: run the separate daemons '
                     '(see README.md).\n')
    sys.exit(2)
