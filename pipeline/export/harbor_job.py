"""Read a Harbor job folder into typed trials, trusting nothing in it.

Layout (harbor 0.26, checked on real `harbor run` jobs):

    <job>/result.json                  job stats (id, n_total_trials, stats.evals …)
    <job>/<trial>/result.json          harbor.models.trial.result.TrialResult: trial_name, task_name
                                       (task.toml's name), task_id.path (the task folder run),
                                       agent_info {name, model_info}, verifier_result.rewards,
                                       exception_info, started_at/finished_at, agent_execution …
    <job>/<trial>/lock.json            task.digest: "sha256:<Harbor's content hash of the task folder>"
    <job>/<trial>/agent/trajectory.json  ATIF (LLM agents; Harbor's oracle and nop write none)
    <job>/<trial>/agent/*.txt          e.g. oracle.txt, the solution's output
    <job>/<trial>/verifier/            reward.txt | reward.json, ctrf.json, junit.xml, test-stdout.txt
    <job>/<trial>/trial.log

The folder may be a job or a folder of jobs (`jobs/`). Agents write agent/ from inside their
container (it is mounted there), so links are refused, sizes capped and every problem becomes
a JobProblem naming the trial and what was wrong; nothing here raises for a bad trial.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.export.harbor_runner import timing_seconds
from workbench.json_object import JSONObjectError, parse_json_object
from workbench.sandbox.bundle import BundleError, check_relpath

MAX_JSON_BYTES = 4 * 1024 * 1024            # result.json, lock.json
MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024
MAX_FILE_BYTES = 2 * 1024 * 1024            # each verifier file and agent log (cut beyond, with a note)
MAX_VERIFIER_FILES = 64
MAX_LOG_FILES = 16                          # of agent/*.txt|*.log
MAX_LOG_CHARS = 200_000                     # the joined agent.log keeps its head and tail
LOG_SUFFIXES = (".txt", ".log")


class UnsafeFile(ValueError):
    """A path in the job folder that is a link, not a regular file, or too big."""


@dataclass(frozen=True)
class JobProblem:
    trial: str          # the trial folder relative to the folder imported ("" for the folder itself)
    what: str


@dataclass
class HarborTrial:
    job: str                         # the job folder's name
    job_id: str | None
    trial_name: str
    trial_id: str                    # Harbor's id of the trial (its uuid), else job + trial name
    where: str                       # the trial folder relative to the folder imported
    agent: str
    model: str | None
    model_provider: str | None
    task_name: str | None            # task.toml's name
    task_folder: str | None          # the task folder's own name (our export's slug)
    task_digest: str | None          # lock.json's sha256 of the task folder
    rewards: dict[str, float]
    reward: float | None
    exception_type: str | None = None
    exception_message: str | None = None
    started_at: str | None = None
    agent_s: float = 0.0
    verifier_s: float = 0.0
    total_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    trajectory: bytes | None = None
    verifier_files: dict[str, bytes] = field(default_factory=dict)
    agent_log: str = ""
    notes: list[str] = field(default_factory=list)    # what was wrong but did not stop the import


@dataclass
class HarborJobRead:
    root: Path
    trials: list[HarborTrial] = field(default_factory=list)
    problems: list[JobProblem] = field(default_factory=list)


def read_capped(path: Path, cap: int) -> tuple[bytes, bool]:
    """A regular file's bytes (at most `cap`; True when cut), never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if Path(path).is_symlink():
            raise UnsafeFile(f"{path.name} is a link (to {os.readlink(path)!r}); links are not followed") from None
        raise UnsafeFile(f"{path.name}: cannot read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(f"{path.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(cap + 1)
    finally:
        os.close(fd)
    return data[:cap], len(data) > cap


def _json_object(path: Path, what: str) -> dict:
    data, cut = read_capped(path, MAX_JSON_BYTES)
    if cut:
        raise UnsafeFile(f"{what} is over {MAX_JSON_BYTES} bytes")
    try:
        return parse_json_object(data, what, kind="a Harbor job file")
    except JSONObjectError as exc:
        raise UnsafeFile(str(exc)) from None


def _is_dir(p: Path) -> bool:
    return p.is_dir() and not p.is_symlink()


def _is_trial(p: Path) -> bool:
    """A trial folder: its result.json or config.json names a trial (a job's name a job), or,
    when neither can be read, it has a trial.log."""
    if not _is_dir(p):
        return False
    for name in ("result.json", "config.json"):
        try:
            doc = _json_object(p / name, name) if (p / name).exists() else {}
        except UnsafeFile:
            continue
        if "trial_name" in doc:
            return True
        if {"n_total_trials", "stats", "job_name"} & set(doc):
            return False
    return (p / "trial.log").exists()


def job_folders(root: Path) -> list[Path]:
    """The job folders under `root`: root itself when its sub-folders are trials, else its
    sub-folders that hold trials (a `jobs/` folder)."""
    subs = sorted(p for p in root.iterdir() if _is_dir(p))
    if any(_is_trial(p) for p in subs) or (root / "result.json").exists():
        return [root]
    return [p for p in subs if any(_is_trial(q) for q in p.iterdir() if _is_dir(q))]


def read_job(root: Path) -> HarborJobRead:
    """Every trial of the job (or jobs) under `root`; problems for what could not be read."""
    root = Path(root)
    out = HarborJobRead(root)
    if not _is_dir(root):
        out.problems.append(JobProblem("", f"{root} is not a folder"))
        return out
    if _is_trial(root):        # one trial folder given on its own
        try:
            out.trials.append(read_trial(root, job=root.parent.name, job_id=None, where=root.name))
        except UnsafeFile as exc:
            out.problems.append(JobProblem(root.name, str(exc)))
        return out
    jobs = job_folders(root)
    if not jobs:
        out.problems.append(JobProblem("", f"no Harbor trial folders under {root} (a trial folder's "
                                           "result.json or config.json names its trial_name)"))
    for job in jobs:
        job_id = None
        if (job / "result.json").exists():
            try:
                job_id = str(_json_object(job / "result.json", "the job's result.json").get("id") or "") or None
            except UnsafeFile:
                pass   # the trials' config.job_id says it too
        for trial_dir in sorted(p for p in job.iterdir() if _is_trial(p)):
            where = trial_dir.relative_to(root).as_posix() if trial_dir != root else trial_dir.name
            try:
                out.trials.append(read_trial(trial_dir, job=job.name, job_id=job_id, where=where))
            except UnsafeFile as exc:
                out.problems.append(JobProblem(where, str(exc)))
    return out


def _get(doc: Any, *keys: str) -> Any:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    return doc


def _seconds(timing: Any) -> float:
    return max(0.0, timing_seconds(timing) or 0.0)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        return None
    return float(v)


def read_trial(trial_dir: Path, *, job: str, job_id: str | None, where: str) -> HarborTrial:
    """One trial folder; raises UnsafeFile when its result.json cannot be believed at all."""
    if not (trial_dir / "result.json").exists() and not (trial_dir / "result.json").is_symlink():
        raise UnsafeFile("no result.json: the trial did not finish (or was cancelled before Harbor wrote it)")
    doc = _json_object(trial_dir / "result.json", "result.json")
    trial_name = doc.get("trial_name")
    if not isinstance(trial_name, str) or not trial_name:
        raise UnsafeFile("result.json has no trial_name")
    agent = _get(doc, "agent_info", "name") or _get(doc, "config", "agent", "name")
    if not isinstance(agent, str) or not agent:
        raise UnsafeFile("result.json names no agent (agent_info.name or config.agent.name)")
    notes: list[str] = []
    model = _get(doc, "config", "agent", "model_name") or _get(doc, "agent_info", "model_info", "name")
    task_path = _get(doc, "task_id", "path") or _get(doc, "config", "task", "path")
    task_folder = PurePosixPath(str(task_path)).name if task_path else trial_name.split("__")[0]
    raw_rewards = _get(doc, "verifier_result", "rewards") or {}
    rewards: dict[str, float] = {}
    if isinstance(raw_rewards, dict):
        for k, v in raw_rewards.items():
            if (n := _number(v)) is None:
                notes.append(f"verifier_result.rewards[{str(k)[:40]!r}] is not a number: {str(v)[:40]!r}")
            else:
                rewards[str(k)] = n
    else:
        notes.append("verifier_result.rewards is not an object")
    # As our own verifier reads reward.json: the `reward` key, else the lowest value.
    reward = rewards.get("reward", min(rewards.values()) if rewards else None)
    exc = doc.get("exception_info") if isinstance(doc.get("exception_info"), dict) else None
    digest = None
    if (trial_dir / "lock.json").exists():
        try:
            d = _get(_json_object(trial_dir / "lock.json", "lock.json"), "task", "digest")
            digest = d.removeprefix("sha256:") if isinstance(d, str) else None
        except UnsafeFile as e:
            notes.append(str(e))
    ctx = doc.get("agent_result") if isinstance(doc.get("agent_result"), dict) else {}
    trial = HarborTrial(
        job=job, job_id=job_id or _get(doc, "config", "job_id"), trial_name=trial_name,
        trial_id=str(doc.get("id") or f"{job_id or job}/{trial_name}"), where=where, agent=agent,
        model=str(model) if model else None,
        model_provider=str(_get(doc, "agent_info", "model_info", "provider") or "") or None, task_name=doc.get("task_name") if isinstance(doc.get("task_name"), str) else None,
        task_folder=task_folder, task_digest=digest, rewards=rewards, reward=reward,
        exception_type=str(exc.get("exception_type") or "Exception") if exc else None,
        exception_message=str(exc.get("exception_message") or "")[:2000] if exc else None,
        started_at=str(doc["started_at"]) if doc.get("started_at") else None,
        agent_s=_seconds(doc.get("agent_execution")), verifier_s=_seconds(doc.get("verifier")),
        total_s=_seconds(doc), prompt_tokens=int(_number(ctx.get("n_input_tokens")) or 0),
        completion_tokens=int(_number(ctx.get("n_output_tokens")) or 0),
        cost_usd=float(_number(ctx.get("cost_usd")) or 0.0), notes=notes)
    _read_outputs(trial_dir, trial)
    return trial


def _read_outputs(trial_dir: Path, trial: HarborTrial) -> None:
    """agent/trajectory.json, the agent's logs and the verifier's files, each one safely."""
    agent_dir, verifier_dir = trial_dir / "agent", trial_dir / "verifier"
    for d in (agent_dir, verifier_dir):
        if d.is_symlink():
            trial.notes.append(f"{d.name}/ is a link; not followed")
    if _is_dir(agent_dir) and ((agent_dir / "trajectory.json").exists() or (agent_dir / "trajectory.json").is_symlink()):
        try:
            data, cut = read_capped(agent_dir / "trajectory.json", MAX_TRAJECTORY_BYTES)
            if cut:
                trial.notes.append(f"agent/trajectory.json is over {MAX_TRAJECTORY_BYTES} bytes; left out")
            else:
                trial.trajectory = data
        except UnsafeFile as exc:
            trial.notes.append(f"agent/{exc}")
    logs = []
    sources = ([p for p in sorted(agent_dir.iterdir()) if p.suffix in LOG_SUFFIXES] if _is_dir(agent_dir) else [])
    if len(sources) > MAX_LOG_FILES:
        trial.notes.append(f"agent/ holds {len(sources)} log files; the first {MAX_LOG_FILES} kept")
        sources = sources[:MAX_LOG_FILES]
    sources += [trial_dir / "trial.log"] if (trial_dir / "trial.log").exists() else []
    for p in sources:
        try:
            data, cut = read_capped(p, MAX_FILE_BYTES)
        except UnsafeFile as exc:
            trial.notes.append(str(exc))
            continue
        rel = p.relative_to(trial_dir).as_posix()
        logs.append(f"--- {rel}{' (cut)' if cut else ''}\n{data.decode('utf-8', 'replace')}")
    text = "\n".join(logs)
    half = MAX_LOG_CHARS // 2
    trial.agent_log = text if len(text) <= MAX_LOG_CHARS else \
        f"{text[:half]}\n… [{len(text) - MAX_LOG_CHARS} characters left out] …\n{text[-half:]}"
    if not _is_dir(verifier_dir):
        return
    for dirpath, dirnames, names in os.walk(verifier_dir, followlinks=False):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        for name in sorted(names):
            p = Path(dirpath) / name
            rel = p.relative_to(verifier_dir).as_posix()
            try:
                check_relpath(rel)            # it becomes a path of the rollout's folder
            except BundleError as exc:
                trial.notes.append(f"verifier/{rel[:80]!r} left out: {exc}")
                continue
            if len(trial.verifier_files) >= MAX_VERIFIER_FILES:
                trial.notes.append(f"verifier/ holds more than {MAX_VERIFIER_FILES} files; the rest left out")
                return
            try:
                data, cut = read_capped(p, MAX_FILE_BYTES)
            except UnsafeFile as exc:
                trial.notes.append(f"verifier/{rel}: {exc}")
                continue
            if cut:
                trial.notes.append(f"verifier/{rel} cut to {MAX_FILE_BYTES} bytes")
            trial.verifier_files[rel] = data
