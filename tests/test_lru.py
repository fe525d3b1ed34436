"""The bounded map the engines' caches share (s1gym.core.lru)."""

import pytest

from s1gym.core.lru import LRU


def test_the_entry_used_longest_ago_leaves_first_and_reads_count():
    lru = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recently used
    lru.put("c", 3)  # so "b" leaves
    assert ("a" in lru, "b" in lru, "c" in lru) == (True, False, True)
    assert lru.get("b") is None and len(lru) == 2
    assert (lru.hits, lru.misses) == (1, 1)
    lru.put("a", 10)  # replaces, and marks "a" used: "c" leaves next
    lru.put("d", 4)
    assert (lru.get("a"), "c" in lru, lru.get("d")) == (10, False, 4)


def test_setdefault_keeps_the_value_already_there():
    lru = LRU(4)
    first = ("x",)
    assert lru.setdefault("k", first) is first
    assert lru.setdefault("k", ("x",)) is first


def test_capacity_zero_keeps_nothing_and_a_negative_one_is_refused():
    lru = LRU(0)
    lru.put("a", 1)
    assert len(lru) == 0 and lru.get("a") is None
    with pytest.raises(ValueError, match="capacity must be >= 0"):
        LRU(-1)
