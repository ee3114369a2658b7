"""The report's shortcuts change no number: each is compared with the slow, obvious way of getting it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson

from hypothesis import given, settings
from hypothesis import strategies as st

from threadfix import dialects
from threadfix import report as report_module
from threadfix.batch import Scanned
from threadfix.failures import clip
from threadfix.model import Address, Thread
from threadfix.report import OTHER_TOOLS, PATTERN_CHARS, Report, pattern_of
from threadfix.stores.base import ITEM_TIME_KEYS, parse_time

CORPUS = Path(__file__).resolve().parents[1] / "failures" / "corpus" / "corpus.jsonl"
# what the masks look for, and text around it
PIECES = ("-", ":", "://", "@", ".", '"', "'", "`", "/", "\\", "0x", "0X1F", "12", "2024-01-02", "12:30:45", "a1b2c3d4",
          "DEADBEEF", "deadbeef", "550e8400-e29b-41d4-a716-446655440000", "user@host.io", "http://h/x", "a.b.c1", " ", "  ",
          "\n", "\t", "\u00a0", "\u2003", "\x1f", "é", "٣", "٣٤:٥٦:٧٨", "x_1", "ſ", "K", "1a", "b-2", "z٣", "h1.h2.h3",
          "web-01.eu:443", "9:07:33", "~/a", "C:\\x", "../p", "./q", "+3", "-7.5", "a/b", "_x", "٣/٤")


@settings(max_examples=500)
@given(text=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=10).map("".join))
def test_pattern_of_is_every_mask_in_turn(text: str) -> None:
    """Each mask's cheap test holds wherever its regex would change the text: skipping the masks it rules out
    gives the pattern every mask in turn gives."""
    unguarded = text
    for regex, mask, _ in report_module.written_masks():
        unguarded = regex.sub(mask, unguarded)
    assert pattern_of(text) == clip(unguarded.strip(), PATTERN_CHARS)


@settings(max_examples=500)
@given(text=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=10).map("".join))
def test_each_masks_test_holds_wherever_its_regex_changes_the_text(text: str) -> None:
    for regex, mask, may_match in report_module.written_masks():
        if regex.sub(mask, text) != text:
            assert may_match(text), regex.pattern


@settings(max_examples=500)
@given(text=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=10).map("".join))
def test_each_led_regex_masks_what_its_regex_as_written_masks(text: str) -> None:
    """A lookahead for the characters a regex's matches start with changes no match."""
    for (led, mask, _), (written, _, _) in zip(report_module._LED_MASKS, report_module.written_masks(), strict=True):
        assert led.sub(mask, text) == written.sub(mask, text), written.pattern


def test_the_led_regexes_mask_the_failure_corpus_as_written() -> None:
    """Every text of the failure corpus, whole and as an error message is clipped, through the masks in turn both
    ways."""
    texts = [orjson.loads(line)["text"] for line in CORPUS.read_bytes().splitlines() if line.strip()]
    assert len(texts) > 4000
    for text in texts:
        for led_text in {text, clip(text, report_module.MESSAGE_CHARS)}:
            written_text = led_text
            for (led, mask, _), (written, _, _) in zip(report_module._LED_MASKS, report_module.written_masks(), strict=True):
                led_text, written_text = led.sub(mask, led_text), written.sub(mask, written_text)
                assert led_text == written_text, (written.pattern, text[:200])


TIME_VALUES = st.one_of(st.none(), st.integers(0, 2_000_000_000_000), st.sampled_from(["2024-05-06T07:08:09Z", "x", ""]),
                        st.booleans(), st.floats(allow_nan=False))


@given(item=st.dictionaries(st.sampled_from((*ITEM_TIME_KEYS, "type", "role", "id")), TIME_VALUES, max_size=4))
def test_item_time_is_the_first_key_that_holds_a_time(item: dict) -> None:
    found = next((t for key in ITEM_TIME_KEYS if item.get(key) is not None and (t := parse_time(item[key])) is not None),
                 None)
    assert report_module._item_time(item) == found


def _responses_thread(number: int, tools: list[str]) -> Scanned:
    items: list[dict] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]
    for i, tool in enumerate(tools):
        items.append({"type": "function_call", "call_id": f"c{number}_{i}", "name": tool, "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{number}_{i}", "output": "ok"})
    dialect = dialects.get("openai-responses")
    return Scanned(Thread(Address("t.jsonl", number), items), dialect, dialect.index(items))


def test_tools_get_their_own_row_in_the_order_they_are_first_seen(monkeypatch) -> None:
    """Calls are counted per thread and added once per tool; the tools that keep a row are still the first seen."""
    monkeypatch.setattr(report_module, "MAX_TOOLS", 2)
    report = Report()
    for number, tools in enumerate([["b", "a", "a", "a"], ["c", "c", "b", "d"]]):
        scanned = _responses_thread(number, tools)
        report.add(scanned.thread, scanned.dialect, scanned.index)
    assert list(report.tools) == ["b", "a", OTHER_TOOLS]
    assert {name: stats.calls for name, stats in report.tools.items()} == {"b": 2, "a": 3, OTHER_TOOLS: 3}
    assert {name: stats.outputs for name, stats in report.tools.items()} == {"b": 2, "a": 3, OTHER_TOOLS: 3}


@given(items=st.lists(st.one_of(
    st.dictionaries(st.sampled_from((*ITEM_TIME_KEYS, "type", "role")), TIME_VALUES, max_size=3),
    st.sampled_from(["created_at", "x", 3, None]), st.lists(st.sampled_from(["time", "x"]), max_size=2)), max_size=4))
def test_a_timeless_thread_is_one_whose_items_give_no_time(items: list) -> None:
    """Where no item has a time key, every item's day is the thread's: what _Times.of would find item by item."""
    if report_module._timeless(items):
        assert all(report_module._item_time(item) is None for item in items if isinstance(item, dict))
    else:
        assert not all(isinstance(item, dict) and item.keys().isdisjoint(ITEM_TIME_KEYS) for item in items)


@given(items=st.lists(st.one_of(
    st.dictionaries(st.sampled_from((*ITEM_TIME_KEYS, "type")), TIME_VALUES, max_size=3),
    st.sampled_from(["created_at", 3, None]), st.lists(st.sampled_from(["time", "x"]), max_size=2)), max_size=5),
    messages=st.lists(st.integers(-7, 7), max_size=6),
    document=st.one_of(st.none(), st.dictionaries(st.sampled_from(("created_at", "updated_at", "id")), TIME_VALUES,
                                                  max_size=2)))
def test_calls_by_day_is_each_calls_day_in_turn(items: list, messages: list[int], document) -> None:
    """The one pass over the calls' messages gives each call's own day, messages outside the thread included (a
    negative index is no message of the thread, as an index past its end is not), and the thread's day is the
    one read from its container and all of its items."""
    from threadfix.model import Call

    with_document = dict(document) if document is not None else None
    thread = Thread(Address("t.jsonl", 0), items, document=with_document)
    calls = tuple(Call(f"c{i}", "tool", "function_call", (message, -1)) for i, message in enumerate(messages))
    times = report_module._Times(thread)
    moment = thread.last_changed(fallback=False)
    if moment is None and with_document:
        moment = next((t for key in report_module.THREAD_START_KEYS
                       if (t := parse_time(with_document.get(key))) is not None), None)
    assert times.thread_day == report_module.day_of(moment)
    by_day: dict = {}
    for call in calls:
        day = report_module._Times(thread).of(call.at)
        by_day[day] = by_day.get(day, 0) + 1
    assert dict(times.calls_by_day(calls)) == by_day


@given(values=st.lists(st.sampled_from(["shell", "read_file", "grep", "", OTHER_TOOLS]) | st.text(max_size=3), max_size=30))
def test_a_tally_is_what_a_counter_holds_in_the_same_order(values: list[str]) -> None:
    assert list(report_module._tally(values).items()) == list(Counter(values).items())
