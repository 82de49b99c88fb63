"""`workbench import harbor-job DIR`: a Harbor job's trials as rollouts of the matching tasks.

So any agent Harbor runs on exported tasks (pipeline/export/harbor.py) can be analysed here:
each trial becomes a rollout with source "harbor", agent "harbor:<agent>", the model Harbor
recorded, the reward, per-test outcomes (ctrf.json, which our exported test.sh writes, else
junit.xml), tokens, cost and timings, in a run per job, agent and model (`harbor-<job id>-<agent>[-<model>]`).

A trial is matched to a task by content first: lock.json's digest is Harbor's hash of the task
folder it ran (sha256 over "<path>\\0<sha256 of file>\\n", files sorted), which the export
writes byte for byte from the stored bundle, so it is worked out here from each stored
bundle (`harbor_digest`). Jobs without a lock (older Harbor) match by task.toml's name when one
task has it, else by the export's folder name (`<slug>-<task id[:8]>` when two tasks share a
name). A digest that no stored task has is a task changed since the export: not matched.

Unmatched trials and malformed files are reported with the trial and what was wrong, never
raised. A trial's rollout id comes from Harbor's trial id, so importing a job twice replaces
its rollouts instead of adding them again.
"""
from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.export.harbor import slug_of
from pipeline.export.harbor_job import HarborTrial, JobProblem, read_job
from pipeline.rollouts.commit import commit_outcome
from pipeline.rollouts.models import RolloutOutcome, RolloutRecord, rollout_key
from pipeline.rollouts.worker import folder_of, result_json
from pipeline.trajectories.atif import TrajectoryError, read_trajectory
from pipeline.verify.junit import parse_ctrf, parse_junit
from pipeline.verify.reward import FAILING, contradiction
from workbench.sandbox.bundle import BundleError, TaskBundle, read_bundle
from workbench.store import rollouts as store
from workbench.store.tasks import tasks_frame
from workbench.workspace import Workspace

SOURCE = "harbor"
# Harbor's exception types (harbor/trial/errors.py, harbor/verifier/verifier.py) by our failure class.
TIMEOUTS = ("AgentTimeoutError", "AgentSetupTimeoutError")
VERIFIER_ERRORS = ("VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
                   "VerifierOutputParseError", "AddTestsDirError", "DownloadVerifierDirError")
STOPPED = ("CancelledError", "KeyboardInterrupt")


def harbor_digest(bundle: TaskBundle) -> str:
    """Harbor's content hash of the task folder our export writes for `bundle`
    (harbor.publisher.packager.Packager.compute_content_hash; our bundles hold none of the
    files it ignores)."""
    outer = hashlib.sha256()
    for rel in sorted(bundle.files):
        outer.update(f"{rel}\0{hashlib.sha256(bundle.files[rel]).hexdigest()}\n".encode())
    return outer.hexdigest()


def agent_name(harbor_agent: str) -> str:
    return f"harbor:{harbor_agent}"


def agent_label(harbor_agent: str, model: str | None) -> str:
    """Harbor's oracle and nop are the same probes as ours, and say so."""
    base = AGENT_LABELS.get(harbor_agent, f"{harbor_agent} (agent run by Harbor)")
    return f"harbor:{base}" + (f" · {model}" if model else "")


@dataclass(frozen=True)
class ImportedTrial:
    trial: str
    rollout_id: str
    task_id: str
    agent: str
    reward: float | None
    matched_by: str          # digest | name | folder
    again: bool              # imported before: replaced, not added


@dataclass
class ImportReport:
    source: Path
    imported: list[ImportedTrial] = field(default_factory=list)
    unmatched: list[JobProblem] = field(default_factory=list)
    malformed: list[JobProblem] = field(default_factory=list)    # trials (or files) that could not be read
    notes: list[JobProblem] = field(default_factory=list)        # read, with something left out
    runs: list[str] = field(default_factory=list)

    def summary(self) -> str:
        again = sum(t.again for t in self.imported)
        text = (f"imported {len(self.imported)} trial(s) from {self.source} as rollouts"
                + (f" ({again} imported before: replaced, not added)" if again else "")
                + (f" in run(s) {', '.join(self.runs)}" if self.runs else ""))
        if self.unmatched:
            text += f"; {len(self.unmatched)} trial(s) matched no task"
        if self.malformed:
            text += f"; {len(self.malformed)} trial(s) could not be read"
        return text


class TaskMatcher:
    """The workspace's tasks, looked up by Harbor digest, task.toml name or export folder."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        frame = tasks_frame(ws.db)
        self.tasks = {r.task_id: r for r in frame.itertuples(index=False)}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for r in self.tasks.values():
            self.by_name[str(r.name)].append(r.task_id)
        self._digests: dict[str, str] | None = None

    def _digest_of(self, task_id: str) -> str | None:
        try:
            return harbor_digest(read_bundle(self.ws.root / str(self.tasks[task_id].bundle_dir)))
        except (BundleError, OSError):
            return None

    def digests(self) -> dict[str, str]:
        """digest → task id over every stored task (worked out once, on the first miss)."""
        if self._digests is None:
            self._digests = {}
            for tid in sorted(self.tasks):
                if (d := self._digest_of(tid)) is not None:
                    self._digests.setdefault(d, tid)
        return self._digests

    def match(self, t: HarborTrial) -> tuple[str | None, str]:
        """(task id, how) or (None, why not)."""
        named = self.by_name.get(t.task_name or "", [])
        if t.task_digest:
            for tid in named:                  # the usual case, without hashing every task
                if self._digest_of(tid) == t.task_digest:
                    return tid, "digest"
            if tid := self.digests().get(t.task_digest):
                return tid, "digest"
            hint = (f"; task {named[0]} has that name but other content (changed since the export?)"
                    if named else "")
            return None, f"no task here has the content Harbor ran (digest {t.task_digest[:12]}){hint}"
        if len(named) == 1:
            return named[0], "name"
        by_folder = [tid for tid in (named or self.tasks) if t.task_folder in _folder_names(self.tasks[tid], tid)]
        if len(by_folder) == 1:
            return by_folder[0], "folder"
        if named:
            return None, f"{len(named)} tasks are named {t.task_name!r} and folder {t.task_folder!r} picks none of them"
        return None, f"no task named {t.task_name!r} or exported as folder {t.task_folder!r}"


def _folder_names(row, task_id: str) -> set[str]:
    """The folders the export gives a task: its slug, or slug-<task id[:8]> when taken."""
    try:
        slug = slug_of(str(row.name))
    except BundleError:
        return set()
    return {slug, f"{slug}-{task_id[:8]}"}


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "agent"


def run_id_of(t: HarborTrial) -> str:
    """One run per job, agent and model (a job may run one agent under several models)."""
    return f"harbor-{_safe((t.job_id or t.job)[:8])}-{_safe(t.agent)}" + (f"-{_safe(t.model)}" if t.model else "")


def tests_of(t: HarborTrial) -> tuple[list[dict], str | None]:
    """Per-test outcomes from verifier/ctrf.json, else junit.xml; and which file gave them."""
    for name, parse in (("ctrf.json", parse_ctrf), ("junit.xml", parse_junit)):
        if name in t.verifier_files:
            tests = parse(t.verifier_files[name])
            if tests:
                return tests, name
            t.notes.append(f"verifier/{name} holds no readable test results")
    return [], None


def failure_of(t: HarborTrial, tests: list[dict]) -> tuple[str | None, str | None]:
    """(failure class or None when passed, the error to show)."""
    if t.exception_type:
        cls = ("timeout" if t.exception_type in TIMEOUTS else "verifier_error" if t.exception_type in VERIFIER_ERRORS
               else "stopped" if t.exception_type in STOPPED else "crashed")
        return cls, f"{t.exception_type}: {t.exception_message or ''}".strip()
    if t.reward is None:
        return "verifier_error", "Harbor recorded no reward for this trial"
    if tests and (problem := contradiction(t.reward, tests, {})):
        return "verifier_error", problem
    return (None, None) if t.reward >= 1.0 else ("test_assertion", None)


def outcome_of(t: HarborTrial, task_id: str, bundle_hash: str, sample: int, matched_by: str) -> RolloutOutcome:
    tests, tests_from = tests_of(t)
    trajectory, turns = t.trajectory, 0
    if trajectory is not None:
        try:
            turns = sum(1 for s in read_trajectory(trajectory).steps if s.source == "agent")
        except TrajectoryError as exc:
            t.notes.append(f"agent/trajectory.json left out: {str(exc).replace('<bytes>', 'trajectory.json')}")
            trajectory = None
    failure, error = failure_of(t, tests)
    run_id = run_id_of(t)
    rid = rollout_key(bundle_hash, f"harbor:{t.trial_id}", 0)
    record = RolloutRecord(
        rollout_id=rid, run_id=run_id, task_id=task_id, agent=agent_name(t.agent),
        agent_label=agent_label(t.agent, t.model), model=t.model, sample=sample, temperature=0.0, source=SOURCE,
        reward=t.reward, passed=failure is None, failure_class=failure, n_tests=len(tests),
        n_failed=sum(1 for x in tests if x["outcome"] in FAILING), turns=turns, parse_errors=0,
        prompt_tokens=t.prompt_tokens, completion_tokens=t.completion_tokens, cost_usd=t.cost_usd,
        agent_s=t.agent_s, verifier_s=t.verifier_s, total_s=t.total_s, overhead_ms_per_turn=None,
        folder=folder_of(run_id, rid), error=error,
        details={"harbor": {"job": t.job, "job_id": t.job_id, "trial_name": t.trial_name, "trial_id": t.trial_id,
                            "trial_folder": t.where, "agent": t.agent, "model_provider": t.model_provider,
                            "task_name": t.task_name,
                            "task_folder": t.task_folder, "task_digest": t.task_digest, "rewards": t.rewards,
                            "started_at": t.started_at},
                 "matched_by": matched_by, "tests_from": tests_from, "import_notes": list(t.notes)})
    files = {f"verifier/{rel}": data for rel, data in t.verifier_files.items()}
    if trajectory is not None:
        files["trajectory.json"] = trajectory
    files["agent.log"] = t.agent_log.encode()
    files["result.json"] = result_json(record)
    return RolloutOutcome(record=record, tests=tests, files=files)


def import_harbor_job(ws: Workspace, source: Path) -> ImportReport:
    """Read the job (or jobs) under `source` and store every matched trial as a rollout."""
    read = read_job(Path(source))
    report = ImportReport(source=Path(source), malformed=list(read.problems))
    matcher = TaskMatcher(ws)
    matched: list[tuple[HarborTrial, str, str]] = []
    for t in read.trials:
        tid, how = matcher.match(t)
        if tid is None:
            report.unmatched.append(JobProblem(t.where, f"agent {t.agent}, task {t.task_name!r}: {how}"))
        else:
            matched.append((t, tid, how))
    # sample = the trial's place among the job's trials of one agent on one task, by start time
    groups: dict[tuple, list[HarborTrial]] = defaultdict(list)
    for t, tid, _ in matched:
        groups[(run_id_of(t), tid)].append(t)
    sample = {id(t): i for ts in groups.values()
              for i, t in enumerate(sorted(ts, key=lambda x: (x.started_at or "", x.trial_name)))}
    before = store.finished_keys(ws.db)
    runs: dict[str, list] = defaultdict(list)
    for t, tid, how in matched:
        outcome = outcome_of(t, tid, str(matcher.tasks[tid].bundle_hash), sample[id(t)], how)
        runs[outcome.record.run_id].append((t, outcome))
    for run_id, items in sorted(runs.items()):
        t0 = items[0][0]
        k = max(sum(1 for _, o in items if o.record.task_id == tid) for tid in {o.record.task_id for _, o in items})
        store.create_run(ws.db, run_id, agent=agent_name(t0.agent), model=t0.model, k=k, concurrency=1,
                         n_tasks=len({o.record.task_id for _, o in items}),
                         params={"source": SOURCE, "job": t0.job, "job_id": t0.job_id, "imported_from": str(source)})
        for t, outcome in items:
            try:
                commit_outcome(ws, outcome)
            except (OSError, BundleError, store.RolloutRecordError) as exc:
                report.malformed.append(JobProblem(t.where, f"could not be stored: {exc}"))
                continue
            rec = outcome.record
            report.imported.append(ImportedTrial(t.where, rec.rollout_id, rec.task_id, rec.agent, rec.reward,
                                                 rec.details["matched_by"], rec.rollout_id in before))
            report.notes += [JobProblem(t.where, n) for n in t.notes]
        n_passed = sum(o.record.passed for _, o in items)
        store.set_run_status(ws.db, run_id, "done", message=f"imported from Harbor job {t0.job}: {len(items)} "
                                                            f"trial(s), {n_passed} passed")
        report.runs.append(run_id)
    return report

