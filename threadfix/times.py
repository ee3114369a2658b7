"""When a thread last changed, from the times its JSON holds: pure functions, below every store.

The thread model asks this of its own items (:meth:`threadfix.model.Thread.last_changed`), and stores
and reports read the same keys, so they live beneath both.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

#: keys that say when a thread last changed; a thread's own creation time says nothing about that,
#: but an item's does (an item is created when it is appended)
THREAD_TIME_KEYS = ("updated_at", "updatedAt", "modified_at", "last_updated", "last_modified")
ITEM_TIME_KEYS = (*THREAD_TIME_KEYS, "created_at", "createdAt", "timestamp", "created", "time")


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from an ISO-8601 string or a number in seconds or milliseconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str) and 8 <= len(value) <= 40:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return None


def modified_time(container: dict[str, Any] | None, items: list[Any], fallback: float | None) -> float | None:
    """When a thread last changed: its update time or its last items' times, else the file's mtime."""
    found = [t for key in THREAD_TIME_KEYS if container and (value := container.get(key)) is not None
             and (t := parse_time(value)) is not None]
    for item in items[-3:]:
        if isinstance(item, dict):
            found.extend(t for key in ITEM_TIME_KEYS if (value := item.get(key)) is not None
                         and (t := parse_time(value)) is not None)
    return max(found) if found else fallback
