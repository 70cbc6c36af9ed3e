"""The Block Storage service (Cinder) as compute sees it: ``cinder.API``."""
