"""`workbench export trajectories OUT`: the rollouts' trajectories as an SFT dataset.

Formats: `atif` copies each rollout's trajectory.json (ATIF, as Harbor writes it) to
OUT/trajectories/<rollout id>.json with OUT/index.jsonl beside them; `chat-jsonl` and `parquet`
write OUT/conversations.{jsonl,parquet}, rows in the shape of Harbor's traces export
(pipeline/export/chat_rows.py). Parquet goes through DuckDB (a dependency already).

Which rollouts: those of `--run` (default every run) that pass the filter: `all`; `complete`:
the agent finished on its own (it passed, or only the tests failed it: not a timeout, crash,
parse errors, never completed, a failed script or a stop); `success`: reward 1. The scripted
agents (nop, oracle, ablation, also as run by Harbor) are probes, not models: the SFT formats
leave them out unless `agents` names them (atif keeps every agent unless `agents` is given).
Rows (atif: whole trajectories) sharing a 14-gram with `--benchmark DIR` are dropped and named
(pipeline.verify.decontam.BenchmarkIndex). OUT/README.md is the dataset card.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipeline.agents.protocol import SCRIPTED_AGENTS, base_agent

from pipeline.export.chat_rows import EPISODES, ChatRowError, RowMeta, chat_rows, row_text, text_of
from pipeline.trajectories.atif import TrajectoryError, read_trajectory
from pipeline.verify.decontam import N, BenchmarkIndex
from workbench.folder_write import write_folder
from workbench.store import rollouts as store
from workbench.workspace import Workspace

FORMATS = ("atif", "chat-jsonl", "parquet")
SFT_FORMATS = ("chat-jsonl", "parquet")
FILTERS = ("all", "complete", "success")
# Failure classes that mean the agent itself did not finish (pipeline.agents.protocol.FAILURE_CLASSES).
NOT_COMPLETED = ("timeout", "never_completed", "parse_errors", "crashed", "script_failed", "stopped")
PARQUET_COLUMNS = {"conversations": "STRUCT(role VARCHAR, content VARCHAR)[]", "agent": "VARCHAR",
                   "model": "VARCHAR", "model_provider": "VARCHAR", "date": "VARCHAR", "task": "VARCHAR",
                   "episode": "VARCHAR", "run_id": "VARCHAR", "trial_name": "VARCHAR", "result": "VARCHAR",
                   "reward": "DOUBLE", "rollout_id": "VARCHAR", "task_id": "VARCHAR"}


class TrajectoryExportError(ValueError):
    """The export cannot start (unknown run, bad option, OUT not a folder); nothing was written."""


@dataclass(frozen=True)
class Dropped:
    rollout_id: str
    task: str
    why: str
    episode: str | None = None


@dataclass
class TrajectoryExportReport:
    out: Path
    format: str
    filter: str
    episodes: str
    run_id: str | None
    agents_asked: list[str] | None
    considered: int = 0                                              # rollouts of the run(s)
    kept: dict[str, int] = field(default_factory=dict)                  # agent -> rollouts written
    rows: dict[str, int] = field(default_factory=dict)                  # agent -> rows (atif: files) written
    labels: dict[str, str] = field(default_factory=dict)            # agent -> what it is
    models: dict[str, list[str]] = field(default_factory=dict)
    tasks: int = 0
    scripted_left_out: dict[str, int] = field(default_factory=dict)     # agent -> rollouts
    filtered_out: int = 0
    not_asked: int = 0                                               # agents outside `agents`
    no_trajectory: list[str] = field(default_factory=list)          # rollout ids
    unreadable: list[Dropped] = field(default_factory=list)
    contaminated: list[Dropped] = field(default_factory=list)
    benchmark: str | None = None
    benchmark_files: int = 0
    files: list[str] = field(default_factory=list)                  # written, relative to out

    def summary(self) -> str:
        unit = "trajectory file(s)" if self.format == "atif" else "row(s)"
        text = (f"wrote {sum(self.rows.values())} {unit} from {sum(self.kept.values())} of {self.considered} "
                f"rollout(s) to {self.out} ({self.format}, filter {self.filter})")
        if self.scripted_left_out:
            text += f"; scripted agents left out: {sum(self.scripted_left_out.values())} rollout(s)"
        if self.benchmark:
            text += f"; {len(self.contaminated)} dropped by {N}-gram decontamination"
        if self.unreadable:
            text += f"; {len(self.unreadable)} unreadable trajectories skipped"
        return text


def _add(counts: dict[str, int], key: str, n: int) -> None:
    # plain dicts: dataclasses.asdict would rebuild a collections.Counter from (key, value) pairs
    counts[key] = counts.get(key, 0) + n


def is_scripted(agent: str) -> bool:
    return base_agent(agent) in SCRIPTED_AGENTS


def passes_filter(rec: dict, flt: str) -> bool:
    if flt == "success":
        return bool(rec["passed"]) and rec["reward"] is not None and float(rec["reward"]) >= 1.0
    if flt == "complete":
        return bool(rec["passed"]) or rec["failure_class"] not in NOT_COMPLETED
    return True


def _clean(v):
    """pandas NaN/NaT -> None."""
    return None if v is None or (isinstance(v, float) and v != v) else v


def _meta(rec: dict) -> RowMeta:
    harbor = (rec.get("details") or {}).get("harbor") or {}
    reward = _clean(rec.get("reward"))
    result = str(float(reward)) if reward is not None else (rec.get("failure_class") or None)
    return RowMeta(agent=str(rec["agent"]), model=_clean(rec.get("model")),
                   model_provider=harbor.get("model_provider"),
                   date=str(harbor.get("started_at") or _clean(rec.get("created_at")) or ""),
                   task=str(_clean(rec.get("task_name")) or rec["task_id"]), run_id=str(_clean(rec.get("run_id")) or ""),
                   trial_name=str(harbor.get("trial_name") or rec["rollout_id"]), result=result,
                   reward=None if reward is None else float(reward), rollout_id=str(rec["rollout_id"]),
                   task_id=str(rec["task_id"]))


def trajectory_text(doc: dict) -> str:
    """Every message, observation and tool-call argument of a trajectory (what decontamination reads)."""
    parts = []
    for step in doc.get("steps") or []:
        if not isinstance(step, dict):
            continue
        parts.append(text_of(step.get("message")))
        parts.append(str(step.get("reasoning_content") or ""))
        parts += [json.dumps(c.get("arguments", {}), ensure_ascii=False) for c in step.get("tool_calls") or []
                  if isinstance(c, dict)]
        parts += [text_of(r.get("content")) for r in (step.get("observation") or {}).get("results") or []
                  if isinstance(r, dict)]
    return "\n".join(parts)


def _first_shared(index: BenchmarkIndex | None, text: str) -> str | None:
    if index is None:
        return None
    hit = index.shared(text, limit=1)
    return f"shares the {N}-gram {hit[0][0][:120]!r} with benchmark file {hit[0][1]}" if hit else None


def _records(ws: Workspace, run_id: str | None) -> list[dict]:
    if run_id and store.get_run(ws.db, run_id) is None:
        raise TrajectoryExportError(f"no rollout run {run_id!r} in {ws.root} (`workbench rollout` or "
                                    "`workbench import harbor-job` make them; the Rollouts page lists them)")
    frame = store.rollouts_frame(ws.db, run_id)
    recs = frame.to_dict("records")
    for r in recs:
        d = r.get("details")
        r["details"] = json.loads(d) if isinstance(d, str) else (d or {})
    return recs


def _check_agents_known(agents: list[str] | None, recs: list[dict]) -> None:
    """A name in `agents` that no rollout has is a typo, not a wish for an empty dataset."""
    present = {str(r["agent"]) for r in recs}
    known = present | {base_agent(a) for a in present}
    if unknown := [a for a in agents or () if a not in known]:
        raise TrajectoryExportError(f"--agents: no rollouts of {', '.join(map(repr, unknown))} here "
                                    f"(agents with rollouts: {', '.join(sorted(present)) or 'none'})")


def _read_doc(ws: Workspace, rec: dict) -> tuple[bytes | None, dict | None, str | None]:
    """(file bytes, document, why unreadable); (None, None, None) when there is no trajectory."""
    root = ws.root.resolve()
    path = (root / str(rec["folder"]) / "trajectory.json")
    if not path.exists():
        return None, None, None
    if path.is_symlink() or root not in path.resolve().parents:
        return None, None, "trajectory.json is a link or lies outside the workspace"
    try:
        data = path.read_bytes()
        read_trajectory(data)                     # ATIF, as our models (Harbor's mirror) read it
        return data, json.loads(data), None
    except (OSError, TrajectoryError) as exc:
        return None, None, str(exc).replace("<bytes>", f"{rec['folder']}/trajectory.json")


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_parquet(path: Path, rows: list[dict]) -> None:
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".parquet.") as tmp:
        src, dest = Path(tmp) / "rows.jsonl", Path(tmp) / path.name
        src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        cols = ", ".join(f"'{k}': '{v}'" for k, v in PARQUET_COLUMNS.items())
        con = duckdb.connect()
        try:
            select = (f"SELECT {', '.join(PARQUET_COLUMNS)} FROM read_json(?, format='newline_delimited', "
                      f"columns={{{cols}}})")
            con.execute(f"COPY ({select}) TO '{dest.as_posix()}' (FORMAT parquet)", [str(src)])
        finally:
            con.close()
        os.replace(dest, path)


def export_trajectories(ws: Workspace, out: Path, *, fmt: str = "chat-jsonl", flt: str = "all",
                        run_id: str | None = None, benchmark: Path | None = None,
                        agents: list[str] | None = None, episodes: str = "all") -> TrajectoryExportReport:
    """Write the dataset and its card; see the module's docstring."""
    if fmt not in FORMATS:
        raise TrajectoryExportError(f"format {fmt!r}: one of {', '.join(FORMATS)}")
    if flt not in FILTERS:
        raise TrajectoryExportError(f"filter {flt!r}: one of {', '.join(FILTERS)}")
    if episodes not in EPISODES:
        raise TrajectoryExportError(f"episodes {episodes!r}: one of {', '.join(EPISODES)}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise TrajectoryExportError(f"{out} exists and is not a folder")
    try:
        index = BenchmarkIndex.build(benchmark) if benchmark is not None else None
    except ValueError as exc:
        raise TrajectoryExportError(f"--benchmark: {exc}") from None
    recs = _records(ws, run_id)
    _check_agents_known(agents, recs)
    report = TrajectoryExportReport(out=out.resolve(), format=fmt, filter=flt, episodes=episodes, run_id=run_id,
                                    agents_asked=list(agents) if agents else None, considered=len(recs),
                                    benchmark=str(index.root) if index else None,
                                    benchmark_files=index.files if index else 0)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    atif: list[tuple[dict, bytes]] = []
    tasks = set()
    for rec in recs:
        agent = str(rec["agent"])
        if agents and agent not in agents and base_agent(agent) not in agents:
            report.not_asked += 1
            continue
        if not agents and fmt in SFT_FORMATS and is_scripted(agent):
            _add(report.scripted_left_out, agent, 1)
            continue
        if not passes_filter(rec, flt):
            report.filtered_out += 1
            continue
        data, doc, why = _read_doc(ws, rec)
        meta = _meta(rec)
        if why:
            report.unreadable.append(Dropped(meta.rollout_id, meta.task, why))
            continue
        if doc is None:
            report.no_trajectory.append(meta.rollout_id)
            continue
        if fmt == "atif":
            if hit := _first_shared(index, trajectory_text(doc)):
                report.contaminated.append(Dropped(meta.rollout_id, meta.task, hit))
                continue
            atif.append((rec, data))
            n_rows = 1
        else:
            try:
                mine = chat_rows(doc, meta, episodes)
            except ChatRowError as exc:
                report.unreadable.append(Dropped(meta.rollout_id, meta.task, str(exc)))
                continue
            kept = []
            for row in mine:
                if hit := _first_shared(index, row_text(row)):
                    report.contaminated.append(Dropped(meta.rollout_id, meta.task, hit, row["episode"]))
                else:
                    kept.append(row)
            if not kept:
                continue
            rows += kept
            n_rows = len(kept)
        _add(report.kept, agent, 1)
        _add(report.rows, agent, n_rows)
        report.labels.setdefault(agent, str(rec.get("agent_label") or agent))
        if meta.model and meta.model not in report.models.setdefault(agent, []):
            report.models[agent].append(meta.model)
        tasks.add(meta.task_id)
    report.tasks = len(tasks)
    _write(out, fmt, rows, atif, report)
    return report


def _write(out: Path, fmt: str, rows: list[dict], atif: list[tuple[dict, bytes]], report) -> None:
    from pipeline.export.dataset_card import card_text
    if fmt == "atif":
        files, index_lines = {}, []
        for rec, data in atif:
            name = f"{rec['rollout_id']}.json"
            files[name] = data
            meta = _meta(rec)
            index_lines.append(json.dumps({"file": f"trajectories/{name}", "rollout_id": meta.rollout_id,
                                           "task": meta.task, "task_id": meta.task_id, "agent": meta.agent,
                                           "model": meta.model, "run_id": meta.run_id,
                                           "trial_name": meta.trial_name, "reward": meta.reward,
                                           "result": meta.result}, ensure_ascii=False))
        write_folder(out / "trajectories", files)
        _write_atomic(out / "index.jsonl", "".join(line + "\n" for line in index_lines).encode())
        report.files = ["index.jsonl"] + [f"trajectories/{rec['rollout_id']}.json" for rec, _ in atif]
    elif fmt == "chat-jsonl":
        _write_atomic(out / "conversations.jsonl",
                      "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())
        report.files = ["conversations.jsonl"]
    else:
        _write_parquet(out / "conversations.parquet", rows)
        report.files = ["conversations.parquet"]
    _write_atomic(out / "README.md", card_text(report).encode())
    report.files.append("README.md")
