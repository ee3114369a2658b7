"""Generate stuck threads for the three core dialects from one abstract conversation (hypothesis).

A conversation is rounds of: a user message, an assistant turn making 1-3 parallel calls, their outputs
(each possibly missing, duplicated or misplaced), optionally assistant text; plus orphan outputs
sprinkled in. Each dialect renders it in its own wire shape, so every property holds for all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

TOOLS = ("shell", "read_file", "search", "get_weather")


@dataclass(frozen=True)
class CallSpec:
    call_id: str
    name: str
    answered: bool
    duplicated: bool
    misplaced: bool
    arguments: str


@dataclass(frozen=True)
class Round:
    calls: tuple[CallSpec, ...]
    text_after: bool
    user_after: bool


@dataclass(frozen=True)
class Conversation:
    rounds: tuple[Round, ...]
    orphans: tuple[int, ...]  # positions (round numbers) after which an orphan output appears


ARGUMENTS = st.sampled_from(['{"path": "a.txt"}', "{}", "", '{"q": "x"', "[1, 2]", '{"n": 18446744073709551615}'])


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    rounds = []
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            counter += 1
            calls.append(CallSpec(
                call_id=f"call_{counter:03d}",
                name=draw(st.sampled_from(TOOLS)),
                answered=draw(st.booleans()),
                duplicated=draw(st.integers(0, 5)) == 0,
                misplaced=draw(st.integers(0, 4)) == 0,
                arguments=draw(ARGUMENTS),
            ))
        rounds.append(Round(tuple(calls), text_after=draw(st.booleans()), user_after=draw(st.booleans())))
    orphans = tuple(draw(st.lists(st.integers(0, len(rounds) - 1), max_size=2)))
    return Conversation(tuple(rounds), orphans)


# --------------------------------------------------------------------------- OpenAI Responses


def responses(conv: Conversation) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [_r_user("start")]
    for r, rnd in enumerate(conv.rounds):
        misplaced = [_r_output(c.call_id, f"early {c.call_id}") for c in rnd.calls if c.answered and c.misplaced]
        items.extend(misplaced)  # an output before its call
        items.extend({"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
                     for c in rnd.calls)
        for c in rnd.calls:
            if c.answered and not c.misplaced:
                items.append(_r_output(c.call_id, f"result of {c.call_id}"))
            if c.answered and c.duplicated:
                items.append(_r_output(c.call_id, f"again {c.call_id}"))
        items.extend(_r_output(f"orphan_{r}_{i}", "lost") for i, at in enumerate(conv.orphans) if at == r)
        if rnd.text_after:
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})
        if rnd.user_after:
            items.append(_r_user(f"next {r}"))
    return items


def _r_user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _r_output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


# --------------------------------------------------------------------------- OpenAI Chat


def chat(conv: Conversation) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    late: list[dict[str, Any]] = []
    for r, rnd in enumerate(conv.rounds):
        items.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in rnd.calls]})
        items.extend(late)
        late = []
        for c in rnd.calls:
            message = {"role": "tool", "tool_call_id": c.call_id, "content": f"result of {c.call_id}"}
            if c.answered and c.misplaced:
                late.append(message)  # lands after the next message: outside its block
            elif c.answered:
                items.append(message)
            if c.answered and c.duplicated:
                items.append({"role": "tool", "tool_call_id": c.call_id, "content": f"again {c.call_id}"})
        items.extend({"role": "tool", "tool_call_id": f"orphan_{r}_{i}", "content": "lost"}
                     for i, at in enumerate(conv.orphans) if at == r)
        if rnd.text_after:
            items.append({"role": "assistant", "content": "ok"})
            items.extend(late)
            late = []
        if rnd.user_after:
            items.append({"role": "user", "content": f"next {r}"})
    items.extend(late)
    return items


# --------------------------------------------------------------------------- Anthropic


def anthropic(conv: Conversation) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for r, rnd in enumerate(conv.rounds):
        items.append({"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            *({"type": "tool_use", "id": c.call_id, "name": c.name, "input": {"arguments": c.arguments}} for c in rnd.calls),
        ]})
        results: list[dict[str, Any]] = []
        trailing: list[dict[str, Any]] = []
        for c in rnd.calls:
            block = {"type": "tool_result", "tool_use_id": c.call_id, "content": f"result of {c.call_id}"}
            if c.answered and c.misplaced:
                trailing.append(block)  # after text: not in the leading run
            elif c.answered:
                results.append(block)
            if c.answered and c.duplicated:
                trailing.append({"type": "tool_result", "tool_use_id": c.call_id, "content": f"again {c.call_id}"})
        results.extend({"type": "tool_result", "tool_use_id": f"orphan_{r}_{i}", "content": "lost"}
                       for i, at in enumerate(conv.orphans) if at == r)
        content = results + ([{"type": "text", "text": f"next {r}"}] if rnd.user_after or trailing else []) + trailing
        if content:
            items.append({"role": "user", "content": content})
        if rnd.text_after:
            items.append({"role": "assistant", "content": "ok"})
    return items


RENDERERS = {"openai-responses": responses, "openai-chat": chat, "anthropic": anthropic}
