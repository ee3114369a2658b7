"""The session registry's cheap test never turns a session away: every first records an app module recognises
pass its entry's ``may_be``, so importing the module only when it passes changes nothing (issue #28)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from threadfix.stores.sessions import CONTAINERS

#: the keys and values the three apps' ``recognise`` look at, and some they do not
KEYS = ["type", "uuid", "parentUuid", "leafUuid", "messageId", "message", "payload", "timestamp", "id", "instructions",
        "git", "record_type", "sessionId", "projectHash", "messages", "items", "role"]
SCALARS = st.sampled_from(["user", "assistant", "summary", "file-history-snapshot", "progress", "system",
                           "session_meta", "response_item", "event_msg", "state", "message", "function_call", "x",
                           1, None])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(
    st.sampled_from(KEYS), inner, max_size=3), max_leaves=4)
TYPED = st.fixed_dictionaries({"type": SCALARS}, optional={key: VALUES | st.dictionaries(st.sampled_from(KEYS), VALUES)
                                                           for key in KEYS if key != "type"})
RECORDS = TYPED | st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6) | st.lists(VALUES, max_size=2) | SCALARS


#: one set of first records for each way each app's ``recognise`` says yes
BRANCHES = [
    ([{"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}}], ".jsonl"),
    ([{"type": "summary", "summary": "s", "leafUuid": "u9"}], ".jsonl"),
    ([{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}}], ".jsonl"),
    ([{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}}], ".jsonl"),
    ([{"id": "s", "timestamp": "2025-05-01", "instructions": ""}, {"record_type": "state"}], ".jsonl"),
    ([{"sessionId": "s", "projectHash": "p", "messages": []}], ".json"),
    ([{"sessionId": "s", "projectHash": "p"}], ".jsonl"),
]


@example(*BRANCHES[0])
@example(*BRANCHES[1])
@example(*BRANCHES[2])
@example(*BRANCHES[3])
@example(*BRANCHES[4])
@example(*BRANCHES[5])
@example(*BRANCHES[6])
@given(st.lists(TYPED, min_size=1, max_size=3) | st.lists(RECORDS, min_size=1, max_size=8),
       st.sampled_from([".json", ".jsonl", ".txt"]))
def test_what_a_module_recognises_passes_its_cheap_test(values: list, suffix: str) -> None:
    for entry in CONTAINERS:
        if entry.container().recognise(values, suffix):
            assert entry.may_be(values, suffix), entry.name


def test_each_way_an_app_recognises_its_records_is_one_of_the_examples() -> None:
    """(So the property above is not vacuous: each example is recognised, by one app only, and every app is met.)"""
    names = []
    for values, suffix in BRANCHES:
        (recognised,) = [entry.name for entry in CONTAINERS if entry.container().recognise(values, suffix)]
        names.append(recognised)
    assert sorted(set(names)) == sorted(entry.name for entry in CONTAINERS)
