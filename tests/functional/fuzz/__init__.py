"""Generated hostile requests against every route of the Compute API (issue 20)."""
