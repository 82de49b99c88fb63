"""Where a SKILL.md line stands: its section, code, optional or advice context."""
from __future__ import annotations

from pipeline.filters.line_context import optional_at, skill_lines

TEXT = """---
name: demo
description: Kubernetes troubleshooting.
---
# Kubernetes Troubleshooting

## Prerequisites
- kubectl with a kubeconfig

## Optional: dashboards
- Grafana for charts

## Security
- Never commit your kubeconfig token.

```bash
# optional, for the metrics step
export METRICS_TOKEN=x
export OTHER=y
```
"""


def _line(text: str, fragment: str):
    return next(ln for ln in skill_lines(text) if fragment in ln.text)


def test_the_title_heading_does_not_make_a_skill_secondary_or_advice():
    ln = _line(TEXT, "kubectl with a kubeconfig")   # "Troubleshooting" is the H1 title, not a side section
    assert not ln.secondary and not ln.advice and not ln.optional and ln.setup
    assert ln.heading == "Kubernetes Troubleshooting / Prerequisites"


def test_optional_sections_advice_and_lead_in_comments():
    assert _line(TEXT, "Grafana for charts").optional
    assert _line(TEXT, "Never commit").advice
    token = _line(TEXT, "export METRICS_TOKEN")
    assert token.in_code and token.optional          # the comment just above says so
    assert not _line(TEXT, "export OTHER").optional  # ...for that one line only
    assert _line(TEXT, "description:").in_front_matter


def test_optional_is_read_in_the_clause_around_the_find():
    text = "E2B account and API key; Python SDK; optional code-interpreter extras"
    assert not optional_at(text, 0, 11)
    assert optional_at(text, text.index("code-interpreter"), len(text))
    assert optional_at("If you have a key, set `X_API_KEY` to enable transcripts.", 24, 33)
