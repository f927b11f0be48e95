"""The list value type: a quicklist-like sequence of nodes (see lists/storage.py)."""

from lists.storage import List, Node, entry_size, exceeds_limit

__all__ = ["List", "Node", "entry_size", "exceeds_limit"]
