"""Generated transcripts and rollouts: repair is idempotent, loses no line, and leaves a chain that is linear and
answered; a result that exists anywhere in the file is re-linked, never replaced."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agents.sessions import Transcript, assert_nothing_lost, chain_uuids, repair, rollout, violations

#: how a call's result was written: after the one before it on the chain, parented on its own assistant piece
#: (off the chain, as 2.1 writes parallel results), or never
FATES = st.sampled_from(["chained", "own_piece", "missing"])


@st.composite
def transcripts(draw) -> tuple[Transcript, int]:
    """A transcript and how many of its calls have no result anywhere."""
    t = Transcript(version=draw(st.sampled_from(["1.0.98", "2.0.76", "2.1.39"])))
    missing = 0
    t.user("start", parent=None)
    calls = 0
    for turn in range(draw(st.integers(1, 4))):
        message_id = f"msg_{turn}"
        if draw(st.booleans()):
            t.text("thinking aloud", message_id)
        fates = draw(st.lists(FATES, min_size=0, max_size=3))
        pieces = []
        for fate in fates:
            calls += 1
            pieces.append((t.call(f"toolu_{calls}", message_id), f"toolu_{calls}", fate))
        written = False
        side = [(piece, call_id) for piece, call_id, fate in pieces[:-1] if fate == "own_piece"]
        for piece, call_id in side:  # written first, as 2.1 writes them (then the result that stays on the chain)
            last = t.last
            t.result(call_id, parent=piece, source=piece)
            t.last = last  # (the chain goes on from the batch, not from this branch)
        for piece, call_id, fate in pieces:
            if fate == "missing":
                missing += 1
            elif (piece, call_id) not in side:
                t.result(call_id, source=piece)
                written = True
            if draw(st.booleans()):
                t.progress()
        if not pieces or draw(st.booleans()) or not written:
            t.user(draw(st.sampled_from(["go on", "[Request interrupted by user for tool use]"])))
        if draw(st.booleans()):
            t.text("done", f"msg_{turn}_end")
    return t, missing


@given(transcripts(), st.booleans())
@settings(max_examples=60)
def test_generated_transcripts_repair_to_an_answered_linear_chain(case: tuple[Transcript, int], newline: bool) -> None:
    transcript, missing = case
    with tempfile.TemporaryDirectory() as folder:
        path = transcript.write(Path(folder) / "s.jsonl", final_newline=newline)
        before = path.read_bytes()
        stuck = bool(violations(path))
        old_chain = chain_uuids(path)
        run = repair(path)
        after = path.read_bytes()
        assert run.result.changed == int(stuck)
        assert violations(path) == []
        assert_nothing_lost(before, after)
        new_chain = chain_uuids(path)
        # every record of the old chain is still on it, in order, and the chain ends where it did (or on the
        # output of the call it ended on)
        assert [u for u in new_chain if u in old_chain] == old_chain
        assert new_chain[-1] == old_chain[-1] or json.loads(after.splitlines()[-1]).get("uuid") == new_chain[-1] \
            or new_chain[-1] not in {r.get("uuid") for r in map(json.loads, before.splitlines())}
        assert after.count(b'"tool_result"') == before.count(b'"tool_result"') + missing
        assert repair(path).result.changed == 0 and path.read_bytes() == after


@st.composite
def histories(draw) -> list[dict]:
    items: list[dict] = []
    for n in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["user", "call", "custom", "answered", "compacted"]))
        if kind == "user":
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
        elif kind in ("call", "answered"):
            items.append({"type": "function_call", "name": "exec", "arguments": "{}", "call_id": f"c{n}"})
            if kind == "answered":
                items.append({"type": "function_call_output", "call_id": f"c{n}", "output": "ok"})
        elif kind == "custom":
            items.append({"type": "custom_tool_call", "name": "apply_patch", "input": "x", "call_id": f"c{n}"})
        else:
            kept = [i for i in items[-3:] if i.get("type") not in (None, "function_call_output")]
            items.append({"record": "compacted", "payload": {"message": "s", "replacement_history": kept}})
    return items


@given(histories(), st.booleans())
@settings(max_examples=60)
def test_generated_rollouts_repair_answered_and_idempotent(items: list[dict], crlf: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = rollout(Path(folder) / "rollout-x.jsonl", items, crlf=crlf)
        before = path.read_bytes()
        repair(path)
        after = path.read_bytes()
        assert violations(path) == []
        old = before.splitlines(keepends=True)
        assert [line for line in after.splitlines(keepends=True) if line in old] == old
        assert all(line.endswith(b"\r\n" if crlf else b"\n") for line in after.splitlines(keepends=True))
        assert repair(path).result.changed == 0 and path.read_bytes() == after
