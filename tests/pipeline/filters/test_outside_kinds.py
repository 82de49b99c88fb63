"""Kinds of outside need beyond accounts and servers: a device or LAN service, probes of real
hosts, a web API named as the skill's core, a hosted forge's CLI, a live chain's RPC, and work
inside another agent's runtime. Positive and negative cases each."""
from __future__ import annotations

from pipeline.filters import outside_kinds as kinds
from tests.pipeline.filters.rule_helpers import assert_passes, make_skill
from workbench.models import Outcome


def _fails_on(res, rule: str, fragment: str) -> None:
    assert res.rule == rule and res.outcome == Outcome.FAIL, res.evidence
    assert fragment in res.evidence and res.location.startswith("SKILL.md:")


def test_a_printer_and_smart_lights_on_the_lan_are_devices():
    skill = make_skill("""
        ## Print the report
        Send the PDF to the office printer with `lp -d office report.pdf`.
        Then dim the Philips Hue lights in the meeting room through the Hue bridge.
    """)
    _fails_on(kinds.device(skill), "needs.device", "office printer")


def test_files_about_devices_or_an_optional_printout_are_not_a_device_need():
    skill = make_skill("""
        ## Notes
        The parser reads CSV exports of thermostat readings from `data/`.
        Optionally print the summary on a printer if you have one.
    """)
    res = kinds.device(skill)     # one mention of a device is no need; an optional one is left to a person
    assert res.outcome == Outcome.WARN and "can optionally use" in res.evidence and "thermostat" not in res.evidence


def test_dns_and_tls_probes_of_real_domains_need_the_network():
    skill = make_skill("""
        ## Check the mail setup
        ```bash
        dig txt _dmarc.<domain> +short
        dig mx <domain> +short
        openssl s_client -connect mail.example.org:465 </dev/null
        ```
    """)
    _fails_on(kinds.live_target(skill), "needs.live_target", "dig txt _dmarc")


def test_probing_localhost_or_a_single_passing_lookup_is_local():
    skill = make_skill("""
        ## Verify the local server
        ```bash
        openssl s_client -connect localhost:8443 </dev/null
        nmap -p 8443 127.0.0.1
        ```
        Identify the owner of an address if needed: `whois 203.0.113.45`.
    """)
    assert_passes(kinds.live_target(skill), "needs.live_target")


def test_a_description_that_works_through_a_rest_api_is_left_to_a_person():
    skill = make_skill(description="Pulls build logs through the Jenkins REST API and summarises failed stages.")
    res = kinds.remote_api(skill)
    assert res.rule == "needs.remote_api" and res.outcome == Outcome.WARN and "Jenkins REST" in res.evidence
    assert res.location == "SKILL.md:3"


def test_a_skill_that_builds_an_api_or_uses_a_library_api_is_not_remote():
    for desc in ("Design and implement a REST API for a todo app with FastAPI and pytest.",
                 "Fix lint errors with the ESLint Node.js API and a flat config file."):
        assert_passes(kinds.remote_api(make_skill(description=desc)), "needs.remote_api")


def test_glab_against_the_remote_is_a_hosted_cli():
    skill = make_skill("""
        ## Review
        ```bash
        glab mr list --assignee=@me
        glab ci view 1234
        ```
    """)
    _fails_on(kinds.hosted_cli(skill), "needs.hosted_cli", "glab mr list")


def test_local_git_is_not_a_hosted_cli():
    skill = make_skill("""
        ```bash
        git log --oneline -20
        git rebase -i HEAD~3
        ```
    """)
    assert_passes(kinds.hosted_cli(skill), "needs.hosted_cli")


def test_json_rpc_calls_to_a_live_chain():
    skill = make_skill("""
        ```bash
        cast balance 0xabc --rpc-url $ETH_RPC_URL
        curl -X POST $ETH_RPC_URL -d '{"method":"eth_getBalance","params":["0xabc","latest"]}'
        ```
    """)
    _fails_on(kinds.live_chain(skill), "needs.live_chain", "cast balance")


def test_a_local_contract_test_is_not_a_live_chain():
    skill = make_skill("""
        ```bash
        forge build
        forge test -vv
        ```
    """)
    assert_passes(kinds.live_chain(skill), "needs.live_chain")


def test_work_done_by_dispatching_subagents_runs_in_the_agent_runtime():
    skill = make_skill(steps="""
        # Research fan-out
        1. Split the question into sub-questions and create a task for each with TaskCreate.
        2. Dispatch one subagent per sub-question through the Agent tool, in parallel.
        3. When every subagent returns, message the user with the synthesis.
    """)
    _fails_on(kinds.agent_runtime(skill), "workflow.agent_runtime", "TaskCreate")


def test_shell_work_that_mentions_a_subagent_once_passes():
    skill = make_skill(steps="""
        # Bisect a regression
        1. Run `git bisect start HEAD v1.4.0`.
        2. Run `git bisect run pytest tests/test_parser.py -x`.
        3. Run `git bisect reset`.
        A subagent may review the diff afterwards.
    """)
    assert_passes(kinds.agent_runtime(skill), "workflow.agent_runtime")


def test_a_description_whose_core_step_asks_a_hosted_model_is_a_paid_service():
    for desc in ("Use LLM-assisted harness generation to expand fuzz coverage for C projects.",
                 "Browser automation that combines natural-language actions with Playwright code."):
        res = kinds.model_api(make_skill(description=desc))
        assert res.rule == "needs.model_api" and res.outcome == Outcome.FAIL, desc
        assert res.location == "SKILL.md description" and desc[:30] in res.evidence


def test_a_local_optional_or_merely_mentioned_model_is_no_paid_service():
    for desc in ("Convert PDFs to Markdown locally, with optional LLM-assisted table repair.",
                 "Run LLM-assisted code review with a local model served by Ollama.",
                 "Review AI-generated code changes in a local git repository before merging.",
                 "Generate llms.txt index files for a documentation folder."):
        assert_passes(kinds.model_api(make_skill(description=desc)), "needs.model_api")
