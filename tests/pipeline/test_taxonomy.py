"""Category inference and normalisation."""
from __future__ import annotations

import pytest

from pipeline.ingest.skill_builder import build_skill
from pipeline.taxonomy import CATEGORIES, infer_category, normalize_category, slugify


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


def test_infer_category_from_binaries_alone():
    assert infer_category("helper", "Does the thing.", "", ["jq"]) == "data-processing"


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
