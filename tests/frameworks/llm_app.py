"""llm ``logs.db`` stores written by llm itself: a scripted model (an ``llm.Model`` that answers from a list,
offline), its responses logged with ``Response.log_to_db`` as the ``llm`` command logs them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llm
import sqlite_utils
from llm.logs import LogStore
from llm.parts import Message, TextPart, ToolResultPart


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class Scripted(llm.Model):
    """Answers each prompt with the next reply: text, or a list of (tool name, arguments, call id)."""

    model_id = "scripted"
    supports_tools = True
    can_stream = False

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Iterator[str]:
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            yield reply
            return
        for name, arguments, call_id in reply:
            response.add_tool_call(llm.ToolCall(name=name, arguments=arguments, tool_call_id=call_id))
        yield ""


def weather_calls(*cities: str) -> list[tuple[str, dict, str]]:
    return [("get_weather", {"city": c}, f"call_p{i}") for i, c in enumerate(cities, 1)]


def say(db: sqlite_utils.Database, conversation: Any, text: str | None, **kwargs: Any) -> Any:
    response = conversation.prompt(text, tools=[get_weather], **kwargs)
    response.text()
    response.log_to_db(db)
    return response


def write_stuck(path: Path) -> dict[str, str]:
    """One conversation per way an app breaks; their thread ids by name."""
    db = sqlite_utils.Database(path)
    ids = {}
    # the process died while the tool ran: a call at the end
    conversation = Scripted([weather_calls("Rome")]).conversation()
    say(db, conversation, "weather in Rome?")
    ids["end"] = conversation.id
    # three calls in one turn, two results sent back with the next prompt, the third lost
    conversation = Scripted([weather_calls("Rome", "Oslo", "Paris"), "two of three"]).conversation()
    first = say(db, conversation, "three cities?")
    calls = first.tool_calls()
    results = [llm.ToolResult(name=c.name, output=get_weather(**c.arguments), tool_call_id=c.tool_call_id)
               for c in calls if c.tool_call_id != "call_p2"]
    say(db, conversation, None, tool_results=results)
    ids["parallel"] = conversation.id
    # the user sent a new message instead of waiting for the tool: a call in the middle
    conversation = Scripted([weather_calls("Rome"), "ok, what then?"]).conversation()
    say(db, conversation, "weather in Rome?")
    say(db, conversation, "never mind")
    ids["moved-on"] = conversation.id
    # healthy: a call answered
    conversation = Scripted([weather_calls("Rome"), "it is sunny"]).conversation()
    first = say(db, conversation, "weather in Rome?")
    say(db, conversation, None, tool_results=first.execute_tool_calls())
    ids["healthy"] = conversation.id
    # an orphan: a tool result whose call is not in the chain (an app that trimmed its history)
    conversation = Scripted(["hello"]).conversation()
    say(db, conversation, "hi")
    ids["orphan"] = conversation.id
    store = LogStore(db)
    store.append(conversation.id, [
        Message(role="tool", parts=[ToolResultPart(name="get_weather", output="sunny in Rome", tool_call_id="call_x")]),
        Message(role="user", parts=[TextPart(text="thanks")]),
    ])
    return ids
