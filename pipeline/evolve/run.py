"""`workbench evolve`: SETA-Evol rounds (PAPERS.md §2). Per round, each parent's pass rate r over
its rollouts by one agent picks the operator (pipeline/evolve/models.operator_for); the parent's
backend (offline recipes or the LLM) makes the variant; the driver stores its bundle and tasks
row, verifies it like any synthesized task (through the executor: pipeline.verify.run.verify_item,
out, only this driver writes), records its lineage row, then rolls out the accepted variants
k times with the same agent. The next round evolves those.

Resumable: a variant's id is its parent's plus the operator's mark, and the operators are
deterministic, so a resumed run (`--resume RUN`) replays its rounds: variants already verified
are not made again, rollouts already stored are skipped by their content keys.
"""
from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis.difficulty import task_difficulty
from pipeline.evolve.backends import Backends
from pipeline.evolve.models import (DEFAULT_AGENT, DEFAULT_K, NOT_COUNTED, EvolveOperator, NoVariant, ParentTask,
                                   VariantDraft, generation, operator_for, root_of, variant_id)
from pipeline.evolve.report import EvolveReport, round_rows
from pipeline.rollouts.batch import check_args, run_rollouts
from pipeline.synth.limits import DEFAULT_CONCURRENCY
from pipeline.verify import failures
from pipeline.verify.run import BundleItem, VerifyContext, verify_item
from workbench.config import workspace_allows_network
from workbench.executors.factory import make_executor
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import read_bundle, write_bundle
from workbench.sandbox.engine import Engine, SandboxError
from workbench.store import lineage as store
from workbench.store import repairs as repair_store
from workbench.store import rollouts as rollout_store
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

Progress = Callable[[dict], None]


def new_run_id() -> str:
    return "evolve-" + uuid.uuid4().hex[:10]


@dataclass(frozen=True)
class EvolveSpec:
    """What a run is: kept in its params, so a resume replays the very same rounds."""
    task_ids: tuple[str, ...]
    rounds: int
    agent: str
    model: str | None
    k: int
    keep_p: float | None
    concurrency: int
    executor: str
    ray_address: str | None

    def params(self) -> dict:
        return {"task_ids": list(self.task_ids), "keep_p": self.keep_p, "concurrency": self.concurrency,
                "executor": self.executor, "ray_address": self.ray_address}


def check_evolve_args(*, rounds: int, agent: str, model: str | None, k: int, keep_p: float | None,
                      concurrency: int | None, executor: str, ray_address: str | None) -> None:
    """Bad arguments are refused, saying which and why, before anything is recorded."""
    if rounds < 1:
        raise ValueError(f"--rounds must be at least 1, got {rounds}")
    if k < 0:
        raise ValueError(f"-k must be 0 or more, got {k}")
    if k == 0 and rounds > 1:
        raise ValueError(f"-k 0 with --rounds {rounds}: the variants of a round need rollouts for the next round")
    check_args(agent=agent, k=max(k, 1), concurrency=concurrency, temperature=0.0, budget_usd=None, max_turns=None,
               replay=None, model=model, keep_p=keep_p, executor=executor, ray_address=ray_address)


def select_parents(ws: Workspace, task_ids: Sequence[str] | None) -> list[str]:
    """`task_ids` None: the accepted original tasks. Unknown or not accepted ids are refused."""
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    if task_ids is None:
        ids = [t for t in task_store.accepted_tasks(ws.db).task_id if generation(t) == 0]
        if not ids:
            raise ValueError("no accepted tasks to evolve: make some with `workbench synth`, or name tasks with --tasks")
        return ids
    ids = list(dict.fromkeys(task_ids))
    if not ids:
        raise ValueError("no tasks given: name at least one task id, or use --accepted")
    if unknown := [t for t in ids if t not in frame.index]:
        raise ValueError(f"unknown task id(s): {', '.join(unknown)} (`workbench status` or the Tasks page lists them)")
    if bad := [f"{t} ({frame.at[t, 'verdict']})" for t in ids
               if frame.at[t, "verdict"] != "accepted" or _withdrawn(frame.at[t, "withdrawn"])]:
        raise ValueError(f"only accepted tasks evolve; not accepted (or withdrawn): {', '.join(bad)}")
    return ids


def _withdrawn(value) -> bool:
    return bool(value) if pd.notna(value) else False     # NULL: never judged, so not withdrawn


def agent_label_of(agent: str, keep_p: float | None) -> str | None:
    """The label its rollouts are stored under (noisy-oracle's carries p); None for terminus-2,
    whose rollouts are told apart by model."""
    if agent == "terminus-2":
        return None
    from pipeline.agents.factory import make_agent
    return make_agent(agent, keep_p=keep_p).label


def pass_rates(ws: Workspace, task_ids: Sequence[str], *, agent: str, model: str | None,
               label: str | None) -> dict[str, tuple[int, int]]:
    """task id -> (passed, rollouts) over its stored rollouts by this agent config (crashed ones
    left out); tasks without any are absent."""
    frame = rollout_store.rollouts_frame(ws.db)
    if frame.empty:
        return {}
    mine = frame[frame["task_id"].isin(list(task_ids)) & (frame["agent"] == agent)
                 & (frame["model"].fillna("") == (model or "")) & ~frame["failure_class"].isin(NOT_COUNTED)]
    if label is not None:
        mine = mine[mine["agent_label"] == label]
    diff = task_difficulty(mine)
    return {r.task_id: (int(r.passed), int(r.rollouts)) for r in diff.itertuples()}


class EvolveRun:
    """One run's rounds: its spec, the executor, the backends and the report it fills."""

    def __init__(self, ws: Workspace, run_id: str, spec: EvolveSpec, engine: Engine, stop: threading.Event,
                 progress: Progress | None, backends: Backends):
        self.ws, self.run_id, self.spec, self.engine, self.stop = ws, run_id, spec, engine, stop
        self.progress, self.backends = progress, backends
        self.label = agent_label_of(spec.agent, spec.keep_p)
        self.report = EvolveReport(run_id, spec.agent, spec.model, rounds=spec.rounds)
        self.ctx = VerifyContext(allow_network=workspace_allows_network(ws.root), engine=engine, stop=stop)
        self.executor = make_executor(spec.executor, concurrency=spec.concurrency, ray_address=spec.ray_address)
        self.round = 0

    def tick(self, phase: str, done: int, total: int) -> None:
        payload = {"round": self.round, "phase": phase, "done": done, "total": total}
        store.set_run_progress(self.ws.db, self.run_id, payload)
        if self.progress:
            self.progress(payload)

    def rates(self, task_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        return pass_rates(self.ws, task_ids, agent=self.spec.agent, model=self.spec.model, label=self.label)

    def roll_out(self, task_ids: Sequence[str], phase: str) -> None:
        if not task_ids or self.spec.k == 0 or self.stop.is_set():
            return
        rep = run_rollouts(self.ws, agent=self.spec.agent, task_ids=list(task_ids), k=self.spec.k,
                           model=self.spec.model, keep_p=self.spec.keep_p, concurrency=self.spec.concurrency,
                           executor=self.spec.executor, ray_address=self.spec.ray_address, engine=self.engine,
                           stop=self.stop, progress=lambda c: self.tick(phase, c["done"], c["total"]))
        self.report.rollout_runs.append(rep.run_id)
        if rep.not_run:
            self.report.notes.append(f"round {self.round}: {rep.not_run} rollout(s) not run ({rep.run_id})")

    # --- one round -------------------------------------------------------------------------------

    def run_round(self, parent_ids: list[str]) -> list[str]:
        """Evolve these parents; returns the accepted variants (made now or before)."""
        self.tick("rates", 0, len(parent_ids))
        rates = self.rates(parent_ids)
        self.roll_out([t for t in parent_ids if t not in rates], "parent rollouts")
        rates = self.rates(parent_ids)
        if missing := [t for t in parent_ids if t not in rates]:
            self.report.notes.append(f"round {self.round}: no {self.spec.agent} rollouts, so not evolved: "
                                     + ", ".join(missing))
        frame = task_store.tasks_frame(self.ws.db).set_index("task_id", drop=False)
        todo: list[BundleItem] = []
        variants: list[str] = []
        parents = [t for t in parent_ids if t in rates]
        for i, pid in enumerate(parents):
            if self.stop.is_set():
                break
            self.tick("make", i, len(parents))
            passed, n = rates[pid]
            op = operator_for(passed / n)
            vid = variant_id(pid, op, 1)
            if self._finished(frame, vid):
                self.report.reused += 1
                variants.append(vid)
                continue
            parent = ParentTask(pid, read_bundle(self.ws.root / frame.at[pid, "bundle_dir"]),
                                frame.loc[pid].to_dict(), passed / n, n)
            item = self._make(parent, op, vid)
            if item is not None:
                variants.append(vid)
                if isinstance(item, BundleItem):
                    todo.append(item)
        self.tick("make", len(parents), len(parents))
        self._verify(todo)
        verdicts = task_store.tasks_frame(self.ws.db).set_index("task_id")["verdict"]
        accepted = [v for v in variants if verdicts.get(v) == "accepted"]
        self.report.variants += [v for v in variants if v not in self.report.variants]
        self.roll_out(accepted, "variant rollouts")
        return accepted

    def _finished(self, frame: pd.DataFrame, vid: str) -> bool:
        """Made and verified before (this run before a resume, or an earlier run): not made again."""
        return (vid in frame.index and frame.at[vid, "verdict"] in ("accepted", "rejected")
                and (self.ws.root / str(frame.at[vid, "bundle_dir"]) / "task.toml").exists()
                and store.get_lineage(self.ws.db, vid) is not None)

    def _lineage(self, parent: ParentTask, op: str, vid: str, provider: str, status: str, change: str = "",
                 error: str | None = None) -> None:
        store.save_lineage(self.ws.db, {
            "task_id": vid, "parent_id": parent.task_id, "root_id": root_of(parent.task_id), "operator": op,
            "round": self.round, "run_id": self.run_id, "parent_pass_rate": parent.pass_rate,
            "parent_rollouts": parent.rollouts, "provider": provider, "change": change, "status": status,
            "error": error[:2000] if error else None})

    def _make(self, parent: ParentTask, op: str, vid: str) -> BundleItem | bool | None:
        """Make and store one variant: a BundleItem to verify, True when it came verified (the LLM
        backend verifies while it repairs), None when none was made (the lineage row says why)."""
        provider = str(parent.record.get("provider") or "offline")
        try:
            backend: EvolveOperator = self.backends.for_provider(provider)
            draft = backend.make(parent, op, 1)
        except NoVariant as exc:
            self._lineage(parent, op, vid, provider, "no_variant", error=str(exc))
            return None
        except BudgetExceeded:      # unfinished, not failed: a resume (with more budget) makes it
            self.report.notes.append(f"{vid}: not made, the LLM budget is spent")
            return None
        except LLMCallError as exc:
            if not exc.endpoint_fault:
                self._lineage(parent, op, vid, provider, "failed", error=f"{type(exc).__name__}: {exc}")
            else:
                self.report.notes.append(f"{vid}: not made, the LLM endpoint failed ({exc.error_class})")
            return None
        except Exception as exc:   # an operator bug must not sink the round; it is recorded
            if self.stop.is_set():
                return None
            self._lineage(parent, op, vid, provider, "failed", error=f"{type(exc).__name__}: {exc}")
            return None
        if draft.task_id != vid:
            self._lineage(parent, op, vid, provider, "failed",
                          error=f"backend {provider!r} made {draft.task_id} when asked for {vid}")
            return None
        self._save(draft, parent)
        self._lineage(parent, op, vid, draft.provider, "made", change=draft.change)
        checks = draft.details.get("checks")
        if checks is None:
            return BundleItem(vid, draft.bundle)
        self._commit_checks(vid, [CheckResult.model_validate(c) for c in checks])
        return True

    def _save(self, draft: VariantDraft, parent: ParentTask) -> None:
        rel = f"tasks/{draft.task_id}"
        write_bundle(draft.bundle, self.ws.root / rel)
        task_store.save_task(self.ws.db, TaskRecord(
            task_id=draft.task_id, name=draft.name, path_id=str(parent.record.get("path_id") or ""),
            category=draft.category, difficulty=draft.difficulty, n_steps=draft.n_steps, recipes=draft.recipes,
            skill_ids=draft.skill_ids, scenario_ids=draft.scenario_ids, provider=draft.provider, bundle_dir=rel,
            bundle_hash=draft.bundle.content_hash()),
            near_dup_key=draft.details.get("near_dup_key"), skill_fidelity=draft.details.get("skill_fidelity"))
        if attempts := draft.details.get("attempts"):
            try:
                repair_store.save_attempts(self.ws.db, draft.task_id, attempts)
            except repair_store.AttemptError as exc:
                self.report.notes.append(f"{draft.task_id}: repair attempts not stored: {exc}")

    def _commit_checks(self, vid: str, checks: list[CheckResult]) -> None:
        image = next((c.details.get("image") for c in checks if c.name == "build" and c.passed), None)
        task_store.save_verification(self.ws.db, vid, checks, image, verdict=failures.verdict(checks),
                                     failed_check=failures.first_failed(checks))

    def _verify(self, items: list[BundleItem]) -> None:
        if not items:
            return
        done = [0]

        def commit(item: BundleItem, checks: list[CheckResult]) -> None:
            if not self.stop.is_set():     # checks cut short by a stop prove nothing: resume verifies again
                self._commit_checks(item.name, checks)
            done[0] += 1
            self.tick("verify", done[0], len(items))

        def on_error(item: BundleItem, exc: BaseException) -> None:
            row = store.get_lineage(self.ws.db, item.name)
            store.save_lineage(self.ws.db, {**row, "status": "failed",
                                            "error": f"verification crashed: {type(exc).__name__}: {exc}"[:2000]})
            done[0] += 1
            self.tick("verify", done[0], len(items))
        self.tick("verify", 0, len(items))
        self.executor.run(items, functools.partial(verify_item, ctx=self.ctx), commit=commit, on_error=on_error,
                          stop=self.stop)

    def variant_rates(self) -> dict[str, float]:
        got = self.rates(self.report.variants)
        return {t: c / n for t, (c, n) in got.items()}


def run_evolve(ws: Workspace, *, task_ids: Sequence[str] | None = None, rounds: int = 1, agent: str = DEFAULT_AGENT,
               model: str | None = None, k: int = DEFAULT_K, keep_p: float | None = None,
               concurrency: int | None = None, executor: str = "local", ray_address: str | None = None,
               run_id: str | None = None, resume: bool = False, progress: Progress | None = None,
               stop: threading.Event | None = None, engine: Engine | None = None,
               operators: Mapping[str, EvolveOperator] | None = None) -> EvolveReport:
    """Run (or `resume` the run `run_id`) and return its report. `task_ids` None: the accepted
    original tasks. `operators`: backends by provider instead of the default ones (tests, the demo).
    Raises ValueError (bad arguments, unknown or unaccepted tasks, k=0 with parents that have no
    rollouts) before anything is recorded, SandboxError when Docker or the base image is missing."""
    stop = stop or threading.Event()
    if resume:
        run = store.get_run(ws.db, run_id) if run_id else None
        if run is None:
            raise ValueError(f"nothing to resume: no evolve run {run_id!r} in this workspace")
        p = run["params"]
        spec = EvolveSpec(tuple(p["task_ids"]), int(run["rounds"]), run["agent"], run["model"], int(run["k"]),
                          p.get("keep_p"), concurrency or int(p.get("concurrency") or DEFAULT_CONCURRENCY),
                          p.get("executor") or "local", p.get("ray_address"))
    else:
        check_evolve_args(rounds=rounds, agent=agent, model=model, k=k, keep_p=keep_p, concurrency=concurrency,
                          executor=executor, ray_address=ray_address)
        ids = select_parents(ws, task_ids)
        spec = EvolveSpec(tuple(ids), rounds, agent, model, k, keep_p, concurrency or DEFAULT_CONCURRENCY,
                          executor, ray_address)
        if k == 0 and (bare := [t for t in ids if t not in pass_rates(ws, ids, agent=agent, model=model,
                                                                     label=agent_label_of(agent, keep_p))]):
            raise ValueError(f"-k 0 but no {agent} rollouts yet for: {', '.join(bare)} (their pass rates are "
                             "unknown; give -k to roll them out first)")
        run_id = run_id or new_run_id()
        if (known := store.get_run(ws.db, run_id)) is not None and known["status"] != "pending":
            raise ValueError(f"evolve run {run_id} exists already: resume it with --resume {run_id}")
    engine = engine or Engine()
    base = base_image_name()
    if not engine.image_exists(base):
        raise SandboxError(f"base image {base} is missing: run `workbench images bootstrap` (or set WORKBENCH_BASE_IMAGE)")
    if not resume:
        store.create_run(ws.db, run_id, rounds=spec.rounds, agent=spec.agent, model=spec.model, k=spec.k,
                         params=spec.params())
    store.set_run_status(ws.db, run_id, "running", pid=os.getpid())
    t0 = time.monotonic()
    backends = Backends(ws, engine=engine, base_image=base, run_id=run_id, stop=stop, given=operators)
    run = EvolveRun(ws, run_id, spec, engine, stop, progress, backends)
    try:
        parents = list(spec.task_ids)
        for rnd in range(1, spec.rounds + 1):
            run.round = rnd
            if not parents:
                run.report.notes.append(f"round {rnd}: no accepted variants of round {rnd - 1} to evolve")
                break
            parents = run.run_round(parents)
            if stop.is_set():
                break
            run.report.rounds_done = rnd
            store.set_run_status(ws.db, run_id, "running", rounds_done=rnd)
    except BaseException as exc:
        engine.kill_all()
        cancelled = isinstance(exc, KeyboardInterrupt)
        store.finish_run(ws.db, run_id, "cancelled" if cancelled else "failed",
                         f"interrupted; resume with `workbench evolve --resume {run_id}`" if cancelled
                         else f"{type(exc).__name__}: {exc}"[:2000], rounds_done=run.report.rounds_done)
        raise
    finally:
        backends.close()
    report = run.report
    report.rows = round_rows(store.lineage_frame(ws.db, run_id), run.variant_rates())
    report.seconds = time.monotonic() - t0
    report.status = "cancelled" if stop.is_set() else "done"
    report.message = report.summary() + (f"; resume with `workbench evolve --resume {run_id}`"
                                         if stop.is_set() else "")
    store.finish_run(ws.db, run_id, report.status, report.message, rounds_done=report.rounds_done)
    return report
