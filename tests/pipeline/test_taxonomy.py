"""Category inference and normalisation."""
from __future__ import annotations

from collections import Counter

import pytest

from pipeline.ingest.skill_builder import build_skill
from pipeline.taxonomy import CATEGORIES, UNCATEGORIZED, infer_category, normalize_category, slugify


def test_infer_category_git_bisect():
    body = ("## Steps\n1. Run `git bisect start HEAD v1.0`.\n2. Run `git bisect run ./test.sh`.\n"
            "3. Reset with `git bisect reset` and note the first bad commit.\n")
    assert infer_category("git-bisect-regression",
                          "Find the commit that introduced a regression with git bisect.",
                          body, ["git"]) == "git"


def test_infer_category_sqlite():
    body = ("## Steps\n1. Open the file with `sqlite3 app.db`.\n"
            "2. Run `SELECT count(*) FROM orders;` and save the result.\n")
    assert infer_category("sqlite-report", "Query a SQLite database and summarise a table.",
                          body, ["sqlite3"]) == "databases"


def test_infer_category_from_binaries_its_code_runs():
    body = ("```bash\njq '.items[] | {id, price}' orders.json > slim.json\n"
            "jq -s 'map(.price) | add' slim.json\n```\n")
    assert infer_category("helper", "Does the thing.", body, []) == "data-processing"


def test_one_declared_binary_alone_is_too_weak_to_decide():
    # Changed deliberately (issue 12): a skill that only declares it needs jq says little of its work.
    assert infer_category("helper", "Does the thing.", "", ["jq"]) == UNCATEGORIZED


def test_infer_category_name_outweighs_body():
    # The body mentions curl a few times, but name and description are about archives.
    body = "Download with curl. Retry curl on failure. Check the curl exit code."
    assert infer_category("tarball-extract", "Extract a tar archive safely.", body, []) == \
        "archives-compression"


def test_infer_category_uncategorized_when_nothing_matches():
    assert infer_category("helper", "Does the thing.", "Nothing relevant here.", []) == "uncategorized"


@pytest.mark.parametrize("given, expected", [
    ("CSV", "data-processing"),
    ("csv", "data-processing"),
    ("Version Control", "git"),
    ("SQL", "databases"),
    ("DevOps", "devops"),
    ("sysadmin", "system-administration"),
])
def test_normalize_category_aliases(given, expected):
    assert normalize_category(given) == expected


@pytest.mark.parametrize("slug", CATEGORIES)
def test_normalize_category_keeps_known_slugs(slug):
    assert normalize_category(slug) == slug
    assert normalize_category(slug.upper().replace("-", " ")) == slug


def test_slugify():
    assert slugify("  Data / Processing!! ") == "data-processing"


def _skill(front_extra: str, name: str = "sqlite-report"):
    text = (f"---\nname: {name}\ndescription: Query a SQLite database.\n{front_extra}---\n"
            "# Report\n\n## Steps\n1. Open `sqlite3 app.db`.\n2. Run the query.\n")
    return build_skill(text, where="x/SKILL.md", skill_key="x", source_kind="folder",
                       source_path="x", source_ref=None, package_files=["SKILL.md"],
                       content_hash="x" * 64)


def test_build_skill_normalizes_a_given_category():
    s = _skill("metadata:\n  category: CSV\n")
    assert s.category == "data-processing"
    assert s.category_inferred is False
    s = _skill("category: Git\n")
    assert s.category == "git"
    assert s.category_inferred is False


def test_build_skill_infers_a_missing_category():
    s = _skill("")
    assert s.category == "databases"
    assert s.category_inferred is True


# ---------------------------------------------------------------- evidence, not body word counts
TUTOR_BODY = """# Mandarin Tutor

Keep a learning journal. After each session, log the new words and the tones you missed;
the logs of past sessions show which characters keep coming back. Review the log every
morning, log your streak, and read the log aloud. Access log of lessons: weekly.
"""


def test_body_words_alone_never_decide():
    # Real case: a language tutor counted under log-analysis for the word "log" in its body.
    assert infer_category("mandarin-tutor", "Practise Mandarin conversation with tone drills.",
                          TUTOR_BODY, []) == UNCATEGORIZED


def test_install_lines_say_nothing_of_the_work():
    body = ("## Installation\n```bash\npip install notes-summariser\nnpm install -g md-tools\n"
            "git clone https://example.org/notes.git\ncurl -fsSL https://example.org/install.sh | sh\n```\n"
            "## Use\nAsk for a summary of the meeting.\n")
    assert infer_category("meeting-notes", "Summarise meeting notes into action items.", body, []) == UNCATEGORIZED


def test_commands_decide_with_a_bland_name():
    body = ('```sh\nsqlite3 app.db ".tables"\nsqlite3 app.db "SELECT count(*) FROM orders"\n'
            'sqlite3 -csv app.db "SELECT * FROM orders" > orders.csv\n```\n')
    assert infer_category("daily-check", "Run the daily check.", body, []) == "databases"


def test_split_evidence_stays_uncategorized():
    # As much points at databases (SQL) as at build tooling (lint, format): no guess.
    assert infer_category("style-check", "Lint and format SQL files before review.", "", []) == UNCATEGORIZED


def test_subcommands_choose_between_categories():
    audit = "```\nnpm audit --json > audit.json\nnpm outdated\nnpm ls --all\n```\n"
    build = "```\nnpm test\nnpm run build\nnpm run lint\n```\n"
    assert infer_category("node-check", "Check the project.", audit, []) == "dependency-management"
    assert infer_category("node-check", "Check the project.", build, []) == "software-build-debug"


def test_false_friends_are_not_terms():
    assert infer_category("shell-history", "Search shell history ranked by a small neural network.", "", []) \
        == UNCATEGORIZED
    assert infer_category("crm-notes", "Log in to the CRM and log into the admin area.", "", []) == UNCATEGORIZED
    assert infer_category("replay-traffic", "Generate regression tests and widen regression coverage.", "", []) \
        == UNCATEGORIZED


def test_a_category_folder_above_the_package_counts():
    assert infer_category("orders-report", "Report on orders.", "", [], skill_key="pack/databases/orders-report") \
        == "databases"
    assert infer_category("orders-report", "Report on orders.", "", [], skill_key="pack/misc/orders-report") \
        == UNCATEGORIZED


def test_a_foreign_declared_category_is_evidence_not_the_category():
    def built(description: str, declared: str):
        return build_skill(f"---\nname: deploy-check\ndescription: {description}\ncategory: {declared}\n---\n# Check\n",
                           where="x/SKILL.md", skill_key="x", source_kind="folder", source_path="x", source_ref=None,
                           package_files=["SKILL.md"], content_hash="x" * 64)

    # A collection's own label is no category of ours; its words count like a description's.
    s = built("Check the permissions of the deploy folder.", '"Security & Verification"')
    assert (s.category, s.category_inferred) == ("security-permissions", True)
    s = built("Click through the pages of a web shop.", "Browser Automation")
    assert (s.category, s.category_inferred) == (UNCATEGORIZED, True)


def test_dev_corpus_categories_are_ours_or_uncategorized(dev_workspace_template):
    from workbench.store import skills as skill_store
    from workbench.workspace import Workspace
    skills = [s for _, s, _ in skill_store.current_skills(Workspace.open(dev_workspace_template).db)]
    cats = Counter(s.category for s in skills)
    assert set(cats) <= set(CATEGORIES) | {UNCATEGORIZED}, cats
    # Measured 393 of 1,176 with one of ours (before: 545 of ours, 568 foreign labels, often wrong).
    assert 300 <= sum(n for c, n in cats.items() if c != UNCATEGORIZED) <= 550, cats
