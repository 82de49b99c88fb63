"""Credential names of outside services, and vendors billed by use."""
from __future__ import annotations

from pipeline.filters.credentials import credential_vars, metered


def test_credential_vars_name_outside_credentials_not_app_secrets_or_flags():
    assert credential_vars("export NOTION_TOKEN=x and AWS_SECRET_ACCESS_KEY") == ("NOTION_TOKEN", "AWS_SECRET_ACCESS_KEY")
    assert credential_vars("JWT_SECRET, NEXTAUTH_SECRET, HF_HUB_DISABLE_IMPLICIT_TOKEN, SECRET_KEY") == ()
    assert credential_vars("token: ${{ secrets.GITHUB_TOKEN }}") == ()       # a CI file the skill writes
    assert credential_vars("split the text into tokens; TOKEN alone") == ()


def test_metered_vendors_by_key_name_or_phrase_but_not_in_links():
    assert metered("export OPENAI_API_KEY=sk-...") and metered("needs an E2B API key")
    assert metered("GOOGLE_AI_API_KEY") and not metered("OUTLINE_API_KEY")
    assert not metered("Source: https://github.com/openai/skills/tree/main/skills/gh-fix-ci")
    assert not metered("the exam token")
