"""Google ADK ``DatabaseSessionService`` databases on SQLite written by ADK itself: an ``LlmAgent`` on a scripted
model (a ``BaseLlm`` that answers from a list, offline) run by the in-process ``Runner``, stopped the ways apps
break."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, ClassVar

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types

from tests.frameworks.common import killed

APP, USER = "weather", "u1"


def get_weather(city: str) -> dict:
    """The weather in a city (the process dies while it looks up Oslo)."""
    if city == "Oslo":
        os._exit(9)
    return {"forecast": f"sunny in {city}"}


class Scripted(BaseLlm):
    """Answers each request with the next reply: text, or a list of (name, args, id) function calls; keeps the
    contents it was sent."""

    model: str = "scripted"
    replies: list[Any] = []
    seen: ClassVar[list[list[dict]]] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        Scripted.seen.append([c.model_dump(exclude_none=True, mode="json") for c in llm_request.contents])
        reply = self.replies.pop(0)
        if isinstance(reply, str):
            parts = [types.Part(text=reply)]
        else:
            parts = [types.Part(function_call=types.FunctionCall(id=i, name=n, args=a)) for n, a, i in reply]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def weather_calls(*cities: str) -> list[tuple[str, dict, str]]:
    return [("get_weather", {"city": c}, f"call_p{i}") for i, c in enumerate(cities, 1)]


def service(path: Path) -> DatabaseSessionService:
    return DatabaseSessionService(f"sqlite+aiosqlite:///{path}")


def run(path: Path, session: str, replies: list[Any], text: str, *, create: bool = True,
        tools: tuple[Any, ...] = (get_weather,)) -> list[Any]:
    """One turn of the agent on ``session``: the events it produced."""
    async def turn() -> list[Any]:
        sessions = service(path)
        try:
            if create and await sessions.get_session(app_name=APP, user_id=USER, session_id=session) is None:
                await sessions.create_session(app_name=APP, user_id=USER, session_id=session)
            agent = LlmAgent(name="assistant", model=Scripted(replies=list(replies)), tools=list(tools))
            runner = Runner(app_name=APP, agent=agent, session_service=sessions)
            message = types.Content(role="user", parts=[types.Part(text=text)])
            return [e async for e in runner.run_async(user_id=USER, session_id=session, new_message=message)]
        finally:
            await sessions.close()
    return asyncio.run(turn())


def turn(path: str, session: str, replies: list[Any], text: str) -> None:
    """One turn of the agent on ``session``, its replies as JSON gives them."""
    run(Path(path), session, [r if isinstance(r, str) else [tuple(c) for c in r] for r in replies], text)


def write_stuck(path: Path) -> None:
    """One session per way an app breaks."""
    run(path, "healthy", ["hello"], "hi")  # (creates the tables in this process)
    # the process died while the tool ran: a call at the end; in the middle of a batch of three; and again
    killed(__name__, [("turn", [str(path), "end", [weather_calls("Oslo")], "weather in Oslo?"]),
                      ("turn", [str(path), "parallel", [weather_calls("Rome", "Oslo", "Paris")], "three cities?"]),
                      ("turn", [str(path), "moved-on", [weather_calls("Oslo")], "weather in Oslo?"])])
    # the results the app had of a batch whose process died, saved as ADK saves a batch's results
    append(path, "parallel", "assistant", "user", [
        types.Part(function_response=types.FunctionResponse(id=f"call_p{i}", name="get_weather",
                                                            response={"forecast": f"sunny in {c}"}))
        for i, c in ((1, "Rome"), (3, "Paris"))])
    # the user sent a new message: ADK leaves the unanswered call out of what it sends, and stores it
    run(path, "moved-on", ["ok, what then?"], "never mind")
    # a response whose call is not in the session (an app that saved it to the wrong session)
    run(path, "orphan", ["hello"], "hi")
    append(path, "orphan", "assistant", "user", [types.Part(function_response=types.FunctionResponse(
        id="call_x", name="get_weather", response={"forecast": "sunny in Rome"}))])


def append(path: Path, session: str, author: str, role: str, parts: list[Any]) -> None:
    """An event saved through the session service, as an app (or ADK's runner) appends one."""
    from google.adk.events import Event

    async def add() -> None:
        sessions = service(path)
        try:
            found = await sessions.get_session(app_name=APP, user_id=USER, session_id=session)
            invocation = found.events[-1].invocation_id
            await sessions.append_event(found, Event(author=author, invocation_id=invocation,
                                                     content=types.Content(role=role, parts=parts)))
        finally:
            await sessions.close()
    asyncio.run(add())


def request_approval(amount: int) -> None:
    """Ask a person to approve a refund (a long-running tool: it returns nothing, the answer comes later)."""


def write_waiting(path: Path, *, moved_on: bool = False) -> None:
    """A session whose last call is to a ``LongRunningFunctionTool``: ADK marks it in the event's
    ``long_running_tool_ids`` and ends the turn without a response; with ``moved_on`` the user then wrote again."""
    from google.adk.tools.long_running_tool import LongRunningFunctionTool

    tools = (LongRunningFunctionTool(request_approval),)
    run(path, "approval", [[("request_approval", {"amount": 40}, "call_a1")]], "refund 40?", tools=tools)
    if moved_on:
        run(path, "approval", ["ok, what then?"], "never mind", tools=tools)
