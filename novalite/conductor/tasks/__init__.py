"""Long conductor work, one module per task (build, and later migrate, resize...)."""
