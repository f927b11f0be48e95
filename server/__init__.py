"""Rivulet's network server: event loop, connections, command table, keyspace, blocking."""
