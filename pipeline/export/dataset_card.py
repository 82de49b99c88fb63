"""The dataset card (README.md) of a trajectories export: what is in it, from which agents
(as AGENT_LABELS name them: the scripted ones are probes, not models), which filter, what
decontamination dropped, and the format. A pure function of the export's report."""
from __future__ import annotations

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.export.trajectories import base_agent, is_scripted
from pipeline.verify.decontam import N
from workbench import double_rule

FORMAT_TEXT = {
    "atif": "ATIF trajectories (the format Harbor writes; `harbor.utils.trajectory_validator` accepts them): "
            "`trajectories/<rollout id>.json`, one per rollout, listed in `index.jsonl` (file, rollout_id, task, "
            "task_id, agent, model, run_id, trial_name, reward, result).",
    "chat-jsonl": "`conversations.jsonl`: one JSON object a line in the shape of Harbor's traces export "
                  "(Nemotron-Terminal-Corpus rows).",
    "parquet": "`conversations.parquet`: the rows of Harbor's traces export shape as Parquet "
               "(`conversations` is a list of {role, content} structs).",
}
FILTER_TEXT = {"all": "every rollout", "complete": "rollouts whose agent finished on its own (passed, or only the "
               "tests failed it; no timeout, crash, parse errors or unfinished episode)",
               "success": "rollouts that solved their task (reward 1)"}
ROW_FIELDS_TEXT = ("`conversations` [{role: user|assistant, content}], `agent`, `model`, `model_provider`, "
                   "`date`, `task` (task.toml name), `episode` (`episode-<n>`), `run_id`, `trial_name`, `result` "
                   "(the reward as text, or the failure class), and ours: `reward`, `rollout_id`, `task_id`.")


def _label(agent: str, stored: str, models: list[str] | None = None) -> str:
    """What the agent is; a run against a test double or by a simulated agent says so
    (workbench.double_rule: the one rule pages and figures use too)."""
    base = base_agent(agent)
    label = double_rule.agent_config_label(base, AGENT_LABELS[base] if base in AGENT_LABELS else stored, models)
    return label + (" — run by Harbor" if base in AGENT_LABELS and agent.startswith("harbor:") else "")


def card_text(r) -> str:
    """`r`: a pipeline.export.trajectories.TrajectoryExportReport."""
    unit = "trajectories" if r.format == "atif" else "rows"
    lines = ["# Terminal-agent trajectories", "",
             "Exported by SkillGraph Workbench (`workbench export trajectories`) from verified terminal tasks.", "",
             "## Contents", "",
             f"- Format: {FORMAT_TEXT[r.format]}"]
    if r.format != "atif":
        lines.append(f"- Episodes: {'every episode (one row per agent turn: the conversation up to it)' if r.episodes == 'all' else 'the last episode of each rollout (the whole conversation)'}")
    lines += [f"- Filter: `{r.filter}` — {FILTER_TEXT[r.filter]}.",
              f"- Runs: {'`' + r.run_id + '`' if r.run_id else 'every rollout run in the workspace'}.",
              f"- {sum(r.rows.values())} {unit} from {sum(r.kept.values())} of {r.considered} rollouts, "
              f"over {r.tasks} task(s).", "",
              "| agent | what it is | model(s) | rollouts | " + unit + " |", "|---|---|---|---|---|"]
    for agent in sorted(r.kept):
        models = double_rule.models_label(r.models.get(agent) or []) or "—"
        kind = _label(agent, r.labels.get(agent, agent), r.models.get(agent))
        lines.append(f"| {agent} | {kind} | {models} | {r.kept[agent]} | {r.rows[agent]} |")
    if not r.kept:
        lines.append("| — | nothing passed the selection | — | 0 | 0 |")
    lines += ["", "## Left out", ""]
    if r.scripted_left_out:
        what = ", ".join(f"{a}: {n}" for a, n in sorted(r.scripted_left_out.items()))
        lines.append(f"- Scripted agents (nop, oracle, ablation) are verifier probes, not models, and are left out "
                     f"of SFT formats unless asked for with `--agents`: {sum(r.scripted_left_out.values())} "
                     f"rollout(s) ({what}).")
    elif r.format == "atif" and (probes := {a: n for a, n in r.kept.items() if is_scripted(a)}):
        lines.append(f"- Scripted agents (nop, oracle, ablation) are verifier probes, not models; ATIF keeps every "
                     f"agent's trajectory, so {sum(probes.values())} of theirs are included "
                     f"({', '.join(f'{a}: {n}' for a, n in sorted(probes.items()))}); `--agents` picks agents.")
    elif r.format != "atif" and not r.agents_asked:
        lines.append("- Scripted agents (nop, oracle, ablation) would be left out (probes, not models); "
                     "there were none.")
    if r.agents_asked:
        lines.append(f"- Agents asked for: {', '.join(r.agents_asked)}; {r.not_asked} rollout(s) of other agents.")
    lines.append(f"- Not passing the filter: {r.filtered_out} rollout(s).")
    lines.append(f"- Without a trajectory file: {len(r.no_trajectory)} rollout(s).")
    if r.unreadable:
        lines.append(f"- Unreadable trajectories: {len(r.unreadable)}: "
                     + "; ".join(f"{d.rollout_id} ({d.why[:120]})" for d in r.unreadable[:10]))
    lines += ["", "## Decontamination", ""]
    if r.benchmark:
        lines.append(f"{N}-gram overlap against `{r.benchmark}` ({r.benchmark_files} text files): "
                     f"{len(r.contaminated)} {unit} dropped.")
        lines += [f"- {d.rollout_id}{' ' + d.episode if d.episode else ''} ({d.task}): {d.why}"
                  for d in r.contaminated[:50]]
        if len(r.contaminated) > 50:
            lines.append(f"- … and {len(r.contaminated) - 50} more")
    else:
        lines.append("Not decontaminated: no `--benchmark` folder was given.")
    if r.format != "atif":
        lines += ["", "## Row fields", "", ROW_FIELDS_TEXT]
    return "\n".join(lines) + "\n"
