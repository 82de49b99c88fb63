"""Opening a page under AppTest on a workspace, and finding what AppTest does not index by key
(st.dataframe, st.plotly_chart, buttons, metrics) by what they show."""
from __future__ import annotations

import base64
import json
import signal
import subprocess
import time
from contextlib import contextmanager

import numpy as np
from streamlit.testing.v1 import AppTest

from pipeline.synth import jobs
from workbench.config import REPO_ROOT

PAGES = REPO_ROOT / "pages"


def frame(at, *columns):
    for df in at.dataframe:
        value = df.value
        if all(c in value.columns for c in columns):
            return value
    raise LookupError(f"no dataframe with columns {columns}")


def chart(at, key: str) -> dict:
    """The figure JSON of the plotly chart with ``key``."""
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if key in el.proto.id]
    assert charts, f"no plotly chart with key {key}: {[el.proto.id for el in at.get('plotly_chart')]}"
    return charts[0]


def plotly_array(value) -> np.ndarray:
    """A plotly array from a figure's JSON: a list, or {"dtype", "bdata"[, "shape"]} (base64)."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return arr.reshape([int(x) for x in str(shape).split(",")]) if shape else arr
    return np.asarray(value)


def open_page(ws, monkeypatch, page: str) -> AppTest:
    """pages/<page> run once on the workspace ws; it must raise nothing."""
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    monkeypatch.setenv("WORKBENCH_AUTHOR", "page-test")
    at = AppTest.from_file(str(PAGES / page), default_timeout=180).run()
    assert not at.exception, at.exception
    return at


def button(at, key: str):
    hits = [b for b in at.button if b.key == key]
    assert hits, f"no button {key}: {[b.key for b in at.button]}"
    return hits[0]


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def codes(at) -> list[str]:
    return [c.value for c in at.code]


def wait_for_exit(ws, run) -> None:
    """The launched batch process ends by itself (a workspace without a graph has nothing to
    sample); cancelled if it does not, so no test leaves it running."""
    pid = int(run["pid"])
    deadline = time.monotonic() + 120
    while jobs.is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    try:
        assert not jobs.is_alive(pid), "the batch process did not end on a workspace without a graph"
    finally:
        if jobs.is_alive(pid):
            jobs.cancel(ws, run["run_id"])


@contextmanager
def stand_in_batch():
    """A stand-in batch process in its own session, as a launch starts one; killed if still alive."""
    proc = subprocess.Popen(["sleep", "120"], start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def cancel_stops(at, key: str, proc) -> None:
    """The page's Cancel button (``key``) says the cancel was sent and SIGTERM ends the process."""
    button(at, key).click().run()
    assert not at.exception, at.exception
    assert any(w.value.startswith("Cancel requested") for w in at.warning)
    assert proc.wait(timeout=10) == -signal.SIGTERM
