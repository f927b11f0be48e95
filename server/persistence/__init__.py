"""Durability: the append-only file (AOF), its loading at start-up, and its compaction (rewrite)."""
