"""Pure functions over the skills table: filtering and summaries shared by pages and notebooks,
and the feedback the Skills page gives on staged and saved curation."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from analysis.display import workbench_command
from pipeline.filters import confidence


@dataclass(frozen=True)
class SkillFilter:
    query: str = ""
    categories: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    rules: tuple[str, ...] = field(default_factory=tuple)
    reasons: tuple[str, ...] = ()    # why a skill is not accepted (pipeline.filters.reasons.REASONS)


def source_label(kind: str, path: object, key: object) -> str:
    """A short name for where a skill came from: the export file or the corpus folder."""
    if kind == "jsonl":
        return "jsonl:" + str(path).rsplit("/", 1)[-1].split("#", 1)[0]
    key = str(key)
    return "folder:" + (key.split("/", 1)[0] if "/" in key else ".")


def with_source_labels(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    # over the columns, not iterrows: a Series per row took seconds at 20k skills
    df["source"] = [source_label(k, p, s) for k, p, s in zip(df["source_kind"], df["source_path"], df["skill_key"])]
    return df


def with_reasons(df: pd.DataFrame, reasons: Mapping[str, str | None]) -> pd.DataFrame:
    """A ``reason`` column: the one reason a skill that is not accepted shows (the skills
    export's), None for an accepted skill whatever its rules said."""
    df = df.copy()
    df["reason"] = [None if status == "accepted" else reasons.get(sid)
                    for sid, status in zip(df["id"], df["status"])]
    return df


def with_confidence(df: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """``confidence``: how sure the filters' verdict on each skill is (0..1,
    pipeline.filters.confidence from its failures, warnings and judge verdict; a skill with none
    is a plain acceptance), and ``confidence_band`` (low / medium / high)."""
    by_skill: dict[str, list] = {}
    for v in verdicts.itertuples(index=False):  # rule, outcome, evidence: all skill_confidence reads
        by_skill.setdefault(v.skill_id, []).append(v)
    df = df.copy()
    df["confidence"] = [confidence.skill_confidence(by_skill.get(sid, ())) for sid in df["id"]]
    df["confidence_band"] = df["confidence"].map(confidence.band_of)
    return df


REVIEW_GROUPS = ("pending", "low confidence", "decided")


def review_order(df: pd.DataFrame) -> pd.DataFrame:
    """The order a person curates in: pending skills first, then the filters' least sure verdicts
    (low confidence, not yet decided by a person), then the rest; the least sure first within each,
    then by name. ``review`` names the group."""
    low = (df["confidence_band"] == "low") & ~df["curated"].fillna(False).astype(bool)
    group = pd.Series(2, index=df.index).mask(low, 1).mask(df["status"] == "pending", 0)
    out = df.assign(review=group.map(dict(enumerate(REVIEW_GROUPS))), _group=group)
    return out.sort_values(["_group", "confidence", "name", "id"], kind="stable").drop(columns="_group")


def filter_skills(df: pd.DataFrame, f: SkillFilter) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    if f.query.strip():
        q = f.query.strip().lower()
        hay = (df["name"].str.lower() + " " + df["description"].str.lower() + " " +
               df["skill_key"].str.lower())
        for word in q.split():
            mask &= hay.str.contains(word, regex=False)
    if f.categories:
        mask &= df["category"].isin(f.categories)
    if f.statuses:
        mask &= df["status"].isin(f.statuses)
    if f.sources:
        mask &= df["source"].isin(f.sources)
    if f.rules:
        wanted = set(f.rules)
        mask &= df["flagged_rules"].apply(lambda rs: bool(wanted & set(rs if rs is not None else [])))
    if f.reasons:
        mask &= df["reason"].isin(f.reasons)
    return df[mask]


def status_by_category(df: pd.DataFrame) -> pd.DataFrame:
    """Counts of skills per (category, status), categories ordered by size."""
    if df.empty:
        return pd.DataFrame(columns=["category", "status", "skills"])
    counts = df.groupby(["category", "status"]).size().rename("skills").reset_index()
    order = df["category"].value_counts().index.tolist()
    counts["category"] = pd.Categorical(counts["category"], categories=order, ordered=True)
    return counts.sort_values(["category", "status"]).reset_index(drop=True)


def rule_counts(df: pd.DataFrame) -> pd.DataFrame:
    """How many skills each filter rule flagged."""
    rows = [r for rs in df["flagged_rules"] for r in (rs if rs is not None else [])]
    if not rows:
        return pd.DataFrame(columns=["rule", "skills"])
    return pd.Series(rows).value_counts().rename_axis("rule").rename("skills").reset_index()


# --- curation feedback ---------------------------------------------------------------

def staged_note(staged: Mapping[tuple[str, str], str], skill_id: str) -> str:
    """What is staged for one skill and not saved yet, e.g. "status → rejected · description
    edited"; "" when nothing is."""
    mine = {f: v for (s, f), v in staged.items() if s == skill_id}
    return " · ".join(f"{f} → {v}" if f in ("status", "category") else f"{f} edited" for f, v in mine.items())


def followup_after_save(old_status: Mapping[str, str], new_status: Mapping[str, str],
                        workspace: str | None = None) -> str:
    """What a save leaves for the pipeline: scenarios are inferred for accepted skills only,
    and the graph holds the skills accepted when it was built. "" when the save changes neither."""
    gained = [s for s, v in new_status.items() if v == "accepted" and old_status.get(s) != "accepted"]
    lost = [s for s, v in new_status.items() if v != "accepted" and old_status.get(s) == "accepted"]
    infer, build = (f"`{workbench_command(c, workspace)}`" for c in ("scenarios infer", "graph build"))
    parts = []
    if gained:
        parts.append(f"{len(gained)} skill(s) newly accepted: run {infer} to infer their scenarios, "
                     f"then {build} to add them to the graph.")
    if lost:
        parts.append(f"{len(lost)} skill(s) no longer accepted: the graph keeps them until {build} runs again.")
    return " ".join(parts)


def missing_scenarios_note(status: str, workspace: str | None = None) -> str:
    """Why a skill has no scenarios yet, and what to run."""
    infer, build = (f"`{workbench_command(c, workspace)}`" for c in ("scenarios infer", "graph build"))
    if status == "accepted":
        return f"No scenarios yet: run {infer}, then {build}."
    return (f"No scenarios: inference covers accepted skills only, and this skill is {status}. "
            f"Accept it and save, then run {infer} and {build}.")
