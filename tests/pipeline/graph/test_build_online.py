"""Graph build with an OpenAI-compatible endpoint: embeddings and bridge verification over HTTP."""
from __future__ import annotations

import re

from pipeline.graph.build import BuildOptions, build_graph
from tests.workbench.llm.conftest import make_settings
from workbench.llm.replay_server import ReplayServer, Rule
from workbench.llm.runtime import open_client
from workbench.llm.settings import save_settings
from workbench.store import graph as store


def _verdict(body):
    text = body["messages"][-1]["content"]
    shared = re.search(r"\.(csv|json|log|txt|tar|gz|db)\b", text)
    return {"valid": bool(shared), "confidence": 0.9 if shared else 0.2,
            "reason": "the file it needs is the one left" if shared else "different artifacts"}


def test_llm_verifies_bridges_and_a_second_build_reuses_every_verdict(graph_workspace):
    with ReplayServer() as server:
        server.add_rule(Rule(match="Can the second skill start", reply=_verdict))
        llm = open_client(graph_workspace, make_settings(server, concurrency=8))
        report = build_graph(graph_workspace, BuildOptions(), llm=llm)
        assert report.bridge_provider == "openai-compatible"
        assert report.candidates > 0 and server.stats.chat_requests == report.candidates
        table = store.bridges_table(graph_workspace.db)
        assert set(table["provider"]) == {"openai-compatible"} and set(table["model"]) == {"test-model"}
        assert 0 < (table["verdict"] == "verified").sum() < len(table)
        assert table["reason"].isin(["the file it needs is the one left", "different artifacts"]).all()
        server.reset_stats()
        again = build_graph(graph_workspace, BuildOptions(), llm=open_client(graph_workspace, make_settings(server)))
        assert again.verdicts_reused == again.candidates and server.stats.chat_requests == 0


def test_openai_compatible_embeddings(graph_workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_SECRET_KEY_FILE", str(tmp_path / "k"))
    monkeypatch.setenv("WORKBENCH_EMBED_DIMENSIONS", "64")
    with ReplayServer() as server:
        save_settings(graph_workspace.root, base_url=server.base_url, model="test-model", concurrency=4,
                      budget_usd=None, api_key="sk-x")
        report = build_graph(graph_workspace, BuildOptions(embedder="openai"))
        assert server.stats.embedding_requests > 0
        assert report.embedded > 0
        assert not report.dedup_reused  # another embedder means another dedup
        first_calls = server.stats.embedding_requests
        build_graph(graph_workspace, BuildOptions(embedder="openai"))
        assert server.stats.embedding_requests == first_calls  # all from the embedding cache
