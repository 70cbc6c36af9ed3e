"""The scheduler: picks compute hosts for servers from Placement's candidates."""
