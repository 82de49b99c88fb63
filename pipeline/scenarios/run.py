"""`workbench scenarios infer`: offline heuristics, or the LLM with a schema.

Results are stored as they arrive, a few at a time, so a stopped batch (budget spent,
Ctrl-C, a crash) keeps everything already inferred and a rerun does only the rest.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.scenarios import degenerate, offline
from workbench.llm.batch import run_with_client
from workbench.llm.client import LLMClient
from workbench.llm.prompts import load_template
from workbench.models import ScenarioPair
from workbench.store import scenarios as store
from workbench.workspace import Workspace

STAGE = "scenario_inference"
FLUSH_EVERY = 20
Progress = Callable[[int, int, str], None]


@dataclass
class InferenceReport:
    provider: str
    model: str
    todo: int = 0
    inferred: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    not_started: int = 0
    stopped: str | None = None
    cost_usd: float = 0.0
    cache_hits: int = 0
    reasked: int = 0  # LLM replies asked again once because they were degenerate

    def as_dict(self) -> dict:
        return {"provider": self.provider, "model": self.model, "todo": self.todo, "inferred": self.inferred,
                "failed": len(self.failed), "not_started": self.not_started, "stopped": self.stopped,
                "cost_usd": round(self.cost_usd, 6), "cache_hits": self.cache_hits, "reasked": self.reasked,
                "failures": [{"skill_id": s, "reason": r} for s, r in self.failed]}


def _fields(row) -> dict:
    return {"name": row["name"], "description": row["description"], "category": row["category"],
            "steps": list(row["steps"]), "inputs": list(row["inputs"]), "outputs": list(row["outputs"]),
            "bins": list(row["bins"])}


def infer_offline(ws: Workspace, *, force: bool = False, on_progress: Progress | None = None) -> InferenceReport:
    todo = store.skills_needing_scenarios(ws.db, offline.PROVIDER, offline.MODEL, None, force)
    report = InferenceReport(offline.PROVIDER, offline.MODEL, todo=len(todo))
    pairs: list[tuple[str, ScenarioPair]] = []
    for n, (_, row) in enumerate(todo.iterrows(), start=1):
        try:
            pairs.append((row["id"], offline.infer(**_fields(row), raw_text=row["raw_text"])))
        except Exception as exc:  # e.g. a skill whose parts are too thin for a valid scenario
            report.failed.append((row["id"], f"{type(exc).__name__}: {exc}"))
        if len(pairs) >= 200:
            store.save_pairs(ws.db, pairs, offline.PROVIDER, offline.MODEL, None)
            report.inferred += len(pairs)
            pairs.clear()
        if on_progress:
            on_progress(n, len(todo), row["name"])
    store.save_pairs(ws.db, pairs, offline.PROVIDER, offline.MODEL, None)
    report.inferred += len(pairs)
    store.save_failures(ws.db, report.failed, offline.PROVIDER, offline.MODEL)
    return report


def infer_online(ws: Workspace, client: LLMClient, *, force: bool = False,
                 on_progress: Progress | None = None) -> InferenceReport:
    template = load_template(STAGE)
    model = client.settings.model
    todo = store.skills_needing_scenarios(ws.db, client.provider, model, template.version, force)
    report = InferenceReport(client.provider, model, todo=len(todo))
    rows = [r for _, r in todo.iterrows()]
    pending_pairs: list[tuple[str, ScenarioPair]] = []
    pending_fail: list[tuple[str, str]] = []
    unusable: set[str] = set()  # skills whose reply stayed degenerate: no pair of this model may stand
    done = 0

    def flush() -> None:
        store.save_pairs(ws.db, pending_pairs, client.provider, model, template.version)
        store.save_failures(ws.db, pending_fail, client.provider, model)
        store.drop_pairs(ws.db, [sid for sid, _ in pending_fail if sid in unusable], client.provider, model)
        pending_pairs.clear()
        pending_fail.clear()

    echoes = degenerate.field_descriptions(template.system, ScenarioPair.model_json_schema())

    async def ask(row, messages: list[dict]):
        result = await client.complete(stage=STAGE, item=row["id"], messages=messages, schema=ScenarioPair,
                                       params={"temperature": 0}, template_version=template.version)
        report.cache_hits += int(result.cached)
        return result, degenerate.problems(result.parsed, description=row["description"] or "",
                                           descriptions=echoes)

    async def one(row) -> ScenarioPair:
        f = _fields(row)
        messages = template.render(
            name=f["name"], category=f["category"], description=f["description"],
            inputs="; ".join(f["inputs"]) or "(none listed)", outputs="; ".join(f["outputs"]) or "(none listed)",
            bins=", ".join(f["bins"]) or "(none listed)",
            steps="\n".join(f"{i}. {s}" for i, s in enumerate(f["steps"], 1)) or "(none listed)")
        result, found = await ask(row, messages)
        if found:  # valid JSON that says nothing: say what was wrong and ask once more
            report.reasked += 1
            result, found = await ask(row, messages + [
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": degenerate.reask_message(found)}])
            if found:
                unusable.add(row["id"])
                raise degenerate.DegenerateReply(found)  # stored as a failure, never as a pair
        return result.parsed

    def on_result(row, pair, reason) -> None:
        nonlocal done
        done += 1
        if pair is not None:
            pending_pairs.append((row["id"], pair))
            report.inferred += 1
        else:
            pending_fail.append((row["id"], reason))
            report.failed.append((row["id"], reason))
        if len(pending_pairs) + len(pending_fail) >= FLUSH_EVERY:
            flush()
        if on_progress:
            on_progress(done, len(rows), row["name"])

    outcome = run_with_client(client, rows, one, on_result=on_result, flush=flush)
    report.not_started = len(outcome.not_started)
    report.stopped = outcome.stopped
    report.cost_usd = client.budget.by_stage[STAGE].cost_usd
    return report
