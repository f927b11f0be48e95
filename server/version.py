"""What this server reports as its version."""

REDIS_VERSION = "7.4.0"  # the Redis behaviour implemented: clients branch on it (HELLO, INFO)
RIVULET_VERSION = "0.1.0"  # the package's own version (pyproject.toml)
