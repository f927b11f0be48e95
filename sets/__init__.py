"""Rivulet's set engine: Redis 7.4 set semantics and encodings as pure data structures.

No I/O, RESP or server imports: the command layer (server/commands/sets.py) parses arguments and
turns results into replies.
"""

from sets.ops import intersection, intersection_store, pop_many, random_distinct, union_or_diff
from sets.set import ENCODING_NAMES, HASHTABLE, INTSET, LISTPACK, Limits, Set, as_int

__all__ = ["ENCODING_NAMES", "HASHTABLE", "INTSET", "LISTPACK", "Limits", "Set", "as_int",
           "intersection", "intersection_store", "pop_many", "random_distinct", "union_or_diff"]
