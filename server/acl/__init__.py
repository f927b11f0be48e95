"""Users and permissions (Redis's ACL): users and their rules (`users`), the checks made before
each command (`check`), the security log (`log`) and the registry of users with its files
(`registry`). The ACL command itself is in server/commands/acl.py."""
