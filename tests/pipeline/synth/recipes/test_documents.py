"""markdown-link-check and markdown-outline: the Markdown model on texts written here (headings
and links in code, anchors as GitHub makes them, broken files and anchors) and their fit for a
markdown skill. In Docker, for every document family (here, html_pages and reports): the
oracle passes, a one-line-wrong solution fails the test that checks what it got wrong."""
import random

import pytest

from pipeline.synth.recipes import REGISTRY
from pipeline.synth.recipes.base import Artifact, StepContext
from pipeline.synth.recipes.documents import anchor_of, broken_links, headings, links, seed_docs
from pipeline.synth.skill_fit import SkillParts, fitting_tiers
from tests.pipeline.synth.recipes.broken_solution import oracle_passes_and_broken_fails

GUIDE = """# Install `agent` guide

See [setup](#step-1-prepare-the-host) and [gone](#no-such-part).

## Step 1: Prepare the `host`

Read [the backup page](../ops/backup.md#restore-steps) and [typo](../ops/backups.md).
Vendor: [docs](https://example.org/x) and [mail](mailto:ops@example.com); code `[x](nowhere.md)` is no link.

```bash
# Not a heading
cat [draft](missing.md)
```

## Notes
## Notes
## Limits & quotas (v2.x)
"""
BACKUP = "# Backup\n\n## Restore steps\n\nBack to [install](../guide/install.md#notes-1) and [bad](../guide/install.md#notes-2).\n"


def tree(*files) -> Artifact:
    return Artifact("tree", "/app/input/docs", fmt="dir", files=tuple((p, t.encode()) for p, t in files), label="docs")


def test_headings_follow_githubs_anchor_rule_and_skip_code_blocks():
    got = headings(GUIDE)
    assert [(lvl, title, anc) for _, lvl, title, anc in got] == [
        (1, "Install agent guide", "install-agent-guide"),
        (2, "Step 1: Prepare the host", "step-1-prepare-the-host"),
        (2, "Notes", "notes"), (2, "Notes", "notes-1"),
        (2, "Limits & quotas (v2.x)", "limits--quotas-v2x")]
    assert anchor_of("Troubleshooting (v2.x)") == "troubleshooting-v2x"


def test_links_outside_code_only():
    targets = [t for _, t in links(GUIDE)]
    assert "missing.md" not in targets and "nowhere.md" not in targets
    assert targets == ["#step-1-prepare-the-host", "#no-such-part", "../ops/backup.md#restore-steps",
                       "../ops/backups.md", "https://example.org/x", "mailto:ops@example.com"]


def test_broken_links_name_missing_files_and_anchors():
    checked, bad = broken_links(tree(("guide/install.md", GUIDE), ("ops/backup.md", BACKUP)))
    assert checked == 6
    assert bad == [("guide/install.md", 3, "#no-such-part", "missing-anchor"),
                   ("guide/install.md", 7, "../ops/backups.md", "missing-file"),
                   ("ops/backup.md", 5, "../guide/install.md#notes-2", "missing-anchor")]


@pytest.mark.parametrize("seed", range(30))
def test_seeded_docs_always_give_both_families_work(seed):
    ctx = StepContext(random.Random(seed))
    docs = seed_docs(ctx)
    assert REGISTRY["markdown-link-check"].accepts(docs) and REGISTRY["markdown-outline"].accepts(docs)
    problems = {p for *_, p in broken_links(docs)[1]}
    assert problems == {"missing-file", "missing-anchor"}
    frag = REGISTRY["markdown-link-check"].build(ctx, docs)
    assert frag.output.kind == "records" and frag.output.table.rows == tuple(broken_links(docs)[1])


def test_a_tree_without_markdown_links_is_not_taken():
    plain = tree(("a.md", "# A\n\ntext\n"), ("b.md", "# B\n\n## C\n\n## D\n"))
    assert not REGISTRY["markdown-link-check"].accepts(plain)
    assert REGISTRY["markdown-outline"].accepts(plain)
    assert not REGISTRY["markdown-outline"].accepts(tree(("a.md", "# A, b\n## C\n## D\n"), ("b.md", "# E\n")))


def test_the_index_reads_any_tree_it_can_link_to():
    index = REGISTRY["markdown-index"]
    report = Artifact("tree", "/app/reports", fmt="dir", files=(("x_summary.md", b"# S\n"),), exact=False)
    assert index.accepts(report) and not index.accepts(tree(("my notes.md", "# A\n")))
    frag = index.build(StepContext(random.Random(2)), report)
    assert "/app/reports" in frag.checks[0].sentence and frag.output.kind == "tree"


def test_a_markdown_skill_is_offered_the_document_families():
    parts = SkillParts(tools=("markdownlint",), consumes=("markdown-doc",))
    offered = {r.name for tier in fitting_tiers(list(REGISTRY.values()), parts, "documentation") for r in tier}
    assert {"markdown-link-check", "markdown-outline", "markdown-report", "markdown-index"} <= offered


def test_phrasing_varies_between_tasks():
    intros, titles = set(), set()
    for seed in range(20):
        ctx = StepContext(random.Random(seed))
        frag = REGISTRY["markdown-link-check"].build(ctx, seed_docs(ctx))
        intros.add(frag.intro.split("`")[0])
        titles.add(frag.title)
    assert len(intros) >= 3 and len(titles) >= 3


# (chain, a line of the oracle, the wrong line, a test that must fail, a test that must still pass or None)
BROKEN = [
    (["markdown-link-check", "table-filter-sort"], '.lower()).replace(" ", "-")', '.lower()).replace(" ", "_")',
     "test_s1_rows", "test_s1_docs_kept"),
    (["markdown-outline", "group-aggregate"], '.lower()).replace(" ", "-")', '.lower()).replace(" ", "")',
     "test_s1_anchors", "test_s1_text"),
    (["html-table-extract", "group-aggregate"], "self.foot = True", "self.foot = False",
     "test_s1_no_footer", None),      # with the footer in, every row check fails
    (["table-filter-sort", "records-html-table"], '"<h1>" + html.escape(', '"<h1>" + str(',
     "test_s2_heading", "test_s2_rows"),
    (["html-table-extract", "markdown-report"], "key=lambda kv: (-round(kv[1][1], 2), str(kv[0])))",
     "key=lambda kv: str(kv[0]))", "test_s2_by_group", "test_s2_total"),
    (["markdown-report", "markdown-index"], "({os.path.getsize(full)} bytes)", "({len(rel)} bytes)",
     "test_s2_sizes", "test_s2_links"),
]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("chain,old,new,fails,passes", BROKEN, ids=["link-check-anchor-rule", "outline-anchors", "extract-keeps-footer",
                                                                    "publish-unescaped", "report-unordered",
                                                                    "index-wrong-sizes"])
def test_a_one_line_wrong_solution_fails(chain, old, new, fails, passes):
    failed = oracle_passes_and_broken_fails(chain, old, new)
    assert fails in failed and (passes is None or passes not in failed), failed
