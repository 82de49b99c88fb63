"""Real-shaped skill packages of our own for the exercise tests (not from any corpus)."""
from __future__ import annotations

from pathlib import Path

from pipeline.synth.compose import PathStep
from pipeline.synth.exercise.package import SkillPackage, read_package
from pipeline.synth.skill_fit import parts_from_skill

FUNNEL = Path(__file__).resolve().parents[1] / "exercise_skills" / "funnel-report"
LOG_SUMMARY = Path(__file__).resolve().parents[1] / "exercise_skills" / "log-level-summary"
TICKETS = Path(__file__).resolve().parents[1] / "exercise_skills" / "ticket-fields"   # commands only (jq)
ORDERS_DB = Path(__file__).resolve().parents[1] / "exercise_skills" / "order-totals-sqlite"   # sqlite3 queries


def package_of(folder: Path, name: str) -> SkillPackage:
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return read_package(str(folder), files, (folder / "SKILL.md").read_text(), name=name, skill_id=f"id-{name}")


def funnel_step(src: str = "a0", dst: str = "a1", package: SkillPackage | None = None) -> PathStep:
    body = (FUNNEL / "SKILL.md").read_text()
    return PathStep("id-funnel-report", "funnel-report", "data-processing",
                    "Analyse a product conversion funnel from its stage counts with the bundled funnel_report.py.",
                    src, dst, parts_from_skill(body), package or package_of(FUNNEL, "funnel-report"))


def tree_with(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


def log_summary_step(src: str = "a0", dst: str = "a1") -> PathStep:
    body = (LOG_SUMMARY / "SKILL.md").read_text()
    return PathStep("id-log-level-summary", "log-level-summary", "log-analysis",
                    "Summarise an application log by level and by component with the bundled summarize.sh.",
                    src, dst, parts_from_skill(body), package_of(LOG_SUMMARY, "log-level-summary"))


def tickets_step(src: str = "a0", dst: str = "a1") -> PathStep:
    """A skill that bundles no script and documents jq commands on a ticket export it shows an example of."""
    body = (TICKETS / "SKILL.md").read_text()
    return PathStep("id-ticket-fields", "ticket-fields", "data-processing",
                    "Turn saved ticket-tracker JSON exports into a small TSV table with jq, one row per ticket.",
                    src, dst, parts_from_skill(body), package_of(TICKETS, "ticket-fields"))


def orders_db_step(src: str = "a0", dst: str = "a1") -> PathStep:
    """A skill documenting read-only sqlite3 queries on a database whose schema its SKILL.md shows."""
    body = (ORDERS_DB / "SKILL.md").read_text()
    return PathStep("id-order-totals", "order-totals-sqlite", "databases",
                    "Report order totals from a shop's SQLite database with the sqlite3 shell, without changing it.",
                    src, dst, parts_from_skill(body), package_of(ORDERS_DB, "order-totals-sqlite"))


def failing_oracle_tests(bundle, engine) -> list[str]:
    """The tests a bundle's own solution fails in a real container (verify_bundle's oracle run)."""
    from pipeline.verify.run import verify_bundle
    got = {c.name: c for c in verify_bundle(bundle, engine=engine)}
    return [t["name"] for t in got["oracle"].details["tests"] if t["outcome"] != "passed"]


def verified_with_bypass(bundle, bypass) -> tuple[dict, list[str]]:
    """verify_bundle's checks of `bundle` by name, and the tests the `bypass` bundle's solution fails, in real
    containers (their images removed afterwards)."""
    from pipeline.verify.run import image_for, verify_bundle
    from workbench.sandbox.engine import Engine
    engine = Engine()
    try:
        checks = {c.name: c for c in verify_bundle(bundle, engine=engine)}
        return checks, failing_oracle_tests(bypass, engine)
    finally:
        for b in (bundle, bypass):
            engine.remove_image(image_for(b))
