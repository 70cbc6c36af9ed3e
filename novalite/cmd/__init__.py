"""Entry points of the novalite daemons and command-line tools."""
