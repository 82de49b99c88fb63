"""Real-shaped skill packages of our own for the exercise tests (not from any corpus)."""
from __future__ import annotations

from pathlib import Path

from pipeline.synth.compose import PathStep
from pipeline.synth.exercise.package import SkillPackage, read_package
from pipeline.synth.skill_fit import parts_from_skill

FUNNEL = Path(__file__).resolve().parents[1] / "exercise_skills" / "funnel-report"
LOG_SUMMARY = Path(__file__).resolve().parents[1] / "exercise_skills" / "log-level-summary"
TICKETS = Path(__file__).resolve().parents[1] / "exercise_skills" / "ticket-fields"   # commands only (jq)


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


def failing_oracle_tests(bundle, engine) -> list[str]:
    """The tests a bundle's own solution fails in a real container (verify_bundle's oracle run)."""
    from pipeline.verify.run import verify_bundle
    got = {c.name: c for c in verify_bundle(bundle, engine=engine)}
    return [t["name"] for t in got["oracle"].details["tests"] if t["outcome"] != "passed"]
