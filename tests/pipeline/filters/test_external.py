"""What a skill needs from outside the machine, credentials and accounts: the needs.* rules fail
on an API key or an account in the core workflow, warn on optional use, and pass skills that only
mention them. The skill texts are written for these tests, shaped like real public skills. (Network
services, MCP, wallets and hosted platforms: test_external_services.py.)"""
from __future__ import annotations

from pipeline.filters import executable, external
from tests.pipeline.filters.rule_helpers import (assert_fails_on, assert_flagged, assert_passes, line_of, make_skill,
                                                 skill_from_text)
from workbench.models import Outcome

ALL = external.RULES


NOTION = """---
name: notion-pages
description: Search, read and update pages in a Notion workspace from the terminal.
---
# Notion pages

## Setup
1. Create an integration at https://www.notion.so/my-integrations and copy its secret.
2. Share the target pages with the integration.
3. Export the token:
   ```bash
   export NOTION_TOKEN=secret_xxx
   ```

## Usage
```bash
curl -s https://api.notion.com/v1/search -H "Authorization: Bearer $NOTION_TOKEN" \\
  -H "Notion-Version: 2022-06-28" -d '{"query": "roadmap"}' | jq '.results[].id'
```
Then read a page with `python3 scripts/notion.py read <page-id>` and update it with
`python3 scripts/notion.py append <page-id> --text "Done"`.
"""


FFMPEG_OPTIONAL_KEY = """---
name: video-trim-and-caption
description: Trim, transcode and caption video files with ffmpeg.
---
# Video trim and caption

## Steps
1. Inspect the input: `ffprobe -v error -show_streams input.mp4`.
2. Cut the clip: `ffmpeg -ss 00:01:00 -to 00:02:00 -i input.mp4 -c copy clip.mp4`.
3. Burn in subtitles from an .srt file: `ffmpeg -i clip.mp4 -vf subtitles=clip.srt out.mp4`.

## Optional: automatic transcripts
If you have an AssemblyLine key, set `ASSEMBLYLINE_API_KEY` to enable automatic transcripts;
without it the skill uses the .srt file you provide.
"""


GH_CORE = """---
name: pr-review-loop
description: Review and update open pull requests with the GitHub CLI.
---
# PR review loop

## Prerequisites
- An authenticated gh CLI (`gh auth login`) with repo scope.

## Steps
1. List the open pull requests: `gh pr list --state open --json number,title`.
2. Check out the one to review: `gh pr checkout 42`.
3. Run the tests locally: `pytest -q`.
4. Post the review: `gh pr review 42 --comment -b "Tests pass locally"`.
"""


JQ_TOKENS = """---
name: jq-json-reshaping
description: Reshape JSON files with jq filters.
---
# jq JSON reshaping

## Steps
1. Pretty-print the file: `jq . data.json`.
2. Pick fields: `jq '.items[] | {id, name}' data.json`.
3. Split a string into tokens: `jq '.text | split(" ")' data.json` — each token becomes an array item.
4. Count the tokens per record: `jq '[.[] | (.text | split(" ") | length)]' data.json`.

A parse error names the unexpected token and its position; fix the JSON and rerun.
"""


VENDOR_IN_PASSING = """---
name: csv-to-parquet
description: Convert CSV files to Parquet with DuckDB.
---
# CSV to Parquet

## Steps
1. Convert: `duckdb -c "COPY (SELECT * FROM 'in.csv') TO 'out.parquet' (FORMAT parquet)"`.
2. Check the row count: `duckdb -c "SELECT count(*) FROM 'out.parquet'"`.

The same files load into Snowflake, BigQuery or a Notion table later, but that is out of scope here.
Never commit API keys or tokens next to your data files.
"""


def _by_rule(skill) -> dict[str, object]:
    return {r.rule: r for r in (rule(skill) for rule in ALL)}


# --- api keys -----------------------------------------------------------------------------

def test_a_notion_skill_that_needs_its_token_fails_on_the_token_lines():
    skill = skill_from_text(NOTION)
    res = external.api_key(skill)
    assert_flagged(res, "needs.api_key", skill, "export NOTION_TOKEN=secret_xxx")
    saas = external.saas(skill)
    assert saas.outcome == Outcome.FAIL and "notion" in saas.evidence


def test_an_ffmpeg_skill_with_an_optional_key_only_warns():
    skill = skill_from_text(FFMPEG_OPTIONAL_KEY)
    res = external.api_key(skill)
    assert res.outcome == Outcome.WARN, res.evidence
    assert res.evidence.startswith("can optionally use") and "ASSEMBLYLINE_API_KEY" in res.evidence
    assert res.location == f"SKILL.md:{line_of(skill, 'ASSEMBLYLINE_API_KEY')}"
    for rule in ("needs.account", "needs.mcp", "needs.wallet", "needs.saas", "needs.network_service"):
        assert_passes(_by_rule(skill)[rule], rule)


def test_openclaw_requires_env_credentials_fail_with_the_metadata_as_location():
    skill = make_skill(front_extra="metadata: {openclaw: {requires: {env: [LINEAR_API_KEY, DATA_DIR]}}}")
    res = external.api_key(skill)
    assert res.outcome == Outcome.FAIL and res.location == "metadata.openclaw.requires.env"
    assert "LINEAR_API_KEY" in res.evidence and "DATA_DIR" not in res.evidence


def test_a_token_for_a_service_on_localhost_is_not_an_outside_need():
    skill = make_skill("""
        Read the token: `test -n "$HEALTH_TOKEN"`.
        Probe: `curl -H "Authorization: Bearer $HEALTH_TOKEN" http://localhost:9000/healthz`.
    """, front_extra="metadata: {openclaw: {requires: {env: [HEALTH_TOKEN]}}}")
    assert_passes(external.api_key(skill), "needs.api_key")


def test_app_secrets_and_ci_secrets_are_not_outside_credentials():
    skill = make_skill("""
        Generate the signing secret: `export JWT_SECRET=$(openssl rand -hex 32)`.
        Put `NEXTAUTH_SECRET` in `.env.local`.
        In the workflow file: `token: ${{ secrets.GITHUB_TOKEN }}`.
    """)
    assert_passes(external.api_key(skill), "needs.api_key")


def test_a_key_of_an_api_billed_by_use_is_a_paid_service_not_an_account():
    skill = make_skill("""
        ## Setup
        Get an API key at https://platform.openai.com and `export OPENAI_API_KEY=sk-...`.
    """)
    assert executable.paid_service(skill).outcome == Outcome.FAIL
    assert_passes(external.api_key(skill), "needs.api_key")   # one cause, one rule


# --- accounts -----------------------------------------------------------------------------

def test_a_github_cli_skill_whose_core_needs_gh_auth_fails():
    skill = skill_from_text(GH_CORE)
    res = external.account(skill)
    assert_flagged(res, "needs.account", skill, "An authenticated gh CLI (`gh auth login`) with repo scope.")
    assert "gh pr list" in res.evidence or "gh pr checkout" in res.evidence


def test_one_gh_command_beside_a_local_git_workflow_is_not_a_need():
    skill = make_skill("""
        ## Steps
        1. Create the worktree: `git worktree add ../feature -b feature`.
        2. Run the baseline tests there: `cd ../feature && pytest -q`.
        3. When done, you may open a PR with `gh pr create` if the user asks.
    """, steps="")
    assert external.account(skill).outcome != Outcome.FAIL


def test_oauth_credentials_and_a_vendor_account_fail():
    skill = make_skill("""
        ## Setup
        1. Create OAuth 2.0 client credentials in the Google Cloud console and save `credentials.json`.
        2. Sign in with your Google account when the browser opens.
    """)
    assert_flagged(external.account(skill), "needs.account", skill, "Create OAuth 2.0 client credentials")


def test_a_linux_user_or_service_account_is_not_an_outside_account():
    skill = make_skill("""
        ## Create a service account
        1. Create the account: `sudo useradd --system --no-create-home backup`.
        2. Give it the folder: `sudo chown -R backup: /srv/backup`.
    """)
    assert_passes(external.account(skill), "needs.account")


# --- JSON tokens, vendors in passing, advice ------------------------------------------------

def test_a_jq_skill_about_json_tokens_needs_nothing_from_outside():
    skill = skill_from_text(JQ_TOKENS)
    for rule, res in _by_rule(skill).items():
        assert_passes(res, rule)
    assert executable.paid_service(skill).outcome == Outcome.PASS


def test_a_self_contained_skill_naming_vendors_in_passing_passes():
    skill = skill_from_text(VENDOR_IN_PASSING)
    for rule, res in _by_rule(skill).items():
        assert_passes(res, rule)


# --- keys and accounts in context: one line, a cloud login, a remark, CI files ----------------

def test_an_optional_extra_on_the_same_line_does_not_make_the_key_optional():
    skill = make_skill("""
        ## Prerequisites
        Tracker account and API key; Python 3.11; optional `tracker-cli` extras
    """)
    res = external.api_key(skill)
    assert res.outcome == Outcome.FAIL, res.evidence


def test_a_developer_or_cloud_account_the_workflow_logs_in_to_fails():
    skill = make_skill("""
        ## Steps
        1. Run `eas build --platform ios`: this logs in to the Apple Developer account and registers the app.
        2. Sync the backups to a supported cloud storage account with `rclone sync backups remote:`.
    """)
    res = external.account(skill)
    assert_fails_on(res, "needs.account", skill, "logs in to the Apple Developer account")
    assert "cloud storage account" in res.evidence


def test_one_bare_token_in_an_example_is_a_remark_and_no_keys_required_is_no_need():
    remark = make_skill("""
        ## Steps
        1. Write the rule to `rules/sql.yaml` and test it: `semgrep --config rules/sql.yaml src/`.
        2. Run it on the fixtures: `semgrep --config rules/ tests/fixtures/ --json > out.json`.

        In CI the same rules run as `docker run -e SEMGREP_APP_TOKEN --rm semgrep/semgrep semgrep ci`.
    """, steps="")
    res = external.api_key(remark)
    assert res.outcome == Outcome.PASS and "in passing" in res.evidence
    free = make_skill("- No API keys required — all research is done with local files.")
    assert_passes(external.api_key(free), "needs.api_key")
    needed = make_skill("Run `LINEAR_API_KEY=xxx npx tsx scripts/bulk-create.ts issues.csv`.")
    assert external.api_key(needed).outcome == Outcome.FAIL   # setting the key is a need, said once


def test_a_ci_file_the_skill_writes_and_a_branch_name_are_not_outside_needs():
    ci = make_skill("""
        ## Steps
        1. Write `.gitlab-ci.yml`:
           ```yaml
           deploy:
             script:
               - docker push $IMAGE_NAME:$IMAGE_TAG
               - kubectl rollout status deployment/web
           ```
        2. Validate it: `gitlab-ci-lint .gitlab-ci.yml`.
    """, steps="")
    assert_passes(external.network_service(ci), "needs.network_service")
    branch = make_skill("Name branches after the task: `fix login bug` becomes `fix/login-bug`.")
    assert external.account(branch).outcome == Outcome.PASS
