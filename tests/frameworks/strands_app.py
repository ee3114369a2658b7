"""Strands ``FileSessionManager`` folders written by Strands itself: an agent on a scripted model (a
``strands.models.Model`` that streams the next reply from a list, offline), stopped the ways apps break."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.models.model import Model
from strands.session.file_session_manager import FileSessionManager
from strands.types.session import SessionMessage

from tests.frameworks.common import killed


@tool
def get_weather(city: str) -> str:
    """The weather in a city (the process dies while it looks up Oslo)."""
    if city == "Oslo":
        os._exit(9)
    return f"sunny in {city}"


class Scripted(Model):
    """Streams each reply in turn: text, or a list of (tool name, input, tool use id)."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):  # pragma: no cover
        raise NotImplementedError
        yield

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs) -> AsyncGenerator[dict, None]:
        self.seen.append(json.loads(json.dumps(messages, default=str)))
        reply = self.replies.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, str):
            yield {"contentBlockDelta": {"delta": {"text": reply}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for name, arguments, use_id in reply:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def weather_calls(*cities: str) -> list[tuple[str, dict, str]]:
    return [("get_weather", {"city": c}, f"call_p{i}") for i, c in enumerate(cities, 1)]


def agent(storage: Path, session: str, replies: list[Any]) -> Agent:
    return Agent(model=Scripted(replies), tools=[get_weather], agent_id="assistant",
                 session_manager=FileSessionManager(session_id=session, storage_dir=str(storage)),
                 callback_handler=None)


def messages_folder(storage: Path, session: str) -> Path:
    return storage / f"session_{session}" / "agents" / "agent_assistant" / "messages"


def turn(storage: str, session: str, replies: list[Any], text: str) -> None:
    """One prompt to the agent of ``session``."""
    agent(Path(storage), session, [r if isinstance(r, str) else [tuple(c) for c in r] for r in replies])(text)


def write_stuck(storage: Path) -> None:
    """One session per way an app breaks."""
    # the process died while the tool ran: a call at the end; in the middle of a batch of three; and again
    killed(__name__, [("turn", [str(storage), "end", [weather_calls("Oslo")], "weather in Oslo?"]),
                      ("turn", [str(storage), "parallel", [weather_calls("Rome", "Oslo", "Paris")], "three cities?"]),
                      ("turn", [str(storage), "moved-on", [weather_calls("Oslo")], "weather in Oslo?"])])
    # the app saved the two results it had of the batch
    manager = FileSessionManager(session_id="parallel", storage_dir=str(storage))
    manager.create_message("parallel", "assistant", SessionMessage({"role": "user", "content": [
        {"toolResult": {"toolUseId": "call_p1", "status": "success", "content": [{"text": "sunny in Rome"}]}},
        {"toolResult": {"toolUseId": "call_p3", "status": "success", "content": [{"text": "sunny in Paris"}]}},
    ]}, 2))
    # the app saved the user's next message itself, and the answer, without the call's result
    manager = FileSessionManager(session_id="moved-on", storage_dir=str(storage))
    manager.create_message("moved-on", "assistant", SessionMessage({"role": "user", "content": [{"text": "never mind"}]}, 2))
    manager.create_message("moved-on", "assistant",
                           SessionMessage({"role": "assistant", "content": [{"text": "ok, what then?"}]}, 3))
    # the oldest files pruned: a result whose call is gone
    agent(storage, "orphan", [weather_calls("Rome"), "it is sunny"])("weather in Rome?")
    folder = messages_folder(storage, "orphan")
    for name in ("message_0.json", "message_1.json"):
        (folder / name).unlink()
    # healthy
    agent(storage, "healthy", ["hello"])("hi")
