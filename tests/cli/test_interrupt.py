"""Ctrl-C during a database repair (issue #22): the batches already committed are reported, change line by
change line, with the journal that undoes them, then exit 130; what was not committed is not reported."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.sqlite.dbs import chat_table

ROOT = Path(__file__).resolve().parents[2]


def test_an_interrupted_repair_reports_what_it_committed(tmp_path: Path) -> None:
    path = chat_table(tmp_path / "chats.db", (f"t{n:05}" for n in range(40_000)))
    journals = tmp_path / "journals"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "threadfix", "repair", "--min-age", "0", "--jobs", "1",
                                "--journal-dir", str(journals), str(path)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.stat().st_size > 100_000 for p in journals.glob("*.jsonl")):
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    conn = sqlite3.connect(path)
    repaired = {key for key, messages in conn.execute("SELECT id, messages FROM threads") if len(json.loads(messages)) == 3}
    conn.close()
    assert 0 < len(repaired) < 40_000, "the interrupt came before the first commit or after the last"
    reported = {re.search(r"\.db:threads:id=(t\d+)#", line).group(1) for line in out.decode().splitlines()}
    assert reported == repaired
    said = err.decode()
    assert f"threadfix: interrupted; repaired {len(repaired)} of " in said
    journal = re.search(r"undo journal: (\S+) \(threadfix undo ", said).group(1)
    assert Path(journal).parent == journals
    undone = subprocess.run([sys.executable, "-m", "threadfix", "undo", journal], env=env, capture_output=True,
                            cwd=tmp_path, timeout=60)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.decode().count(": restored\n") == len(repaired)
