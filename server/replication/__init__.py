"""Redis replication: the replication IDs, offsets and backlog, the links to replicas, WAIT."""
