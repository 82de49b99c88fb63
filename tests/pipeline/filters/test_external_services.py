"""What a skill needs from outside the machine, services: a database or cluster it only talks to,
MCP servers, wallets and hosted platforms fail in the core workflow and pass where the skill runs
the thing itself or only names it. The skill texts are written for these tests, shaped like real
public skills."""
from __future__ import annotations

from pipeline.filters import external
from tests.pipeline.filters.rule_helpers import assert_fails_on, assert_flagged, assert_passes, make_skill, skill_from_text
from workbench.models import Outcome

POSTGRES_SERVER = """---
name: postgres-slow-query-triage
description: Find and explain slow queries on a production PostgreSQL server.
---
# Slow query triage

## Prerequisites
- Access to the production PostgreSQL server (read-only role).

## Steps
1. Connect: `psql -h db.internal.example.com -U readonly -d app`.
2. List the slowest statements: `psql -h db.internal.example.com -U readonly -d app -c "SELECT query FROM pg_stat_statements ORDER BY mean_exec_time DESC LIMIT 10"`.
3. Explain the worst one with `EXPLAIN (ANALYZE, BUFFERS)` and note the plan.
"""


POSTGRES_LOCAL = """---
name: postgres-local-sandbox
description: Load a CSV into a throwaway local PostgreSQL and query it.
---
# Local Postgres sandbox

## Steps
1. Start a server: `docker run -d --name pg -e POSTGRES_PASSWORD=pw -p 5432:5432 postgres:16`.
2. Load the file: `psql -h localhost -U postgres -c "\\copy sales FROM 'sales.csv' CSV HEADER"`.
3. Query it: `psql -h localhost -U postgres -c "SELECT region, sum(amount) FROM sales GROUP BY 1"`.
"""


MCP_ONLY = """---
name: tracker-triage
description: Triage issues in the team tracker through its MCP server.
allowed-tools: mcp__tracker__search_issues, mcp__tracker__update_issue
---
# Tracker triage

Connect the Tracker MCP server (https://mcp.tracker.example.com/sse) in your client first.

## Steps
1. Call `mcp__tracker__search_issues` with `status: open`.
2. For each issue without a label, call `mcp__tracker__update_issue` with the label you pick.
"""


MCP_BUILD = """---
name: build-a-weather-mcp-server
description: Build and test a small MCP server in Python with FastMCP.
---
# Build an MCP server

## Steps
1. Create the project: `uv init weather && cd weather && uv add fastmcp`.
2. Write `server.py` with one tool that reads `data/weather.csv`.
3. Test the server with the MCP inspector: `npx @modelcontextprotocol/inspector python server.py`.
"""


MCP_DOCS_HELPER = """---
name: chart-scaffolder
description: Scaffold a Helm chart and validate it locally.
---
# Chart scaffolder

## Steps
1. Scaffold: `helm create mychart`.
2. Only if custom resources are in scope, look the CRD up:
   - `mcp__context7__query-docs`
   - fallback: the operator's documentation
3. Validate: `helm lint mychart && helm template mychart > rendered.yaml`.
"""


WALLET = """---
name: token-swap-bot
description: Swap tokens on a DEX from the command line.
---
# Token swap

## Setup
- A funded wallet on Base and its private key in `WALLET_PRIVATE_KEY`.
- An RPC endpoint: `export RPC_URL=https://mainnet.base.org`.

## Steps
1. Quote the swap: `node swap.js quote --from USDC --to ETH --amount 50`.
2. Sign and send the transaction through the RPC: `node swap.js execute --slippage 0.5`.
"""


CONTRACT_REVIEW = """---
name: token-contract-review
description: Review a token contract's source for common vulnerabilities with static analysis.
---
# Token contract review

## Steps
1. Run the analyzer: `slither contracts/ --json report.json`.
2. Check that transfers validate the sender against the stored jetton wallet address.
3. Summarise the findings from `report.json` with `jq '.results.detectors[].check' report.json`.
"""


# --- network services -------------------------------------------------------------------------

def test_a_skill_that_talks_to_a_postgres_server_it_does_not_run_fails():
    skill = skill_from_text(POSTGRES_SERVER)
    res = external.network_service(skill)
    assert_fails_on(res, "needs.network_service", skill, "Access to the production PostgreSQL server")
    assert "psql -h db.internal.example.com" in res.evidence


def test_a_postgres_the_skill_starts_itself_on_localhost_passes():
    assert_passes(external.network_service(skill_from_text(POSTGRES_LOCAL)), "needs.network_service")


def test_kubectl_against_a_live_cluster_fails_and_a_kind_cluster_passes():
    live = make_skill("""
        ## Triage
        ```bash
        kubectl get pods -A --field-selector status.phase!=Running
        kubectl describe pod web-1 -n shop
        kubectl logs web-1 -n shop --previous
        ```
    """)
    assert_flagged(external.network_service(live), "needs.network_service", live, "kubectl get pods -A")
    local = make_skill("""
        1. Start a cluster: `kind create cluster --name t`.
        2. `kubectl apply -f deploy.yaml` and `kubectl get pods`.
    """)
    assert_passes(external.network_service(local), "needs.network_service")


# --- MCP --------------------------------------------------------------------------------------

def test_an_mcp_only_skill_fails():
    skill = skill_from_text(MCP_ONLY)
    res = external.mcp(skill)
    assert res.outcome == Outcome.FAIL and "mcp__tracker__search_issues" in res.evidence
    # without the allowed-tools line the text alone says it
    text_only = skill_from_text(MCP_ONLY.replace("allowed-tools: mcp__tracker__search_issues, mcp__tracker__update_issue\n", ""))
    assert_fails_on(external.mcp(text_only), "needs.mcp", text_only, "Connect the Tracker MCP server")


def test_building_an_mcp_server_is_local_work():
    assert_passes(external.mcp(skill_from_text(MCP_BUILD)), "needs.mcp")


def test_a_documentation_lookup_through_mcp_with_a_fallback_is_no_need():
    skill = skill_from_text(MCP_DOCS_HELPER)
    assert external.mcp(skill).outcome == Outcome.PASS


def test_mcp_tools_declared_in_allowed_tools_fail():
    skill = make_skill(front_extra="allowed-tools: Read, mcp__crm__create_contact, mcp__crm__list_deals")
    res = external.mcp(skill)
    assert res.outcome == Outcome.FAIL and "mcp__crm__create_contact" in res.evidence, res.evidence
    assert res.location == "front matter allowed-tools"


# --- wallets ----------------------------------------------------------------------------------

def test_a_wallet_skill_fails_on_the_wallet_lines():
    skill = skill_from_text(WALLET)
    assert_flagged(external.wallet(skill), "needs.wallet", skill, "A funded wallet on Base")


def test_reviewing_contract_code_that_names_a_wallet_address_passes():
    assert_passes(external.wallet(skill_from_text(CONTRACT_REVIEW)), "needs.wallet")


def test_advice_about_wallet_keys_is_not_a_need():
    skill = make_skill("Never send secrets, credentials or wallet private keys to the endpoint.")
    assert_passes(external.wallet(skill), "needs.wallet")


# --- SaaS ---------------------------------------------------------------------------------------

def test_deploying_to_a_hosted_platform_fails_as_saas():
    skill = make_skill("""
        ## Deploy
        1. Build: `npm run build`.
        2. Deploy the site: `netlify deploy --prod --dir dist`.
        3. Open the Netlify dashboard to check the deploy log.
    """, description="Build a static site and deploy it to Netlify.")
    res = external.saas(skill)
    assert_fails_on(res, "needs.saas", skill, "netlify deploy --prod --dir dist")
    assert "netlify" in res.evidence.lower()
