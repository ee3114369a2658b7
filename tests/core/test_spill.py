"""The list repair holds a store's outcomes in: its older items wait on disk, and it reads back what it was given."""

from __future__ import annotations

import os
import pickle
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threadfix import spill
from threadfix.batch import Problem, ThreadOutcome
from threadfix.model import Action, Edit, Output, RepairPlan
from threadfix.spill import SpillList

#: (append value, weight) or (update index, new value): a run of either, in any order
steps = st.lists(st.one_of(
    st.tuples(st.just("append"), st.one_of(st.integers(), st.text(max_size=5), st.binary(max_size=40),
                                           st.lists(st.integers(), max_size=3)), st.integers(0, 60)),
    st.tuples(st.just("update"), st.integers(0, 200), st.text(max_size=5)),
), max_size=120)


@settings(max_examples=200, deadline=None)
@given(steps, st.integers(1, 100))
def test_reads_back_what_it_was_given_in_order_with_every_update(script, budget) -> None:
    held: SpillList = SpillList(budget)
    expected: list = []
    for step in script:
        if step[0] == "append":
            _, value, weight = step
            assert held.append(value, weight) == len(expected)
            expected.append(value)
        elif expected:
            index, tag = step[1] % len(expected), step[2]
            held.update(index, lambda item, tag=tag: (item, tag))
            expected[index] = (expected[index], tag)
        assert len(held) == len(expected)
    try:
        assert list(held) == expected
    finally:
        held.close()


def test_items_past_the_budget_leave_memory() -> None:
    held: SpillList = SpillList(budget=100)
    for i in range(1000):
        held.append(b"x" * 50, 50)
    assert len(held._memory) <= 2, "the older items should be on disk"
    assert held._file is not None
    assert list(held) == [b"x" * 50] * 1000
    held.close()
    assert held._file is None


def test_with_no_room_on_disk_the_items_stay_in_memory(monkeypatch) -> None:
    def no_room(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_room)
    held: SpillList = SpillList(budget=10)
    for i in range(50):
        held.append(i, 10)
    assert list(held) == list(range(50))


def _fill_up(monkeypatch, room: int) -> None:
    """The spill file takes ``room`` bytes, then fails as a full disk does (after a short write)."""
    make, write, spill_fds = tempfile.TemporaryFile, os.write, set()

    def temporary_file(**kwargs):
        file = make(**kwargs)
        spill_fds.add(file.fileno())
        return file

    def filling(fd: int, data) -> int:
        nonlocal room
        if fd not in spill_fds:
            return write(fd, data)
        if room <= 0:
            raise OSError(28, "No space left on device")
        taken = write(fd, bytes(data[:room]))
        room -= taken
        return taken

    monkeypatch.setattr(tempfile, "TemporaryFile", temporary_file)
    monkeypatch.setattr(os, "write", filling)


def test_a_disk_that_fills_up_midway_keeps_what_was_written_and_the_rest_in_memory(monkeypatch) -> None:
    values = [bytes([65 + i % 26]) * 30 for i in range(40)]
    first = len(pickle.dumps(values[:4], protocol=pickle.HIGHEST_PROTOCOL))  # 4 items of 30 pass a budget of 100
    _fill_up(monkeypatch, first + 7)
    held: SpillList = SpillList(budget=100)
    for value in values:
        held.append(value, 30)
    held.update(1, lambda v: v + b"!")  # on disk
    held.update(39, lambda v: v + b"?")  # in memory
    assert held._chunks == [first], "the first chunk is written, the second runs out of room"
    expected = list(values)
    expected[1] += b"!"
    expected[39] += b"?"
    assert list(held) == expected
    held.close()


def test_outcomes_survive_the_trip_to_disk_whole() -> None:
    """What repair holds: outcomes with plans, any JSON in an output, bytes for --diff, and problems."""
    output = Output("c1", "function_call_output", (3, -1), content={"a": [1, 2.5, None, True, "é"], "n": 2**70})
    outcome = ThreadOutcome("f.jsonl:3", "openai-responses", RepairPlan((Edit(Action.CONVERT_ORPHAN, "c1", None, (3, -1),
                            output=output, evidence="why"),)), "would_repair", before=b"{}", after=b"[]", age=1.5)
    problem = Problem("f.jsonl:9", "not JSON")
    held: SpillList = SpillList(budget=1)
    held.append(outcome, 10)
    held.append(problem, 10)
    assert held._spilled == 2
    assert list(held) == [outcome, problem]
    held.close()


@pytest.mark.parametrize("budget", [spill.SPILL_BYTES, 1])
def test_closing_before_reading_is_harmless(budget: int) -> None:
    held: SpillList = SpillList(budget)
    held.append(1, 5)
    held.close()
    held.close()


def test_an_item_too_deep_to_write_out_keeps_the_rest_in_memory() -> None:
    """A hostile thread's output nested past the pickler's recursion: nothing is lost, memory just stays."""
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    held: SpillList = SpillList(budget=10)
    held.append("first", 20)
    held.append(deep, 5)
    held.append("last", 20)
    items = list(held)
    assert items[0] == "first" and items[2] == "last" and items[1] is deep
    held.close()
