"""Rollout throughput (issue 14): our terminus-2 agent against Harbor's own `terminus-2` on the
same tasks, both playing the same scripted model over HTTP, at the same concurrency.

Tasks: n (default 10) made by the offline synthesizer along fixed two-step paths (as
bench/verify_throughput.py makes them), k (default 2) rollouts each. The model on both sides
is one in-process replay server (workbench.llm.replay_server.ReplayServer, started here on the
host) playing the scripted Terminus-2 oracle (pipeline/agents/terminus2/scripted.py: looks
around, types the task's solve.sh one step per turn, marks the task complete and confirms;
a test double, not an LLM). Both sides run with no response cache.

- ours: `pipeline.trials.trial.run_trial` called directly (not through the rollout batch, so
  no workspace, DuckDB rows or rollout folders are written) with `make_agent("terminus-2")`
  over the real `openai` client: a fresh container of the task image, the agent on our tmux
  Terminal, the sealed test phase and the verifier, the container removed; c threads. The task
  images are built once before timing (a batch builds a task's image once for its k rollouts;
  verified tasks already have one).
- Harbor: one `harbor run -c JOB.json -y` job (Harbor 0.26 in .harbor-venv, environment as
  pipeline/export/harbor_runner.py sets it: DOCKER_BUILDKIT=0, LITELLM_LOCAL_MODEL_COST_MAP,
  HARBOR_TELEMETRY=0) with agent `terminus-2`, model `openai/scripted-terminus` whose
  `api_base` is the replay server, `n_attempts` = k, `n_concurrent_trials` = c. Each task.toml
  names the image built for ours as `[environment] docker_image` (Harbor's option for a prebuilt
  image), so Harbor's trials start from the same prebuilt images as ours and build nothing inside
  the timed wall; its figure includes its CLI start-up (~5 s).

Offline: Harbor's tmux session installs what it misses before the agent starts. Our base image
has tmux; the one thing it lacks is asciinema (Harbor would try `apt-get install asciinema`,
then pip, each bounded at 120 s, with no network). We pass `record_terminal_session=False`
(a documented Terminus-2 option): Harbor then installs nothing and still logs the pane through
`tmux pipe-pane`; it does not write an asciinema cast, while ours does (recording.cast) — so
this favours Harbor slightly. Nothing else is changed on either side.

Durations: Harbor's terminus-2 sends keys without blocking and then sleeps the duration the
model asked for in full; our Terminal returns as soon as the shell's prompt is back. With the
scripted model's own durations (15 s per step) Harbor would sleep ~30 s per rollout that ours
does not. So the headline comparison (`--durations held`, the default) rewrites each command of
the replies the same way for both sides: it asks min(its duration, --hold = 2 s) (0.1 s for the
first look, 2 s per solution step) and runs in a subshell beside `sleep` of that duration
(`(sleep 2 & <the step's lines>; wait)`), so the shell is busy at least as long as asked: Harbor
sleeps the duration, ours waits for a prompt that does not come sooner — both wait alike. The
figures are then harness, containers, tests and the commands' own time. `--durations asked`
keeps the script's durations to show what returning at the prompt is worth (RESULT says
durations=asked). A step that outlasts its held 2 s (a slow step on a loaded machine) is read
unfinished on both sides; ours then runs the two completion turns so fast that the tests can
start before the step is done (a failed rollout, counted in ours_passed), where Harbor's slower
turns give it time: the scripted model asked too little, and only the quicker harness shows it.

Figures: seconds per rollout each side (wall-clock over n·k at concurrency c), the speedup;
our harness overhead per turn = sum of AgentResult.overhead_s (agent wall time less model time
less the waits the model asked for, as the terminal measured them) over the sum of turns, also
split into the terminal's open/close and the per-turn rest; our rollouts/min at concurrency
1, 2, 4; Harbor's mean phase times from its trial result.json files. The comparison (ours then
Harbor at concurrency c) runs `--runs` times (default 3); seconds per rollout, the speedup and
Harbor's phases are the median over the runs (each run is printed), never the best one.

    .venv/bin/python bench/rollout_throughput.py [--n 10] [-k 2] [-c 4] [--scaling 1,2,4]
                                                 [--durations zero|asked] [--runs 3] [--quick] [--keep DIR]

Last line: ``RESULT speedup_vs_harbor=… overhead_ms_per_turn=… rollouts_per_min_c4=…
ours_s_per_rollout=… harbor_s_per_rollout=… …``
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline.export.harbor_runner import ensure_harbor, harbor_bin, harbor_env  # noqa: E402
from rollout_harbor_side import HarborRun, harbor_dataset, run_harbor  # noqa: E402
from verify_throughput import synthesized_bundles  # noqa: E402  (the same 10 tasks that bench uses)
from workbench.sandbox.bundle import TaskBundle  # noqa: E402

DURATIONS = ("held", "asked")
HOLD_S = 2.0                  # the longest duration a command asks in the "held" comparison


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------- the scripted model
def held_keystrokes(keys: str, seconds: float) -> str:
    """The same command lines, run in a subshell beside `sleep seconds`: the shell is busy for
    max(the commands' own time, seconds), so a terminal that returns at the prompt waits the
    asked time as one that sleeps it does. (A subshell: no job-control lines in the pane.)"""
    lines = [line for line in keys.split("\n") if line.strip()]
    return f"(sleep {seconds:g} & " + "; ".join(lines) + "; wait)\n"


def model_rules(bundles: list[tuple[str, TaskBundle]], durations: str, hold_s: float = HOLD_S):
    """The scripted oracle's rules. durations 'held': every command asks min(its duration,
    hold_s) and keeps the shell busy at least that long (held_keystrokes); 'asked': as scripted."""
    from pipeline.agents.terminus2.scripted import scripted_terminus_rules, solutions_by_instruction
    from workbench.llm.replay_server import Rule
    rules = scripted_terminus_rules(solutions_by_instruction([b for _, b in bundles]), "oracle")
    if durations == "asked":
        return rules

    def held(rule):
        def reply(body):
            out = rule.reply(body)
            if isinstance(out, dict):
                cmds = []
                for c in out.get("commands") or []:
                    d = min(float(c["duration"]), hold_s)
                    cmds.append({"keystrokes": held_keystrokes(c["keystrokes"], d), "duration": d})
                out = {**out, "commands": cmds}
            return out
        return Rule(match=rule.match, reply=reply)
    return [held(r) for r in rules]


# ---------------------------------------------------------------- ours
@dataclass
class OurRollout:
    task: str
    passed: bool
    failure: str | None
    wall_s: float
    agent_s: float
    llm_s: float
    waited_s: float
    overhead_s: float
    turns: int
    terminal: dict
    timings: dict


def our_caller(base_url: str, concurrency: int):
    from pipeline.agents.terminus2.scripted import REPLAY_MODEL
    from workbench.llm.caller import LLMCaller
    from workbench.llm.client import LLMClient
    from workbench.llm.settings import LLMSettings
    settings = LLMSettings(base_url=base_url, model=REPLAY_MODEL, api_key="replay",
                           concurrency=max(8, concurrency), timeout_s=60)
    return LLMCaller(LLMClient(settings, batch_id=f"bench-{uuid.uuid4().hex[:6]}"))


def run_ours(engine, bundles, images: dict[str, str], k: int, concurrency: int, caller) -> tuple[float, list[OurRollout]]:
    from pipeline.agents.factory import make_agent
    from pipeline.agents.terminus2.scripted import REPLAY_MODEL
    from pipeline.trials.trial import run_trial
    from workbench.sandbox.task_toml import parse as parse_task_toml

    def one(item: tuple[str, TaskBundle, int]) -> OurRollout:
        slug, bundle, sample = item
        cfg = parse_task_toml(bundle.text("task.toml"))
        agent = make_agent("terminus-2", caller=caller, model=REPLAY_MODEL)
        t0 = time.monotonic()
        trial = run_trial(engine, images[slug], bundle, cfg, agent, trial_id=f"bench-{slug}-{sample}-{uuid.uuid4().hex[:6]}",
                          task_id=slug, seed=sample, run_id="bench-rollout-throughput")
        wall = time.monotonic() - t0
        a = trial.agent
        if trial.failure_class is not None:
            log(f"  ours: {slug}#{sample} failed: {trial.failure_class} {a.error or ''} {trial.problem or ''}"[:300])
        return OurRollout(slug, trial.failure_class is None, trial.failure_class, wall, a.agent_s, a.llm_s,
                          float(a.details.get("waited_s", 0.0)), a.overhead_s, a.turns,
                          dict(a.details.get("terminal") or {}), dict(trial.timings))

    items = [(slug, b, s) for s in range(k) for slug, b in bundles]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        out = list(pool.map(one, items))
    return time.monotonic() - t0, out


def overhead_figures(rollouts: list[OurRollout]) -> dict[str, float]:
    """Harness overhead per turn, and where it goes (terminal open/close vs the turns)."""
    turns = sum(r.turns for r in rollouts) or 1
    over = sum(r.overhead_s for r in rollouts)
    term_calls = sum(r.terminal.get("calls", 0) for r in rollouts)
    execs = sum(r.terminal.get("execs", 0) for r in rollouts)
    term_over = sum(max(0.0, r.terminal.get("exec_s", 0.0) - r.terminal.get("waited_s", 0.0)) for r in rollouts)
    return {"overhead_ms_per_turn": 1000 * over / turns,
            "terminal_overhead_ms_per_turn": 1000 * term_over / turns,
            "python_ms_per_turn": 1000 * (over - term_over) / turns,
            "execs_per_rollout": execs / len(rollouts), "calls_per_turn": term_calls / turns,
            "turns_per_rollout": turns / len(rollouts),
            "agent_s": statistics.mean(r.agent_s for r in rollouts),
            "llm_s": statistics.mean(r.llm_s for r in rollouts),
            "waited_s": statistics.mean(r.waited_s for r in rollouts),
            "env_s": statistics.mean(r.timings.get("env_s", 0.0) for r in rollouts),
            "verifier_s": statistics.mean(r.timings.get("verifier_s", 0.0) for r in rollouts),
            "trial_s": statistics.mean(r.wall_s for r in rollouts)}


def bare_exec_ms(engine, tries: int = 7) -> float:
    """Median `docker exec true` through Box.run in a base-image container: the floor any
    exec-based terminal pays per round trip on this machine right now (context for ours)."""
    from workbench.sandbox.base_image import base_image_name
    from workbench.sandbox.engine import Limits
    times = []
    with engine.container(base_image_name(), Limits()) as box:
        for _ in range(tries):
            t0 = time.monotonic()
            box.run(["true"], 30)
            times.append(time.monotonic() - t0)
    return 1000 * statistics.median(times)


def median_harbor(runs: list[HarborRun]) -> HarborRun:
    """Harbor's figures as the median over the runs: wall time, each phase, turns."""
    keys = sorted({key for r in runs for key in r.phases})
    return HarborRun(statistics.median(r.wall_s for r in runs), [x for r in runs for x in r.rewards],
                     [e for r in runs for e in r.errors],
                     {key: statistics.median(r.phases[key] for r in runs if key in r.phases) for key in keys},
                     statistics.median(r.turns for r in runs))


def rate_figures(rates: dict[int, float], skip: int) -> dict[str, float]:
    """rollouts/min per concurrency level (but `skip`, already given) and the top/bottom ratio."""
    out = {f"rollouts_per_min_c{level}": round(r, 1) for level, r in sorted(rates.items()) if level != skip}
    if len(rates) > 1:
        lo, hi = min(rates), max(rates)
        out[f"scaling_c{hi}_vs_c{lo}"] = round(rates[hi] / rates[lo], 2)
    return out


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10, help="number of tasks (default 10)")
    ap.add_argument("-k", type=int, default=2, help="rollouts per task (default 2)")
    ap.add_argument("--concurrency", "-c", type=int, default=4, help="concurrency of the comparison (default 4)")
    ap.add_argument("--scaling", default="1,2,4", help="our concurrency levels for rollouts/min (default 1,2,4)")
    ap.add_argument("--durations", choices=DURATIONS, default="held",
                    help="held (default): each command asks min(its duration, --hold) and keeps the shell busy "
                         "that long, so both sides wait alike; asked: the script's own (0.1 s, 15 s per step)")
    ap.add_argument("--hold", type=float, default=HOLD_S, help=f"the held durations' cap (default {HOLD_S:g} s)")
    ap.add_argument("--runs", type=int, default=3, help="runs of the comparison; the median is reported (default 3)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 tasks, k 1, concurrency 2, one run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep the dataset and Harbor's job folders here")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.k, args.concurrency, args.scaling, args.runs = 2, 1, 2, "2", 1
    if args.runs < 1:
        raise SystemExit(f"--runs: at least 1, got {args.runs}")
    levels = sorted({int(x) for x in args.scaling.split(",") if x.strip()} | {args.concurrency})

    ensure_harbor()
    import docker

    from workbench.llm.replay_server import ReplayServer, Script
    from workbench.sandbox.base_image import bootstrap
    from workbench.sandbox.engine import Engine
    from workbench.sandbox.task_toml import parse as parse_task_toml
    bootstrap(docker.from_env(), log=log)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rollout-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, object] = {}
    try:
        log(f"synthesizing {args.n} tasks offline")
        bundles = synthesized_bundles(args.n, args.seed)
        n, k, c = len(bundles), args.k, args.concurrency
        engine = Engine()
        images: dict[str, str] = {}
        for slug, bundle in bundles:          # untimed: a batch builds each task's image once
            for _ in range(3):                # another process pruning layers mid-build fails it: again
                built = engine.build(bundle.under("environment"), bundle.environment_hash(),
                                     parse_task_toml(bundle.text("task.toml")).build_timeout_sec)
                if built.ok:
                    break
            if not built.ok:
                raise SystemExit(f"building {slug}'s image failed: {built.reason}")
            images[slug] = built.image
        dataset = harbor_dataset(bundles, work / "dataset", images)   # Harbor starts from the same images
        log(f"{n} tasks x {k} rollouts in {dataset}; concurrency {c}; durations {args.durations}; "
            f"load {os.getloadavg()[0]:.1f}")

        with ReplayServer(Script(rules=model_rules(bundles, args.durations, args.hold))) as server:
            caller = our_caller(server.base_url, max(levels))
            try:
                # Warm-ups (untimed): imports, the Docker connection, the client; Harbor's CLI page cache.
                run_ours(engine, bundles[:1], images, 1, 1, caller)
                subprocess.run([str(harbor_bin()), "--version"], capture_output=True, env=harbor_env(), timeout=120)

                exec_ms = bare_exec_ms(engine)
                m = n * k
                ours, ours_walls, harbor_runs = [], [], []
                for run in range(1, args.runs + 1):
                    wall, rollouts = run_ours(engine, bundles, images, k, c, caller)
                    ours_walls.append(wall)
                    ours += rollouts
                    log(f"run {run} ours   c={c}: {wall:.1f} s, {wall / m:.2f} s/rollout, "
                        f"{sum(r.passed for r in rollouts)}/{m} passed")
                    h = run_harbor(dataset, k, c, work / "jobs", server.base_url)
                    harbor_runs.append(h)
                    log(f"run {run} harbor c={c}: {h.wall_s:.1f} s, {h.wall_s / m:.2f} s/rollout, "
                        f"{sum(1 for r in h.rewards if r == 1.0)}/{len(h.rewards)} reward 1.0; phases "
                        + ", ".join(f"{p} {s:.2f} s" for p, s in h.phases.items()) + f"; {h.turns:.1f} turns")
                    for e in h.errors[:5]:
                        log(f"  harbor: {e.splitlines()[0][:300]}")
                exec_ms = (exec_ms + bare_exec_ms(engine)) / 2       # before and after, as the load drifts
                ours_wall = statistics.median(ours_walls)
                h = median_harbor(harbor_runs)
                h_ok = sum(1 for run in harbor_runs for r in run.rewards if r == 1.0)

                rates = {c: m / ours_wall * 60}
                for level in levels:
                    if level != c:
                        wall, _ = run_ours(engine, bundles, images, k, level, caller)
                        rates[level] = m / wall * 60
                        log(f"ours   c={level}: {wall:.1f} s, {rates[level]:.1f} rollouts/min")
            finally:
                caller.close()

        o = overhead_figures(ours)
        log("ours per rollout (c={}): trial {trial_s:.2f} s = env {env_s:.2f} + agent {agent_s:.2f} "
            "(llm {llm_s:.2f}, asked waits {waited_s:.2f}) + tests {verifier_s:.2f}; {turns_per_rollout:.1f} turns, "
            "{execs_per_rollout:.1f} docker execs, {calls_per_turn:.2f} terminal round trips/turn; overhead "
            "{overhead_ms_per_turn:.1f} ms/turn (terminal {terminal_overhead_ms_per_turn:.1f}, "
            "python {python_ms_per_turn:.1f})".format(c, **o))
        figures["speedup_vs_harbor"] = round(h.wall_s / ours_wall, 2)
        figures["overhead_ms_per_turn"] = round(o["overhead_ms_per_turn"], 1)
        figures[f"rollouts_per_min_c{c}"] = round(rates[c], 1)
        figures["ours_s_per_rollout"] = round(ours_wall / m, 2)
        figures["harbor_s_per_rollout"] = round(h.wall_s / m, 2)
        figures["ours_trial_s"] = round(o["trial_s"], 2)
        figures["harbor_trial_s"] = round(h.phases.get("trial", float("nan")), 2)
        figures["ours_agent_s"] = round(o["agent_s"], 2)
        figures["harbor_agent_s"] = round(h.phases.get("agent_execution", float("nan")), 2)
        figures["ours_env_s"] = round(o["env_s"], 2)
        figures["harbor_env_s"] = round(h.phases.get("environment_setup", 0.0) + h.phases.get("agent_setup", 0.0), 2)
        figures["ours_tests_s"] = round(o["verifier_s"], 2)
        figures["harbor_tests_s"] = round(h.phases.get("verifier", float("nan")), 2)
        figures["terminal_ms_per_turn"] = round(o["terminal_overhead_ms_per_turn"], 1)
        figures["python_ms_per_turn"] = round(o["python_ms_per_turn"], 1)
        figures["terminal_calls_per_turn"] = round(o["calls_per_turn"], 2)
        figures["bare_exec_ms"] = round(exec_ms, 1)
        figures["turns_per_rollout"] = round(o["turns_per_rollout"], 1)
        figures["harbor_turns_per_rollout"] = round(h.turns, 1)
        figures.update(rate_figures(rates, skip=c))
        figures["ours_passed"] = sum(r.passed for r in ours)
        figures["harbor_passed"] = h_ok
        figures["n_rollouts"] = m * args.runs          # over all runs, as the passed counts
        figures["concurrency"] = c
        figures["durations"] = args.durations
        figures["runs"] = args.runs
        figures["figures"] = "median" if args.runs > 1 else "one-run"
        figures["harbor_image"] = "prebuilt"
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    log("RESULT " + " ".join(f"{key}={v}" for key, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
