"""``python -m novalite.cmd.manage``: the same as ``novalite-manage``."""
import sys

from novalite.cmd.manage import main

sys.exit(main())
