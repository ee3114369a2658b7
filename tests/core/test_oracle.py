"""The per-dialect checkers (the oracle every repair is judged by) word refusals as the providers do."""

from __future__ import annotations

import pytest

from threadfix import dialects
from threadfix.repair import repair_items

U = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}


def messages(name, items):
    return [v.message for v in dialects.get(name).check(items)]


def test_responses_missing_and_orphan_outputs():
    items = [U, {"type": "function_call", "call_id": "call_A", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "call_B", "output": "x"},
             {"type": "custom_tool_call", "call_id": "call_C", "name": "g", "input": "x"}]
    assert messages("openai-responses", items) == [
        "No tool output found for function call call_A.",
        "No tool call found for function call output with call_id call_B.",
        "No tool output found for custom tool call call_C.",
    ]


def test_responses_duplicate_item_ids():
    call = {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "c", "output": "x"}
    assert "Duplicate item found with id fc_1" in messages("openai-responses", [U, call, out, dict(call)])[0]
    # the fast path promises acceptance, so it must see duplicate ids too
    assert not dialects.get("openai-responses").quick_accepted([U, call, out, dict(call, call_id="d"),
                                                                dict(out, call_id="d")])


def test_responses_output_type_must_match_call_type():
    items = [U, {"type": "custom_tool_call", "call_id": "c", "name": "g", "input": "x"},
             {"type": "function_call_output", "call_id": "c", "output": "x"}]
    assert messages("openai-responses", items) == ["No tool output found for custom tool call c.",
                                                   "No tool call found for function call output with call_id c."]
    repaired = repair_items(items, dialects.get("openai-responses"))[1]
    assert dialects.get("openai-responses").check(repaired) == []


def test_chat_block_rules():
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}
    items = [{"role": "user", "content": "x"}, call, {"role": "tool", "tool_call_id": "a", "content": "A"},
             {"role": "user", "content": "y"}, {"role": "tool", "tool_call_id": "b", "content": "B"}]
    found = messages("openai-chat", items)
    assert found[0].endswith("The following tool_call_ids did not have response messages: b")
    assert found[1] == ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                        "with 'tool_calls'.")


def test_chat_duplicate_and_unknown_ids_in_block():
    call = {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    items = [call, {"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "a", "content": "2"},
             {"role": "tool", "tool_call_id": "z", "content": "3"}]
    found = messages("openai-chat", items)
    assert "Duplicate value for 'tool_call_id' of 'a', in messages[1] and messages[2]" in found[0]
    assert "'tool_call_id' of 'z' not found in 'tool_calls' of previous message" in found[1]


def test_chat_same_id_twice_in_one_messages_tool_calls():
    """OpenAI refuses one id twice among an assistant message's tool_calls, even when a tool message answers it
    (issue #23); an id reused in a later message is another call, refused by no block rule."""
    def calls(*ids):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}

    items = [{"role": "user", "content": "x"}, calls("a", "a", "b"), {"role": "tool", "tool_call_id": "a", "content": "1"},
             {"role": "tool", "tool_call_id": "b", "content": "2"}]
    assert messages("openai-chat", items) == ["Invalid parameter: Duplicate value for 'tool_call_id' of 'a' in messages[1]."]
    answer = {"role": "tool", "tool_call_id": "a", "content": "1"}
    assert messages("openai-chat", [items[0], calls("a"), answer, calls("a"), answer]) == []


def test_anthropic_results_must_lead_the_next_turn():
    items = [{"role": "user", "content": "x"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_A", "name": "f", "input": {}}]},
             {"role": "user", "content": [{"type": "text", "text": "t"}, {"type": "tool_result", "tool_use_id": "toolu_A"}]}]
    found = messages("anthropic", items)
    assert found[0].startswith("messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A.")
    assert any("tool_result blocks must come first" in m for m in found)


def test_anthropic_merges_consecutive_user_messages():
    items = [{"role": "user", "content": "x"},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}},
                                               {"type": "tool_use", "id": "b", "name": "f", "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b"}, {"type": "text", "text": "go"}]}]
    assert messages("anthropic", items) == []


def test_anthropic_unexpected_and_multiple_results():
    items = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_X"}]},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}, {"type": "tool_result", "tool_use_id": "a"}]}]
    found = messages("anthropic", items)
    assert found[0].startswith("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_X.")
    assert "each tool_use must have a single result" in found[1]


def test_anthropic_final_server_tool_is_a_pause_not_a_fault():
    items = [{"role": "user", "content": "x"},
             {"role": "assistant", "content": [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}]}]
    assert messages("anthropic", items) == []
    items.append({"role": "user", "content": "and?"})
    assert "`web_search` tool use with id `srvtoolu_1` was found without" in messages("anthropic", items)[0]


@pytest.mark.parametrize("name", ["openai-responses", "openai-chat", "anthropic"])
def test_healthy_samples_have_no_violations(name):
    assert dialects.get(name).check([]) == []
