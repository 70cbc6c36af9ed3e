"""Views: how API resources are rendered as JSON, per microversion."""
