"""Clients the conductor and the compute service use to reach the scheduler and Placement."""
