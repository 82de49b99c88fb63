"""The dashboard's entry script through AppTest: the access gate of a network bind, and every
page on a demo workspace that is still being built."""
from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from workbench.app_server import ENV_TOKEN
from workbench.config import REPO_ROOT
from workbench.demo_status import STAGES, new_status, write_status

APP = str(REPO_ROOT / "workbench" / "app.py")
TOKEN = "s3cret-token-for-the-gate-test"
PAGES = ["skills", "scenarios", "graph", "path_coverage", "synthesis", "tasks", "llm_costs", "settings", "difficulty"]


def _titles(at) -> list[str]:
    return [t.value for t in at.title]


def _overview_shown(at) -> bool:
    return any(m.label == "Skills" for m in at.metric)


@pytest.fixture
def served(demo_workspace, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    monkeypatch.delenv(ENV_TOKEN, raising=False)
    return demo_workspace


def test_no_token_configured_no_gate(served):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception and _overview_shown(at) and not at.text_input


def test_the_gate_asks_for_the_token_and_refuses_a_wrong_one(served, monkeypatch):
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception and not _overview_shown(at)
    assert "Access token" in at.text_input[0].label
    at.text_input[0].input("guess-" + TOKEN)
    at.button[0].click().run()
    assert not _overview_shown(at) and "Wrong access token" in at.error[0].value
    at.text_input[0].input(TOKEN)
    at.button[0].click().run()
    assert not at.exception and _overview_shown(at) and not at.text_input
    at.run()   # once in, the session stays in
    assert _overview_shown(at)


def test_the_token_in_the_url_lets_in_once_and_leaves_the_address(served, monkeypatch):
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["token"] = TOKEN
    at.run()
    assert not at.exception and _overview_shown(at)
    assert "token" not in at.query_params
    wrong = AppTest.from_file(APP, default_timeout=60)
    wrong.query_params["token"] = TOKEN[:-1]
    wrong.run()
    assert not _overview_shown(wrong) and "Wrong access token" in wrong.error[0].value


def test_a_gated_page_url_shows_nothing_before_the_token(served, monkeypatch):
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("../pages/settings.py").run()
    assert not at.exception and _titles(at) == ["SkillGraph Workbench"]
    assert [t.label for t in at.text_input] == ["Access token (printed by `workbench app` at start)"]


def _half_built(ws, stage: str) -> None:
    """The workspace as the demo build leaves it when `stage` is the one running."""
    from pipeline.graph.build import build_graph
    from pipeline.scenarios.run import infer_offline
    if stage in ("graph", "sample"):
        infer_offline(ws)
    if stage == "sample":
        build_graph(ws)
    keys = ["ingest", "scenarios", "graph", "sample", "tasks"]
    status = new_status(keys, ws.runs_dir / "demo-build.log")
    for key in keys[:keys.index(stage)]:
        status.stage(key).state = "done"
    status.stage(stage).state = "running"
    status.pid = os.getpid()   # a live build: this test's own pid stands for it
    write_status(ws.root, status)


@pytest.mark.parametrize("stage", ["scenarios", "graph", "sample"])
def test_every_page_says_being_built_on_a_half_built_demo(served, stage):
    _half_built(served, stage)
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert not at.exception
    assert "being built" in at.get("progress")[0].proto.text   # the Overview's own
    for page in PAGES:
        at.switch_page(f"../pages/{page}.py").run()
        assert not at.exception, f"{page}: {at.exception}"
        assert any("being built" in i.value and f"now: {STAGES[stage].lower()}" in i.value for i in at.info), page
