"""Operations over whole sets: SINTER, SUNION, SDIFF and their *STORE forms, SPOP with a count.

They follow t_set.c step by step where the steps show: in which order members come out, and which
encoding a stored result gets (it depends on the path a member took, not only on the result).
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterable

from sets.set import HASHTABLE, INTSET, LISTPACK, Limits, Set, as_int

_SPOP_MOVE_STRATEGY_MUL = 5


def intersection(sets: list[Set], limit: int = 0) -> list[bytes]:
    """The members of every set, in the order of the smallest set (the first of equal sizes, as
    glibc's merge-sort qsort keeps them); at most `limit` of them when limit > 0."""
    ordered = sorted(sets, key=len)
    first = ordered[0]
    others = [s for s in ordered[1:] if s is not first]
    out: list[bytes] = []
    for member in first.members():
        for other in others:
            if not other.contains(member):
                break
        else:
            out.append(member)
            if limit and len(out) >= limit:
                break
    return out


def intersection_store(sets: list[Set], limits: Limits) -> Set:
    """SINTERSTORE's result: it starts as an intset if the smallest set is one, else as a
    listpack, and ends as an intset if every member is an integer and it fits one."""
    first = min(sets, key=len)
    result = Set(INTSET if first.enc == INTSET else LISTPACK)
    only_integers = True
    for member in intersection(sets):
        if only_integers and as_int(member) is None:
            only_integers = False
        result.add(member, limits)
    if only_integers and len(result):
        result.maybe_to_intset(limits)
    return result


def union_or_diff(sets: list[Set | None], diff: bool, store: bool, limits: Limits) -> Set:
    """SUNION / SDIFF (and their STORE forms) as sunionDiffGenericCommand: missing keys are None.

    The result starts as an intset when stored or when every input is one, else as a hashtable;
    SDIFF copies the first set and removes the others' members when that is estimated cheaper
    than testing each member of the first set, which changes what encodings it goes through."""
    target_enc = INTSET
    sameset = False
    first = sets[0]
    for j, s in enumerate(sets):
        if s is None:
            continue
        if not store and s.enc != INTSET:
            target_enc = HASHTABLE
        if j > 0 and s is first:
            sameset = True
    result = Set(target_enc)
    if not diff:
        for s in sets:
            if s is not None:
                for member in s.members():
                    result.add(member, limits)
        return result
    if first is None or sameset:
        return result
    present = [s for s in sets if s is not None]
    copy_then_remove = len(first) * len(present) // 2 > sum(len(s) for s in present)
    rest = [s for s in sets[1:] if s is not None]
    if not copy_then_remove:
        for member in first.members():
            for other in rest:
                if other.contains(member):
                    break
            else:
                result.add(member, limits)
        return result
    for member in first.members():
        result.add(member, limits)
    for s in rest:
        if not len(result):
            break
        for member in s.members():
            result.remove(member)
    return result


def _sample_positions(n: int, count: int) -> list[int]:
    return sorted(random.sample(range(n), count))


def pick(members: Iterable[bytes], positions: list[int]) -> list[bytes]:
    """The members at the given ascending positions of an iteration."""
    out: list[bytes] = []
    if not positions:
        return out
    j = 0
    want = positions[0]
    for i, member in enumerate(members):
        if i == want:
            out.append(member)
            j += 1
            if j == len(positions):
                break
            want = positions[j]
    return out


def _few_random(s: Set, count: int) -> list[bytes]:
    """`count` distinct random members of a large hashtable, by repeated picks (Redis's CASE 4)."""
    seen: set[bytes] = set()
    out: list[bytes] = []
    while len(out) < count:
        member = s.random_member()
        if member not in seen:
            seen.add(member)
            out.append(member)
    return out


def random_distinct(s: Set, count: int) -> list[bytes]:
    """SRANDMEMBER with 1 < count < size: a listpack's picks in its order, others in any order."""
    if s.enc == HASHTABLE and count * 3 <= len(s):
        return _few_random(s, count)
    chosen = pick(s.members(), _sample_positions(len(s), count))
    if s.enc != LISTPACK:
        random.shuffle(chosen)
    return chosen


def pop_many(s: Set, count: int, limits: Limits) -> list[bytes]:
    """Remove and return `count` random members, 0 < count < len(s) (spopWithCountCommand).

    When most of the set goes, the members that stay are drawn into a new set that replaces the
    old one: an intset stays one, a listpack too, and a hashtable becomes a listpack if the
    remaining members fit one."""
    size = len(s)
    remaining = size - count
    if remaining * _SPOP_MOVE_STRATEGY_MUL > count:
        if s.enc == HASHTABLE and count * 3 <= size:
            chosen = _few_random(s, count)
            s.remove_many(chosen)
            return chosen
        chosen = pick(s.members(), _sample_positions(size, count))
        if s.enc != LISTPACK:
            # Redis pops these one at a time at random; a listpack it walks once, in order.
            random.shuffle(chosen)
        s.remove_many(chosen)
        return chosen
    members = list(s.members())
    kept = [members[i] for i in _sample_positions(size, remaining)]
    if s.enc == LISTPACK:
        fresh = Set(LISTPACK, kept)
    elif s.enc == INTSET:
        fresh = Set(INTSET, array("q", [int(m) for m in kept]))
    else:
        random.shuffle(kept)
        fresh = Set(LISTPACK)
        for member in kept:
            fresh.add(member, limits)
    stay = set(kept)
    s.enc, s.data = fresh.enc, fresh.data
    return [m for m in members if m not in stay]
