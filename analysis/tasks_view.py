"""Data shaping and figures for the Synthesis and Tasks pages.

Filtering the tasks frame (``workbench.store.tasks.tasks_frame``), the yield funnel,
per-check pass rates and the reasons tasks were rejected, per-test outcomes from a check's
details, and a bundle's file listing with a language for ``st.code`` (a synthesis run's own
progress is analysis/synth_runs.py). Pure functions of DataFrames and dicts: nothing here reads the store or
imports Streamlit, so notebooks can use it too.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from pydantic import ValidationError

from analysis.display import short
from analysis.figures import count_ticks
from pipeline.graph.samplers import SAMPLERS  # noqa: F401  (the Synthesis page's choices)
from workbench import double_rule
from workbench.models import CHECK_NAMES, CheckDetails
from workbench.store.tasks import FUNNEL, FUNNEL_LABELS  # noqa: F401  (one funnel, named once)

CHECKS = CHECK_NAMES   # verification order, defined once (workbench.models, re-exported by pipeline.verify.failures)
CHECK_LABELS = {"build": "build", "noop": "no-op fails", "oracle": "oracle passes",
                "redteam": "red-team probe", "rubric": "rubric",
                "decontam": "decontamination", "judge": "LLM judge"}
# "withdrawn": accepted, then taken out of the accepted set (workbench.store.task_events; undoable)
WITHDRAWN = "withdrawn"
VERDICTS = ("accepted", "rejected", WITHDRAWN, "pending", "cancelled")
VERIFIED = ("accepted", "rejected")
VERDICT_COLORS = {"accepted": "#2e7d32", "pending": "#f9a825", "rejected": "#c62828", "cancelled": "#9e9e9e",
                  WITHDRAWN: "#6d4c41"}
ENDED_RUNS = ("cancelled", "failed")  # a run in one of these verifies nothing more until it is resumed
OUTCOME_ORDER = {"failed": 0, "error": 1, "passed": 2, "skipped": 3}


# --- the tasks table -------------------------------------------------------------------------

def _as_list(value) -> list:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return list(value)


def with_skill_names(tasks: pd.DataFrame, skills: pd.DataFrame) -> pd.DataFrame:
    """Add ``skill_names``: the names of each task's source skills, in path order (an id
    whose skill is gone stays as its first 8 characters)."""
    names = dict(zip(skills["id"], skills["name"])) if len(skills) else {}
    out = tasks.copy()
    out["skill_names"] = [[names.get(s, str(s)[:8]) for s in _as_list(ids)] for ids in tasks["skill_ids"]] \
        if len(tasks) else pd.Series([], dtype=object)
    return out


def skill_options(tasks: pd.DataFrame, skills: pd.DataFrame) -> dict[str, str]:
    """Source skill id → "name · n tasks" for every skill some task was made from, most used first."""
    counts: dict[str, int] = {}
    for ids in tasks["skill_ids"] if len(tasks) else []:
        for s in dict.fromkeys(_as_list(ids)):
            counts[s] = counts.get(s, 0) + 1
    names = dict(zip(skills["id"], skills["name"])) if len(skills) else {}
    ordered = sorted(counts, key=lambda s: (-counts[s], names.get(s, s)))
    return {s: f"{names.get(s, s[:8])} · {counts[s]} task{'s' if counts[s] != 1 else ''}" for s in ordered}


def with_shown_verdicts(tasks: pd.DataFrame) -> pd.DataFrame:
    """A pending task whose newest run has ended (cancelled or failed) waits for nothing: it
    reads "cancelled" until a resume verifies it. Needs ``run_status`` (``tasks_frame``).
    An accepted task that was withdrawn (``withdrawn``) reads "withdrawn"."""
    if tasks.empty:
        return tasks
    out = tasks.copy()
    if "run_status" in out:
        out.loc[(out["verdict"] == "pending") & out["run_status"].isin(ENDED_RUNS), "verdict"] = "cancelled"
    if "withdrawn" in out:
        out.loc[(out["verdict"] == "accepted") & out["withdrawn"].fillna(False).astype(bool), "verdict"] = WITHDRAWN
    return out


def made_by_double(tasks: pd.DataFrame) -> pd.Series:
    """Per task: a test double answered its LLM calls (``llm_model`` of ``tasks_frame``, read by
    workbench.double_rule): its cost and yield are no model's."""
    models = tasks["llm_model"] if "llm_model" in tasks else pd.Series(None, index=tasks.index, dtype=object)
    return models.map(lambda m: isinstance(m, str) and double_rule.any_double(m.split(", "))).astype(bool)


def with_provider_labels(tasks: pd.DataFrame) -> pd.DataFrame:
    """`provider_label`: the synthesizer with the model(s) that answered it, a test double saying so
    ("llm · scripted-replay (demo price, test double)"); `provider` itself stays as stored."""
    out = tasks.copy()
    models = out["llm_model"] if "llm_model" in out else [None] * len(out)
    out["provider_label"] = pd.Series([double_rule.provider_label(p, m) for p, m in zip(out["provider"], models)],
                                      index=out.index, dtype=object)
    return out


def cost_column_label(tasks: pd.DataFrame) -> str:
    """The tasks table's cost header: it says so when some of the costs are a test double's."""
    return f"LLM cost ({double_rule.TAG}s' at a made-up price)" if made_by_double(tasks).any() else "LLM cost"


def default_verdicts(tasks: pd.DataFrame) -> list[str]:
    """The Verdict filter a page opens with: verified tasks only (withdrawn ones too, when there
    are any), when there are any."""
    if not (len(tasks) and tasks["verdict"].isin((*VERIFIED, WITHDRAWN)).any()):
        return []
    return list(VERIFIED) + ([WITHDRAWN] if (tasks["verdict"] == WITHDRAWN).any() else [])


def hidden_unverified(tasks: pd.DataFrame, verdicts: Iterable[str]) -> int:
    """Unverified tasks that a Verdict filter of verified tasks only leaves out (0 for any other filter)."""
    if set(verdicts) - {WITHDRAWN} != set(VERIFIED) or tasks.empty:
        return 0
    return int((~tasks["verdict"].isin((*VERIFIED, WITHDRAWN))).sum())


def default_task(shown: pd.DataFrame) -> str | None:
    """The task a detail view opens on: the first verified one listed, else the first one."""
    if shown.empty:
        return None
    verified = shown[shown["verdict"].isin(VERIFIED)]
    return str((verified if len(verified) else shown).iloc[0]["task_id"])


@dataclass(frozen=True)
class TaskFilter:
    verdicts: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    steps: tuple[int, int] | None = None      # inclusive range of path length (n_steps)
    skill_ids: tuple[str, ...] = ()           # tasks made from any of these skills
    query: str = ""                           # words in the name or the source skill names


def filter_tasks(tasks: pd.DataFrame, f: TaskFilter) -> pd.DataFrame:
    mask = pd.Series(True, index=tasks.index)
    if f.verdicts:
        mask &= tasks["verdict"].isin(f.verdicts)
    if f.categories:
        mask &= tasks["category"].isin(f.categories)
    if f.steps is not None:
        lo, hi = f.steps
        mask &= tasks["n_steps"].between(lo, hi)
    if f.skill_ids:
        wanted = set(f.skill_ids)
        mask &= tasks["skill_ids"].map(lambda ids: bool(wanted & set(_as_list(ids))))
    if f.query.strip():
        names = tasks["skill_names"].map(lambda n: " ".join(_as_list(n))) if "skill_names" in tasks else ""
        hay = (tasks["name"].astype(str) + " " + names).str.lower()
        for word in f.query.lower().split():
            mask &= hay.str.contains(word, regex=False)
    return tasks[mask]


def steps_range(tasks: pd.DataFrame) -> tuple[int, int]:
    if tasks.empty:
        return 0, 0
    return int(tasks["n_steps"].min()), int(tasks["n_steps"].max())


def task_label(row: Mapping | pd.Series) -> str:
    failed = f" at {row['failed_check']}" if row.get("failed_check") and pd.notna(row["failed_check"]) else ""
    return f"{row['name']} · {row['verdict']}{failed} · {row['category']} · {int(row['n_steps'])} steps"


def task_path(row: Mapping | pd.Series, fidelity: list[Mapping] | None = None) -> pd.DataFrame:
    """The path a task was made from, one row per step: its skill and the scenario it starts at;
    with the task's `skill_fidelity` (one entry per composed step, steps counted from 1) also the
    recipe family of the step and what of its skill it uses (`fidelity_note`)."""
    skills = _as_list(row.get("skill_names")) or _as_list(row.get("skill_ids"))
    scenarios = _as_list(row.get("scenario_ids"))
    starts = [scenarios[i] if i < len(scenarios) else "" for i in range(len(skills))]
    out = pd.DataFrame({"step": range(len(skills)), "skill": skills, "from scenario": starts})
    if fidelity:
        by_step = {int(f["step"]) - 1: f for f in fidelity}
        out.insert(2, "recipe", [by_step.get(i, {}).get("recipe", "") for i in out["step"]])
        out.insert(3, "uses of the skill", [fidelity_note(by_step[i]) if i in by_step else "" for i in out["step"]])
    return out


def fidelity_note(f: Mapping) -> str:
    """'tool: grep, sort' | 'artifact: json-document' | 'category only' — what a step takes from its skill."""
    what = ", ".join(list(f.get("tools_used") or []) + list(f.get("kinds_used") or []))
    level = str(f.get("fidelity") or "")
    return "category only" if level == "category-only" or not what else f"{level}: {what}"


# --- yield ------------------------------------------------------------------------------------

def yield_ratio(funnel: Mapping[str, int]) -> float:
    """Accepted (verified) tasks per sampled path; 0 when nothing was sampled."""
    return funnel.get("accepted", 0) / funnel["sampled"] if funnel.get("sampled") else 0.0


def funnel_title(funnel: Mapping[str, int]) -> str:
    return (f"{funnel.get('accepted', 0)} verified of {funnel.get('sampled', 0)} sampled "
            f"({yield_ratio(funnel):.0%} yield)")


def funnel_figure(funnel: Mapping[str, int]) -> go.Figure:
    """sampled → synthesized → one stage per check (built, no-op ok, …, judge ok) → accepted."""
    fig = go.Figure(go.Funnel(y=[FUNNEL_LABELS[k] for k in FUNNEL], x=[int(funnel.get(k, 0)) for k in FUNNEL],
                              textinfo="value+percent initial", marker=dict(color="#4c78a8"),
                              hovertemplate="%{y}: %{x} (%{percentInitial:.0%} of sampled)<extra></extra>"))
    fig.update_layout(title=dict(text=funnel_title(funnel), x=0, font=dict(size=15)), height=360,
                      margin=dict(l=0, r=0, t=40, b=0))
    return fig


def check_pass_rates(tasks: pd.DataFrame) -> pd.DataFrame:
    """Per check: tasks it ran on, how many passed, and the pass rate (checks never run are left out)."""
    rows = []
    for name in CHECKS:
        col = f"{name}_ok"
        if col not in tasks:
            continue
        ran = tasks[col].dropna().astype(bool)
        if len(ran):
            rows.append({"check": name, "label": CHECK_LABELS[name], "ran": int(len(ran)),
                         "passed": int(ran.sum()), "pass_rate": float(ran.mean())})
    return pd.DataFrame(rows, columns=["check", "label", "ran", "passed", "pass_rate"])


def pass_rate_figure(rates: pd.DataFrame) -> go.Figure:
    fig = px.bar(rates, x="pass_rate", y="label", orientation="h", text=rates["passed"].astype(str) + "/"
                 + rates["ran"].astype(str), color_discrete_sequence=["#4c78a8"])
    fig.update_layout(height=max(200, 34 * len(rates) + 70), margin=dict(l=0, r=0, t=10, b=0), yaxis_title="",
                      xaxis=dict(title="pass rate", tickformat=".0%", range=[0, 1.05]),
                      yaxis=dict(autorange="reversed"))
    return fig


def failure_breakdown(tasks: pd.DataFrame) -> pd.DataFrame:
    """Rejected tasks per failed check, in verification order, with the most common reason."""
    rej = tasks[tasks["verdict"] == "rejected"] if len(tasks) else tasks
    if rej.empty:
        return pd.DataFrame(columns=["failed_check", "tasks", "share", "top_reason"])
    rej = rej.assign(failed_check=rej["failed_check"].fillna("(none recorded)"), reason=rej["reason"].fillna(""))
    out = rej.groupby("failed_check").agg(tasks=("task_id", "size"),
                                          top_reason=("reason", lambda r: r.value_counts().index[0])).reset_index()
    out["share"] = out["tasks"] / len(rej)
    order = {n: i for i, n in enumerate(CHECKS)}
    out = out.sort_values("failed_check", key=lambda s: s.map(lambda n: order.get(n, 99)), kind="stable")
    return out[["failed_check", "tasks", "share", "top_reason"]].reset_index(drop=True)


def failure_figure(breakdown: pd.DataFrame) -> go.Figure:
    b = breakdown.assign(label=breakdown["failed_check"].map(lambda n: CHECK_LABELS.get(n, n)),
                         hover=breakdown["top_reason"].map(lambda r: short(r, 120)))
    fig = px.bar(b, x="tasks", y="label", orientation="h", custom_data=["hover"],
                 color_discrete_sequence=[VERDICT_COLORS["rejected"]])
    fig.update_traces(hovertemplate="%{y}: %{x} tasks<br>%{customdata[0]}<extra></extra>")
    fig.update_layout(height=max(200, 34 * len(b) + 70), margin=dict(l=0, r=0, t=10, b=0), yaxis_title="",
                      xaxis_title="rejected tasks", yaxis=dict(autorange="reversed"))
    fig.update_xaxes(**count_ticks(float(b["tasks"].max()) if len(b) else 0))  # tasks: no 0.5 tick
    return fig


# --- one task's checks -----------------------------------------------------------------------

def check_details(raw: CheckDetails | Mapping | None) -> CheckDetails:
    """A stored check's details in their one typed shape. A row that does not fit (written
    by an older or a broken verifier) is kept whole under ``stored_details`` with what was
    wrong, so that the page shows it instead of failing."""
    if isinstance(raw, CheckDetails):
        return raw
    try:
        return CheckDetails.model_validate(dict(raw or {}))
    except (ValidationError, TypeError, ValueError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first["loc"]) or "details"
        return CheckDetails.model_validate({"details_problem": f"{where}: {first['msg']}",
                                            "stored_details": raw})


def per_test_outcomes(details: CheckDetails | Mapping | None) -> pd.DataFrame:
    """The per-test outcomes of a no-op / oracle check, failures first."""
    rows = [{"test": t.name, "outcome": t.outcome, "message": t.message} for t in check_details(details).tests]
    df = pd.DataFrame(rows, columns=["test", "outcome", "message"])
    if len(df):
        df = df.sort_values("outcome", key=lambda s: s.map(lambda o: OUTCOME_ORDER.get(o, 9)), kind="stable")
    return df.reset_index(drop=True)


def outcome_summary(details: CheckDetails | Mapping | None) -> str:
    """"3 passed, 1 failed" (and the reward, when the check reported one)."""
    d = check_details(details)
    df = per_test_outcomes(d)
    parts = [f"{n} {o}" for o, n in df["outcome"].value_counts().sort_index(
        key=lambda s: s.map(lambda o: OUTCOME_ORDER.get(o, 9))).items()] if len(df) else []
    if d.reward is not None:
        parts.append(f"reward {d.reward}")
    return ", ".join(parts)


def detail_items(details: CheckDetails | Mapping | None, key: str) -> pd.DataFrame:
    """A list in a check's details (rubric ``problems``, decontam ``matches``, red-team ``attacks``) as a table."""
    items = getattr(check_details(details), key, None) or []
    if not items:
        return pd.DataFrame(columns=[key])
    if all(isinstance(i, Mapping) for i in items):
        return pd.DataFrame([{k: (v if isinstance(v, (str, int, float, bool)) or v is None else str(v))
                              for k, v in i.items()} for i in items])
    return pd.DataFrame({key: [str(i) for i in items]})


# Lists a check's details carry that the page shows as tables: the rubric's problems, the
# decontamination's matches, the red-team probe's attacks (one row each: reward, tests passed).
LISTED_DETAILS = ("problems", "matches", "attacks")
TABLED = ("tests", *LISTED_DETAILS)


def other_details(details: CheckDetails | Mapping | None) -> dict:
    """What a check reported besides the tests, problems and matches shown as tables."""
    dumped = check_details(details).model_dump(exclude_unset=True)
    return {k: v for k, v in dumped.items() if k not in TABLED}


def check_title(check: Mapping | pd.Series) -> str:
    reason = f" — {short(check['reason'], 90)}" if check.get("reason") else ""
    return f"{CHECK_LABELS.get(check['check_name'], check['check_name'])} · {float(check['seconds']):.1f} s{reason}"


def check_icon(passed: bool) -> str:
    """A Material icon for an expander (emoji need fonts a headless browser may lack)."""
    return ":material/check_circle:" if passed else ":material/cancel:"


# --- bundle files -----------------------------------------------------------------------------

_KIND_ORDER = {"instruction": 0, "task config": 1, "environment": 2, "solution": 3, "tests": 4, "other": 5}
_LANG_BY_NAME = {"dockerfile": "docker", "makefile": "makefile", "crontab": "bash", ".bashrc": "bash"}
_LANG_BY_SUFFIX = {".py": "python", ".sh": "bash", ".bash": "bash", ".md": "markdown", ".toml": "toml",
                   ".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml", ".sql": "sql",
                   ".js": "javascript", ".ts": "typescript", ".c": "c", ".h": "c", ".cpp": "cpp", ".go": "go",
                   ".rs": "rust", ".java": "java", ".rb": "ruby", ".pl": "perl", ".php": "php", ".html": "html",
                   ".css": "css", ".xml": "xml", ".ini": "ini", ".cfg": "ini", ".conf": "ini", ".csv": "text",
                   ".tsv": "text", ".txt": "text", ".log": "text", ".diff": "diff", ".patch": "diff"}


def file_kind(path: str) -> str:
    if path == "instruction.md":
        return "instruction"
    if path == "task.toml":
        return "task config"
    top = path.split("/", 1)[0]
    return top if top in ("environment", "solution", "tests") else "other"


def language_for(path: str) -> str:
    """The language ``st.code`` should highlight a bundle file with ("text" when unknown)."""
    p = PurePosixPath(path)
    name = p.name.lower()
    if name in _LANG_BY_NAME or name.startswith("dockerfile"):
        return _LANG_BY_NAME.get(name, "docker")
    return _LANG_BY_SUFFIX.get(p.suffix.lower(), "text")


def is_binary(content: bytes) -> bool:
    head = content[:8192]
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte character cut at the 8k boundary is still text
    return False


def file_text(content: bytes, cap: int = 200_000) -> tuple[str, bool]:
    """The text of a file to show, cut to ``cap`` characters; True when it was cut."""
    text = content.decode("utf-8", errors="replace")
    return (text[:cap], True) if len(text) > cap else (text, False)


def file_tree(files: Mapping[str, bytes]) -> pd.DataFrame:
    """Every file of a bundle: path, size, kind and language, in reading order (instruction,
    task.toml, environment, solution, tests)."""
    rows = [{"path": p, "size": len(c), "kind": file_kind(p), "binary": is_binary(c), "language": language_for(p)}
            for p, c in files.items()]
    df = pd.DataFrame(rows, columns=["path", "size", "kind", "binary", "language"])
    if len(df):
        df["_k"] = df["kind"].map(_KIND_ORDER)
        df["_d"] = df["path"].map(lambda p: "environment/Dockerfile" != p)  # the Dockerfile first in its group
        df = df.sort_values(["_k", "_d", "path"], kind="stable").drop(columns=["_k", "_d"])
    return df.reset_index(drop=True)


def distinct(values: Iterable) -> list:
    return sorted({v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))})
