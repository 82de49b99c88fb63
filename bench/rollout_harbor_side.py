"""Harbor's side of bench/rollout_throughput.py: its own `terminus-2` agent over the same tasks, one
`harbor run` job against the bench's replay server, and the figures read back from the job's
trials (wall time, rewards, errors, mean seconds per phase, agent turns)."""
from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pipeline.export.harbor_runner import (
    _image_ids,
    _remove_job_containers,
    _stop,
    harbor_bin,
    harbor_env,
    read_trials,
    remove_new_dangling_images,
    timing_seconds,
)
from workbench.sandbox.bundle import TaskBundle, write_bundle

HARBOR_AGENT = "terminus-2"


@dataclass
class HarborRun:
    wall_s: float
    rewards: list[float | None]
    errors: list[str]
    phases: dict[str, float]        # mean seconds per phase of a trial
    turns: float


def harbor_dataset(bundles: list[tuple[str, TaskBundle]], folder: Path,
                   images: dict[str, str] | None = None) -> Path:
    """The same tasks as Harbor task folders (`harbor run -p` reads a folder of them). With
    `images` (slug -> a tag already on the engine), each task.toml names its image as
    `[environment] docker_image`: Harbor then starts the trial from that prebuilt image (its
    compose file for prebuilt images; no `compose build` in the timed trial, and `down --rmi
    local` leaves a tagged image alone), as ours start from the images built before timing."""
    shutil.rmtree(folder, ignore_errors=True)
    for slug, bundle in bundles:
        write_bundle(bundle, folder / slug)
        if images is not None:
            _name_prebuilt_image(folder / slug / "task.toml", images[slug])
    return folder


def _name_prebuilt_image(task_toml: Path, image: str) -> None:
    text = task_toml.read_text()
    line = f"docker_image = {json.dumps(image)}"
    if re.search(r"^\[environment\]\s*$", text, flags=re.M):
        text = re.sub(r"^\[environment\]\s*$", lambda m: f"[environment]\n{line}", text, count=1, flags=re.M)
    else:
        text = text.rstrip("\n") + f"\n\n[environment]\n{line}\n"
    task_toml.write_text(text)


def run_harbor(dataset: Path, k: int, concurrency: int, jobs_dir: Path, base_url: str,
               timeout_s: float = 1800) -> HarborRun:
    from pipeline.agents.terminus2.scripted import REPLAY_MODEL
    jobs_dir.mkdir(parents=True, exist_ok=True)
    name = f"bench-t2-{uuid.uuid4().hex[:8]}"
    config = {"job_name": name, "jobs_dir": str(jobs_dir), "n_concurrent_trials": concurrency, "n_attempts": k,
              "quiet": True, "datasets": [{"path": str(dataset)}],
              "environment": {"type": "docker", "delete": True},
              "agents": [{"name": HARBOR_AGENT, "model_name": f"openai/{REPLAY_MODEL}",
                          "kwargs": {"api_base": base_url, "temperature": 0.0,
                                     "record_terminal_session": False}}]}
    cfg_path = jobs_dir / f".{name}.json"
    cfg_path.write_text(json.dumps(config, indent=1))
    env = harbor_env()
    env["OPENAI_API_KEY"] = "replay"          # LiteLLM wants a key; the replay server ignores it
    before = _image_ids()
    t0 = time.monotonic()
    proc = subprocess.Popen([str(harbor_bin()), "run", "-c", str(cfg_path), "-y"], cwd=jobs_dir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, text=True)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        output = _stop(proc)
        _remove_job_containers(jobs_dir / name)
    wall = time.monotonic() - t0
    remove_new_dangling_images(before)
    trials = read_trials(jobs_dir / name)
    if not trials:
        raise SystemExit(f"harbor run wrote no trials (exit {proc.returncode}):\n{(output or '')[-3000:]}")
    phases: dict[str, list[float]] = {}
    turns: list[int] = []
    for t in trials:
        d = json.loads((t.trial_dir / "result.json").read_text())
        for key in ("environment_setup", "agent_setup", "agent_execution", "verifier"):
            s = timing_seconds(d.get(key))
            if s is not None:
                phases.setdefault(key, []).append(s)
        if t.seconds is not None:
            phases.setdefault("trial", []).append(t.seconds)
        traj = t.trial_dir / "agent" / "trajectory.json"
        if traj.exists():
            steps = json.loads(traj.read_text()).get("steps") or []
            turns.append(sum(1 for s in steps if s.get("source") == "agent"))
    errors = [f"{t.task}: {t.error}" for t in trials if t.error]
    return HarborRun(wall, [t.reward for t in trials], errors,
                     {k2: statistics.mean(v) for k2, v in phases.items()},
                     statistics.mean(turns) if turns else float("nan"))


