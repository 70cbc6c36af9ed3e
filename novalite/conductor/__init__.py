"""The conductor: builds and moves instances, and is the compute hosts' database."""
