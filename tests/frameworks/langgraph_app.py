"""LangGraph apps that write SqliteSaver stores the ways apps break, with langchain-core's fake chat model."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, with tools bound as a real one would (the scripted replies name them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    if city == "Oslo":
        raise RuntimeError("the weather service went away")
    return f"sunny in {city}"


def calls(*cities: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": c}, "id": f"call_p{i}"}
                                             for i, c in enumerate(cities, 1)])


@contextmanager
def saver(path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def react(checkpointer: SqliteSaver, replies: list[AIMessage]) -> Any:
    """``create_react_agent`` (each tool call its own task; checks the history before each model call)."""
    import warnings

    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(ScriptedModel(messages=iter(replies)), [get_weather], checkpointer=checkpointer)


def chatbot(checkpointer: SqliteSaver, replies: list[AIMessage]) -> Any:
    """The tutorial chatbot: ``StateGraph(MessagesState)``, a ToolNode, approval before tools."""
    model = ScriptedModel(messages=iter(replies))
    graph = StateGraph(MessagesState)
    graph.add_node("chatbot", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([get_weather]))
    graph.add_conditional_edges("chatbot", tools_condition)
    graph.add_edge("tools", "chatbot")
    graph.add_edge(START, "chatbot")
    return graph.compile(checkpointer=checkpointer, interrupt_before=["tools"])


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def write_stuck(path: Path) -> None:
    """One thread per way an app breaks."""
    with saver(path) as cp:
        # paused before its tools and never resumed: a call at the end
        chatbot(cp, [calls("Rome")]).invoke({"messages": [HumanMessage("weather in Rome?")]}, config("end"))
        # the tool node crashed mid-batch: two outputs saved only as pending writes
        try:
            react(cp, [calls("Rome", "Oslo", "Paris")]).invoke({"messages": [HumanMessage("three cities?")]},
                                                              config("parallel"))
        except RuntimeError:
            pass
        # the user sent a new message instead of approving: a call in the middle
        bot = chatbot(cp, [calls("Rome"), AIMessage(content="ok, what then?")])
        bot.invoke({"messages": [HumanMessage("weather in Rome?")]}, config("moved-on"))
        bot.invoke({"messages": [HumanMessage("never mind")]}, config("moved-on"))
        # trimmed: the AIMessage of a ToolMessage removed, an orphan output left
        bot = chatbot(cp, [calls("Rome"), AIMessage(content="sunny")])
        bot.invoke({"messages": [HumanMessage("weather in Rome?")]}, config("orphan"))
        bot.invoke(None, config("orphan"))
        state = bot.get_state(config("orphan"))
        ai = next(m for m in state.values["messages"] if isinstance(m, AIMessage) and m.tool_calls)
        bot.update_state(config("orphan"), {"messages": [RemoveMessage(id=ai.id)]})
        # healthy
        bot = chatbot(cp, [AIMessage(content="hello")])
        bot.invoke({"messages": [HumanMessage("hi")]}, config("healthy"))


@tool
def refund(amount: int) -> str:
    """Refund an amount, once a person approved it (``interrupt()`` pauses the run until the app resumes it)."""
    from langgraph.types import interrupt

    return "refunded" if interrupt({"approve": amount}) else "declined"


def write_waiting(path: Path) -> None:
    """A thread paused by ``interrupt()`` inside its tool: an ``__interrupt__`` pending write of the latest
    checkpoint, its call unanswered in the messages."""
    import warnings

    from langgraph.prebuilt import create_react_agent

    reply = AIMessage(content="", tool_calls=[{"name": "refund", "args": {"amount": 40}, "id": "call_r1"}])
    with saver(path) as cp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(ScriptedModel(messages=iter([reply])), [refund], checkpointer=cp)
        agent.invoke({"messages": [HumanMessage("refund 40?")]}, config("approval"))
