"""Pure functions over the skills table: filtering and summaries shared by pages and notebooks."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class SkillFilter:
    query: str = ""
    categories: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    rules: tuple[str, ...] = field(default_factory=tuple)


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
