"""`workbench replay-synthesis` as a user runs it: a subprocess serving the scripted replies
until Ctrl-C, answering the real `openai` client over HTTP; bad --faults refused up front."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import openai
import pytest

from pipeline.synth.llm.scripted_faults import DEMO_PRICE, REPLAY_MODEL, ROUTE_FAULTS
from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
from tests.helpers import cli
from workbench.store import graph as graph_store


def _start(root, *args: str) -> tuple[subprocess.Popen, list[str]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_LLM") and k != "OPENAI_API_KEY"}
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--workspace", str(root), "replay-synthesis",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean)
    lines = []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Ctrl-C stops the server"):
            return proc, lines
    raise AssertionError(f"replay-synthesis ended early: {lines} {proc.stderr.read()}")


def _ask(client: openai.OpenAI, stage: str, path_id: str) -> str:
    reply = client.chat.completions.create(model=REPLAY_MODEL, messages=[
        {"role": "system", "content": f"Stage: {stage}.\nYou write task environments."},
        {"role": "user", "content": f"Path: {path_id}\nWrite the manifest."}])
    return reply.choices[0].message.content


def test_it_serves_scripted_replies_with_the_route_faults_until_ctrl_c(graph_workspace):
    ws = graph_workspace
    proc, lines = _start(ws.root, "--faults", "routes")
    try:
        text = "\n".join(lines)
        url = re.search(r"^  export WORKBENCH_LLM_BASE_URL=(http://127\.0\.0\.1:\d+/v1)$", text, re.M).group(1)
        assert f"  export WORKBENCH_LLM_MODEL={REPLAY_MODEL}" in lines
        assert "test double" in text and "synth --provider llm" in text
        batch = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
        at = lines.index(f"faults for sample batch {batch} (its first paths the recipes can serve):")
        given = dict(line.split() for line in lines[at + 1:at + 1 + len(ROUTE_FAULTS)])
        assert list(given.values()) == list(ROUTE_FAULTS)
        assert not any(SOLVE_TIMEOUT_ENV in line for line in lines)      # no never_ends among the routes
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
        broken = next(p for p, f in given.items() if f == "broken_dockerfile")
        first = json.loads(_ask(client, "synth_environment", broken))
        assert any("/app/seed/defaults.ini" in c for c in first["setup_commands"])     # broken on purpose
        repaired = json.loads(_ask(client, "synth_repair_environment", broken))
        assert not any("/app/seed/defaults.ini" in c for c in repaired["setup_commands"])
        clean = next(p for p in graph_store.batch_path_ids(ws.db, batch) if p not in given
                     and not _ask(client, "synth_environment", p).startswith("no scripted task"))
        assert not any("/app/seed/defaults.ini" in c for c in json.loads(_ask(client, "synth_environment", clean))
                       ["setup_commands"])
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.strip().splitlines()[-1].startswith("stopped after ")


def test_a_batch_sampled_while_it_runs_gets_its_faults_printed_when_asked(graph_workspace):
    """`workbench synth` samples its own paths after the server started: the faults follow."""
    ws = graph_workspace
    proc, lines = _start(ws.root, "--faults", "routes", "--latency", "0.01")
    try:
        url = re.search(r"WORKBENCH_LLM_BASE_URL=(\S+)", "\n".join(lines)).group(1)
        sampled = cli("--workspace", str(ws.root), "sample", "--n", "12", "--seed", "5", "--json")
        assert sampled.returncode == 0, sampled.stderr
        batch = json.loads(sampled.stdout)["batch_id"]
        first = graph_store.batch_path_ids(ws.db, batch)[0]
        _ask(openai.OpenAI(base_url=url, api_key="unused", max_retries=0), "synth_plan", first)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert f"faults for sample batch {batch} (its first paths the recipes can serve):" in out.splitlines()


def test_a_never_ending_solution_fault_says_how_to_cut_it_short(tmp_path):
    spec = tmp_path / "faults.json"
    spec.write_text(json.dumps({"abc-0": "never_ends"}))
    proc, lines = _start(tmp_path / "ws", "--faults", str(spec))
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert f"  export {SOLVE_TIMEOUT_ENV}=30   # the never_ends fault: cut its solve.sh after 30 s" in lines
    assert lines[lines.index("faults by path id:") + 1] == "  abc-0  never_ends"


def test_demo_price_gives_the_replay_model_a_price_in_the_workspace(graph_workspace):
    proc, lines = _start(graph_workspace.root, "--faults", "none", "--demo-price")
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert "no faults: every reply is the correct artifact" in lines
    assert not any(SOLVE_TIMEOUT_ENV in line for line in lines)
    prices = json.loads((graph_workspace.root / "config.json").read_text())["llm"]["prices"]
    assert prices == {REPLAY_MODEL: DEMO_PRICE.model_dump()}


@pytest.mark.parametrize("args, message", [
    (["--faults", "nowhere.json"], "--faults 'nowhere.json': not one of none, routes, all and no such file"),
    (["--latency", "-1"], "--latency must be 0 or more seconds, got -1.0"),
])
def test_bad_arguments_are_refused_before_serving(tmp_path, args, message):
    r = cli("--workspace", str(tmp_path / "ws"), "replay-synthesis", *args)
    assert r.returncode == 2 and message in " ".join(r.stderr.split())
    assert "WORKBENCH_LLM_BASE_URL" not in r.stdout


def test_a_fault_file_with_an_unknown_name_says_which_entry(tmp_path):
    spec = tmp_path / "faults.json"
    spec.write_text(json.dumps(["test_bug", "broken_dockerfle"]))
    r = cli("--workspace", str(tmp_path / "ws"), "replay-synthesis", "--faults", str(spec))
    assert r.returncode == 2
    assert f"{spec}[1]: unknown fault 'broken_dockerfle'" in " ".join(r.stderr.split())


def test_help_says_it_is_a_test_double():
    r = cli("replay-synthesis", "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0 and "TEST DOUBLE" in r.stdout
    for option in ("--faults", "--port", "--latency", "--demo-price"):
        assert option in r.stdout


def test_it_answers_the_evolve_prompt_of_an_llm_built_task_with_a_variant(graph_workspace):
    """`workbench evolve` against this server: the evolve_task prompt (as LlmOperator renders it) of a
    task the scripted synthesis made gets a variant that fits the stage's schema."""
    from pipeline.evolve.llm_operator import EVOLVE, EvolvedTask, parent_json, prompt_path_id
    from pipeline.synth.llm.scripted import scripted_task
    from tests.pipeline.synth.llm.demo_paths import tool_paths
    from workbench.llm.prompts import load_template
    [(pid, ctx)] = tool_paths(graph_workspace, 1).items()
    t = scripted_task(ctx)
    messages = load_template(EVOLVE).render(
        path_id=prompt_path_id("t1__d1"), variant_id="t1__d1", parent_path=pid, operator="harder", directive="x",
        steps="(not known)", parent=parent_json(t.manifest, t.instruction, t.solution, t.tests), excerpts="(none)")
    proc, lines = _start(graph_workspace.root)
    try:
        assert any("workbench evolve" in line for line in lines)
        url = re.search(r"^  export WORKBENCH_LLM_BASE_URL=(\S+)$", "\n".join(lines), re.M).group(1)
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
        reply = client.chat.completions.create(model=REPLAY_MODEL, messages=messages).choices[0].message.content
        variant = EvolvedTask.model_validate_json(reply)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert "SHA256SUMS" in variant.change and len(variant.plan.subgoals) == len(t.plan.subgoals) + 1
