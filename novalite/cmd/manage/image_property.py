"""``novalite-manage image_property``."""
from __future__ import annotations


class ImagePropertyCommands:
    """The image properties an instance keeps in its system metadata."""
