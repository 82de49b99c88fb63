"""Near-duplicates in a templated collection: template text does not count, a real copy still
fails naming its closest original, and a huge bucket costs linear work."""
from __future__ import annotations

import random

from pipeline.filters import near_duplicate as nd
from pipeline.filters import runner
from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome

# A registry page generator's frame, shaped like the real ones (written for this test): the
# same headings, install notes and footer around each tool's own description.
FRAME = """# {title}

{description}

## Installation

Requirements and caveats from upstream:
- Install the tool with your system package manager or download a release binary for your platform.
- The project provides official distributions as release archives, container images and native packages.

Basic usage or getting-started notes:
- Contributors should read the handbook before they change the build scripts or the release notes.
- Run the command with the help flag to list every subcommand and option it accepts.

## Source

- Listed on the Tool Registry, a catalogue of agent skills generated from upstream documentation.
- Extracted from the upstream README and reviewed for security before it was published here.
"""

TOOLS = ["jq", "sqlite3", "rsync", "tar", "ffmpeg", "pandoc", "rg", "fd", "gzip", "zstd", "xsv", "yq",
         "awk", "sed", "curl", "git", "make", "cmake", "gdb", "strace", "lsof", "htop", "tmux", "openssl"]
VERBS = ["filter", "convert", "compress", "validate", "summarise", "index", "split", "merge",
         "rename", "search", "profile", "trace"]
NOUNS = ["records", "archives", "logs", "tables", "documents", "images", "reports", "configs",
         "backups", "repositories", "certificates", "datasets"]


def _description(rng: random.Random, tool: str) -> str:
    """Two sentences of a tool's own: words drawn so two skills rarely share a 3-gram."""
    parts = []
    for _ in range(2):
        parts.append(f"Use {tool} to {rng.choice(VERBS)} {rng.choice(NOUNS)} "
                     f"{rng.choice(['quickly', 'in place', 'from a pipe', 'in batches', 'by pattern'])} "
                     f"and {rng.choice(VERBS)} the {rng.choice(NOUNS)} {rng.choice(['found', 'left', 'kept'])} "
                     f"step {rng.randint(1, 999)} of {rng.randint(1, 999)}.")
    return " ".join(parts)


def templated_corpus(n: int, seed: int = 7) -> list[nd.DedupItem]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        tool = TOOLS[i % len(TOOLS)]
        title = f"{tool.upper()} {rng.choice(VERBS).title()} Agent {i}"
        text = FRAME.format(title=title, description=_description(rng, tool))
        items.append(nd.DedupItem(f"s{i}", f"'{title}' (registry/skills/s{i})", text, (i,), f"registry/skills/s{i}"))
    return items


def test_skills_made_from_one_template_are_not_duplicates_of_each_other():
    items = templated_corpus(80)
    # The frame is most of each text: compared whole, any two look alike.
    whole = nd.jaccard(nd.shingles(items[3].text), nd.shingles(items[41].text))
    assert whole >= nd.THRESHOLD

    res = nd.find_near_duplicates(items)

    assert all(r.outcome == Outcome.PASS for r in res.values()), \
        [r.evidence for r in res.values() if r.outcome != Outcome.PASS][:3]
    ev = res["s5"].evidence
    assert ev.startswith("made from a template: ")
    assert "the template shared by 80 skills in registry/skills/ (headings: Installation, Source)" in ev
    assert "no other skill shares ≥60% of the rest" in ev


def test_a_copy_with_small_edits_fails_naming_its_original_and_the_template():
    items = templated_corpus(80)
    original = items[17]
    edited = original.text.replace("Use ", "Try ", 1).replace(" and ", " then ", 1)
    copy = nd.DedupItem("copy", "'Copied Agent' (registry/skills/copied)", edited, (100,), "registry/skills/copied")

    res = nd.find_near_duplicates([*items, copy])

    dup = res["copy"]
    assert dup.outcome == Outcome.FAIL
    assert dup.location == "s17"
    assert dup.evidence.startswith(f"near-duplicate of {original.label}, ingested earlier: ")
    assert "of distinctive word 3-grams shared" in dup.evidence
    assert "are the template shared by 81 skills in registry/skills/" in dup.evidence
    assert res["s17"].evidence == "kept; near-duplicates set aside: 'Copied Agent' (registry/skills/copied)"
    assert sum(r.outcome == Outcome.FAIL for r in res.values()) == 1


def test_the_closest_older_member_is_named_not_the_first():
    items = templated_corpus(60)
    base = items[30]
    close = base.text.replace("Use ", "Try ", 1)
    closer = close.replace("step ", "stage ", 1)
    a = nd.DedupItem("a", "'A' (registry/skills/a)", close, (200,), "registry/skills/a")
    b = nd.DedupItem("b", "'B' (registry/skills/b)", closer, (201,), "registry/skills/b")

    res = nd.find_near_duplicates([*items, a, b])

    assert res["a"].location == "s30"
    assert res["b"].location == "a"  # b is closer to a (one edit) than to s30 (two)
    assert "near-duplicate of 'A' (registry/skills/a)" in res["b"].evidence


def test_a_huge_bucket_costs_linear_exact_checks(monkeypatch):
    # 1,500 copies of one text all land in every band's bucket: all pairs would be 1.1 M checks.
    calls = []
    real = nd.jaccard
    monkeypatch.setattr(nd, "jaccard", lambda a, b: calls.append(1) or real(a, b))
    text = templated_corpus(1)[0].text
    n = 1500
    items = [nd.DedupItem(f"c{i}", f"'Copy {i}' (c/{i})", text, (i,), f"c/{i}") for i in range(n)]

    res = nd.find_near_duplicates(items)

    assert len(calls) <= n * nd.BUCKET_CHECKS
    assert res["c0"].outcome == Outcome.PASS
    fails = [r for sid, r in res.items() if sid != "c0"]
    assert all(r.outcome == Outcome.FAIL and r.location == "c0" for r in fails)
    assert "100% of word 3-grams shared" in fails[0].evidence


def test_runner_names_the_collection_from_skill_keys():
    def parsed(i: int, text: str):
        md = f"---\nname: tool-{i}\ndescription: Tool number {i}.\n---\n{text}"
        return build_skill(md, where=f"hub/tools/t{i}/SKILL.md", skill_key=f"hub/tools/t{i}", source_kind="folder",
                           source_path=f"hub/tools/t{i}", source_ref=None, package_files=["SKILL.md"],
                           content_hash=f"{i:064d}")

    skills = [(f"id{i}", parsed(i, it.text), (i,)) for i, it in enumerate(templated_corpus(30))]
    verdicts = {v.skill_id: v for v in runner.check_duplicates(skills)}
    assert all(v.outcome == Outcome.PASS for v in verdicts.values())
    assert "the template shared by 30 skills in hub/tools/" in verdicts["id4"].evidence
