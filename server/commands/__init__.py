"""Command handlers, one module per command family; each registers itself in the command table."""
