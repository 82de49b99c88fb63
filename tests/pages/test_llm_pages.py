"""LLM & cost and Settings pages through AppTest."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from workbench.config import REPO_ROOT
from workbench.llm.call_log import CallLog, CallRecord
from workbench.llm.settings import load_settings


def _page(name, ws, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    at = AppTest.from_file(str(REPO_ROOT / "pages" / name), default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def test_llm_page_summarises_the_call_log(workspace, monkeypatch):
    at = _page("llm_costs.py", workspace, monkeypatch)
    assert any("No LLM calls yet" in i.value for i in at.info)
    log = CallLog(workspace.db)
    for i in range(6):
        log.add(CallRecord(stage="scenario_inference", item=str(i), provider="openai-compatible", model="m",
                           attempt=1, latency_ms=50, prompt_tokens=100, completion_tokens=20, cost_usd=0.01,
                           cache_hit=i >= 4, error_class="RateLimitError" if i == 0 else None))
    log.flush()
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Calls"] == "6" and metrics["HTTP calls"] == "4" and metrics["Cache hit rate"] == "33%"
    assert metrics["Cost (USD)"] == "0.0600"
    assert not at.exception


def test_settings_page_saves_and_never_shows_the_key(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_SECRET_KEY_FILE", str(tmp_path / "secret.key"))
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    at = _page("settings.py", workspace, monkeypatch)
    assert "offline" in at.caption[0].value
    at.text_input[0].input("http://127.0.0.1:8000/v1")
    at.text_input[1].input("my-model")
    key_field = next(t for t in at.text_input if t.label.startswith("API key"))
    assert "no key stored" in key_field.label
    key_field.input("sk-page-secret")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    s = load_settings(workspace.root)
    assert s.base_url == "http://127.0.0.1:8000/v1" and s.api_key.get_secret_value() == "sk-page-secret"
    assert "openai-compatible" in at.caption[0].value
    shown = " ".join(str(e.value) for e in list(at.text_input) + list(at.json) + list(at.markdown) + list(at.caption))
    assert "sk-page-secret" not in shown
    key_field = next(t for t in at.text_input if t.label.startswith("API key"))
    assert key_field.value == "" and "a key is stored" in key_field.label
    assert "sk-page-secret" not in (workspace.root / "config.json").read_text()


def _save(at, **fields):
    labels = {"endpoint": "Endpoint", "key": "API key"}
    for name, value in fields.items():
        next(t for t in at.text_input if t.label.startswith(labels[name])).input(value)
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception, at.exception


def test_settings_page_never_sends_the_key_to_a_changed_endpoint_without_confirmation(workspace, monkeypatch,
                                                                                         tmp_path):
    from tests.workbench.llm.replay_calls import workspace_call
    from workbench.llm.replay_server import ReplayServer
    monkeypatch.setenv("WORKBENCH_SECRET_KEY_FILE", str(tmp_path / "secret.key"))
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with ReplayServer() as a, ReplayServer() as b:
        at = _page("settings.py", workspace, monkeypatch)
        _save(at, endpoint=a.base_url, key="sk-page-bound")
        workspace_call(workspace, "to a")
        # every request of the call (the chat and the client's context-window probes) carried it
        assert a.stats.authorizations["Bearer sk-page-bound"] == a.stats.requests_total > 0
        _save(at, endpoint=b.base_url)  # key field left empty
        host_a, host_b = f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"
        [warning] = [w.value for w in at.warning]
        assert host_a in warning and host_b in warning and "not sent" in warning
        workspace_call(workspace, "to b, unconfirmed")
        assert b.stats.chat_requests == 1 and "Bearer sk-page-bound" not in b.stats.authorizations
        confirm = next(c for c in at.checkbox if c.label.startswith("Send the stored key to"))
        assert confirm.label == f"Send the stored key to {host_b}"
        confirm.check()
        _save(at)
        assert not at.warning
        workspace_call(workspace, "to b, confirmed")
        assert b.stats.authorizations["Bearer sk-page-bound"] > 0


def test_llm_page_shows_cost_per_synthesis_task_and_per_accepted_task_of_a_run(graph_workspace, monkeypatch):
    from tests.pages.synth_fixture import RUN_ID, make_synth_fixture
    made = make_synth_fixture(graph_workspace)
    accepted = next(t for t in made if t.verdict == "accepted")
    rejected = next(t for t in made if t.verdict == "rejected")
    log = CallLog(graph_workspace.db)
    for item, stage, cost in [(accepted.task_id, "synth_plan", 0.02), (accepted.task_id, "synth_solution", 0.03),
                              (accepted.task_id, "synth_repair_solution", 0.04),
                              (accepted.task_id, "task_judge", 0.01), (rejected.task_id, "synth_plan", 0.05),
                              ("never-stored", "synth_plan", 0.01)]:
        log.add(CallRecord(stage=stage, item=item, provider="openai-compatible", model="m", attempt=1,
                           latency_ms=50, prompt_tokens=100, completion_tokens=20, cost_usd=cost, batch_id=RUN_ID))
    log.flush()
    at = _page("llm_costs.py", graph_workspace, monkeypatch)
    assert "By task (LLM synthesis)" in [h.value for h in at.subheader]
    per_task = next(d.value for d in at.dataframe if "verdict" in d.value.columns).set_index("task_id")
    assert per_task.loc[accepted.task_id, "name"] == accepted.name
    assert per_task.loc[accepted.task_id, "cost_usd"] == pytest.approx(0.10)
    assert per_task.loc[accepted.task_id, "calls"] == 4 and per_task.loc[rejected.task_id, "verdict"] == "rejected"
    assert per_task.loc["never-stored", "name"] == "(no task stored)"
    batches = next(d.value for d in at.dataframe if "cost_per_accepted" in d.value.columns).set_index("batch_id")
    assert batches.loc[RUN_ID, "accepted"] == 1
    assert batches.loc[RUN_ID, "cost_per_accepted"] == pytest.approx(0.16)
    [fig] = [c for c in at.get("plotly_chart") if "count-errors-0" in c.proto.spec]
    assert "task_judge" in fig.proto.spec and "synth_repair_solution" in fig.proto.spec


def test_llm_page_counts_a_test_doubles_calls_and_cost_apart_and_labels_them(workspace, monkeypatch):
    """Issue 22.4 and 22.7: the demo's "Cost (USD)" and "121 HTTP calls" sat under "Provider: offline",
    labelled by no more than a model name. A test double's calls and cost are now a group of their
    own, every metric of it says so, and its model reads as a test double in the tables and figure."""
    log = CallLog(workspace.db)
    for i, model in enumerate(["gpt-x"] * 2 + ["scripted-replay (demo price)"] * 3):
        log.add(CallRecord(stage="synth_plan", item=f"t{i}", provider="openai-compatible", model=model,
                           attempt=1, latency_ms=50, prompt_tokens=100, completion_tokens=20, cost_usd=0.01 * (i + 1),
                           cache_hit=False, batch_id="demo-llm" if i >= 2 else "real"))
    log.flush()
    at = _page("llm_costs.py", workspace, monkeypatch)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Calls"] == "2" and metrics["Cost (USD)"] == "0.0300"          # the real model's alone
    assert metrics["Calls · test doubles"] == "3" and metrics["Cost (USD) · test doubles"] == "0.1200"
    assert any("made-up price" in m.value for m in at.markdown)
    by_stage = next(d.value for d in at.dataframe if "p50_latency_ms" in d.value.columns)
    assert set(by_stage["model"]) == {"gpt-x", "scripted-replay (demo price, test double)"}
    batches = next(d.value for d in at.dataframe if "cost_per_accepted" in d.value.columns).set_index("batch_id")
    assert batches.loc["demo-llm", "test_double"] and not batches.loc["real", "test_double"]
    [fig] = [c for c in at.get("plotly_chart") if "cost_fig" in c.proto.id and "task_cost_fig" not in c.proto.id]
    assert "scripted-replay (demo price, test double)" in fig.proto.spec


def test_llm_page_with_only_a_test_doubles_calls_shows_no_unlabelled_cost(workspace, monkeypatch):
    log = CallLog(workspace.db)
    log.add(CallRecord(stage="trajectory_judge", item="t", provider="openai-compatible",
                       model="scripted-trajectory-judge", attempt=1, latency_ms=5, prompt_tokens=10,
                       completion_tokens=2, cost_usd=0.0))
    log.flush()
    at = _page("llm_costs.py", workspace, monkeypatch)
    labels = [m.label for m in at.metric]
    assert labels and all(label.endswith(" · test doubles") for label in labels)
