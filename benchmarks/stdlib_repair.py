#!/usr/bin/env python3
"""The script an engineer writes instead of installing threadfix: the standard library's json, per dialect.

Load each thread, find the tool calls no output answers, insert a placeholder output where the provider
wants it, dump. It is the plainest competitor threadfix is measured against (run.py's ``stdlib_*`` cases),
and it is correct on the threads benchmarks/generate.py writes, which is all it claims: well-formed JSON,
string call ids, one answer per call. run.py checks its output the way it checks threadfix's.

    python benchmarks/stdlib_repair.py DIALECT STORE.jsonl OUT.jsonl   # one thread a line
    python benchmarks/stdlib_repair.py DIALECT FOLDER                  # one JSON document a file, in place

DIALECT: openai-responses, openai-chat, anthropic, langchain, pydantic-ai, gemini, bedrock, ai-sdk.
"""

import json
import os
import sys

PLACEHOLDER = "error: the tool call was interrupted and never returned a result"


def responses(items):
    answered = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
    out = []
    for item in items:
        out.append(item)
        if item.get("type") == "function_call" and item["call_id"] not in answered:
            out.append({"type": "function_call_output", "call_id": item["call_id"], "output": PLACEHOLDER})
    return out


def _after_block(messages, calls_of, answered_by, make):
    """Chat-shaped lists (OpenAI Chat, LangChain): a model message's answers right after it, then the rest."""
    answered = {m[answered_by] for m in messages if m.get(answered_by)}
    out, pending = [], []
    for message in messages:
        if pending and not message.get(answered_by):
            out.extend(make(call_id) for call_id in pending)
            pending = []
        out.append(message)
        pending += [c["id"] for c in calls_of(message) if c["id"] not in answered]
    return out + [make(call_id) for call_id in pending]


def chat(messages):
    return _after_block(messages, lambda m: m.get("tool_calls") or (), "tool_call_id",
                        lambda i: {"role": "tool", "tool_call_id": i, "content": PLACEHOLDER})


def langchain(messages):
    return _after_block(messages, lambda m: m.get("tool_calls") or () if m.get("type") == "ai" else (),
                        "tool_call_id", lambda i: {"type": "tool", "tool_call_id": i, "content": PLACEHOLDER,
                                                   "status": "error"})


def anthropic(messages):
    messages, out = list(messages), []  # the next message is replaced, never changed: the caller compares
    for n, message in enumerate(messages):
        out.append(message)
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        after = messages[n + 1] if n + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in after["content"]} if after and isinstance(after["content"], list) else set()
        missing = [{"type": "tool_result", "tool_use_id": b["id"], "content": PLACEHOLDER, "is_error": True}
                   for b in message["content"] if b.get("type") == "tool_use" and b["id"] not in answered]
        if missing and after is not None and after["role"] == "user":
            text = after["content"] if isinstance(after["content"], list) else [{"type": "text", "text": after["content"]}]
            results = [b for b in text if b.get("type") == "tool_result"]
            messages[n + 1] = {**after, "content": results + missing + [b for b in text if b.get("type") != "tool_result"]}
        elif missing:
            out.append({"role": "user", "content": missing})
    return out


def pydantic_ai(messages):
    messages, out = list(messages), []
    for n, message in enumerate(messages):
        out.append(message)
        if message["kind"] != "response":
            continue
        calls = [(p["tool_call_id"], p["tool_name"]) for p in message["parts"] if p["part_kind"] == "tool-call"]
        extra = _next_turn(
            messages, n, calls, lambda m: {p.get("tool_call_id") for p in m["parts"]},
            lambda i, name: {"part_kind": "tool-return", "tool_name": name, "tool_call_id": i, "content": PLACEHOLDER},
            lambda p: p["part_kind"] == "tool-return", lambda m: m["kind"] == "request",
            lambda parts: {"kind": "request", "parts": parts})
        if extra:
            out.append(extra)
    return out


def _next_turn(messages, n, calls, answered_in, make, is_answer, replies, new_message):
    """Blocks and parts formats (pydantic-ai, Bedrock, Gemini): message n's unanswered ``calls`` (id, name) answered
    at the head of the next message when ``replies(next)`` says it takes them, else in a new message right after n."""
    after = messages[n + 1] if n + 1 < len(messages) else None
    answered = answered_in(after) if after is not None and replies(after) else set()
    missing = [make(call_id, name) for call_id, name in calls if call_id not in answered]
    if missing and after is not None and replies(after):
        key = "content" if "content" in after else "parts"
        results = [b for b in after[key] if is_answer(b)]
        messages[n + 1] = {**after, key: results + missing + [b for b in after[key] if not is_answer(b)]}
        return None
    return new_message(missing) if missing else None


def bedrock(messages):
    messages, out = list(messages), []
    for n, message in enumerate(messages):
        out.append(message)
        if message["role"] != "assistant":
            continue
        calls = [(b["toolUse"]["toolUseId"], None) for b in message["content"] if "toolUse" in b]
        extra = _next_turn(
            messages, n, calls, lambda m: {b["toolResult"]["toolUseId"] for b in m["content"] if "toolResult" in b},
            lambda i, _: {"toolResult": {"toolUseId": i, "content": [{"text": PLACEHOLDER}], "status": "error"}},
            lambda b: "toolResult" in b, lambda m: m["role"] == "user", lambda blocks: {"role": "user", "content": blocks})
        if extra:
            out.append(extra)
    return out


def gemini(contents):
    contents, out = list(contents), []
    for n, content in enumerate(contents):
        out.append(content)
        if content.get("role") != "model":
            continue
        calls = [(p["functionCall"]["id"], p["functionCall"]["name"]) for p in content["parts"] if "functionCall" in p]
        extra = _next_turn(
            contents, n, calls,
            lambda c: {p["functionResponse"]["id"] for p in c["parts"] if "functionResponse" in p},
            lambda i, name: {"functionResponse": {"id": i, "name": name, "response": {"error": PLACEHOLDER}}},
            lambda p: "functionResponse" in p, lambda c: c.get("role") != "model" and any("functionResponse" in p for p in c["parts"]),
            lambda parts: {"role": "user", "parts": parts})
        if extra:
            out.append(extra)
    return out


def ai_sdk(messages):
    out = []
    for message in messages:
        parts = [{**p, "state": "output-error", "errorText": PLACEHOLDER}
                 if p["type"].startswith("tool-") and p.get("state") in ("input-streaming", "input-available") else p
                 for p in message.get("parts", ())]
        out.append({**message, "parts": parts} if parts != message.get("parts", []) else message)
    return out


REPAIRS = {"openai-responses": responses, "openai-chat": chat, "anthropic": anthropic, "langchain": langchain,
           "pydantic-ai": pydantic_ai, "gemini": gemini, "bedrock": bedrock, "ai-sdk": ai_sdk}


def main(argv):
    if len(argv) not in (2, 3) or argv[0] not in REPAIRS:
        sys.exit(__doc__)
    repair, source = REPAIRS[argv[0]], argv[1]
    if os.path.isdir(source):
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            with open(path, encoding="utf-8") as f:
                messages = json.load(f)
            repaired = repair(messages)
            if len(repaired) != len(messages) or repaired != messages:
                with open(path + ".tmp", "w", encoding="utf-8") as f:
                    json.dump(repaired, f, ensure_ascii=False)
                os.replace(path + ".tmp", path)
        return
    with open(source, encoding="utf-8") as f, open(argv[2], "w", encoding="utf-8") as out:
        for line in f:
            thread = json.loads(line)
            key = "messages" if "messages" in thread else "items"
            thread[key] = repair(thread[key])
            out.write(json.dumps(thread, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
