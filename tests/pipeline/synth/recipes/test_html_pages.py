"""html-table-extract and records-html-table: the seeded page's traps (a layout table, a
commented-out draft, a totals footer, entities and wrapped cells) and, in Docker, the oracle
passes while a one-line-wrong solution fails (those Docker cases are in test_documents.py)."""
import random
from html.parser import HTMLParser

import pytest

from pipeline.synth.recipes import REGISTRY
from pipeline.synth.recipes.base import StepContext
from pipeline.synth.recipes.formats import fmt_value
from pipeline.synth.recipes.html_pages import seed_table_page


class Cells(HTMLParser):
    """Body rows of every table (footer rows included), as a naive scraper sees them."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(" ".join(self.cell.split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


@pytest.mark.parametrize("seed", range(10))
def test_the_page_holds_the_table_among_decoys(seed):
    ctx = StepContext(random.Random(seed))
    page = seed_table_page(ctx)
    text = ctx.env[page.path[len("/app/"):]].decode()
    assert "<tfoot>" in text and 'class="layout"' in text and "<!-- <table" in text
    p = Cells()
    p.feed(text)
    data = [r for r in p.rows if len(r) == len(page.table.columns)]
    # the table's rows are there once, decoded; a footer and the layout row are extra rows a scraper must drop
    assert data[:-1] == [[fmt_value(v) for v in row] for row in page.table.rows]
    assert data[-1][0] == "Total"
    assert REGISTRY["html-table-extract"].accepts(page)


def test_only_the_seeded_page_is_an_html_table_input():
    ctx = StepContext(random.Random(1))
    records = REGISTRY["records-html-table"].seed(ctx)
    assert not REGISTRY["html-table-extract"].accepts(records)
    out = REGISTRY["records-html-table"].build(ctx, records).output
    assert out.kind == "tree" and not out.exact and not REGISTRY["html-table-extract"].accepts(out)


def test_the_published_heading_needs_escaping():
    for seed in range(12):
        ctx = StepContext(random.Random(seed))
        frag = REGISTRY["records-html-table"].build(ctx, REGISTRY["records-html-table"].seed(ctx))
        assert "<" in frag.checks[0].sentence.split("reads exactly `")[1].split("`")[0]
