"""Kinds of outside need the account/API-key/server rules (external.py) do not look for, each its
own rule and reason (issue 25: the wrong accepts of real corpora fell into these kinds):

- needs.device: a physical device or a LAN service (a printer, smart lights, an e-ink display,
  Home Assistant, an MQTT broker, a serial or Bluetooth device);
- needs.live_target: network probes against real hosts (dig, whois, openssl s_client, nmap ...):
  offline they have nothing to probe;
- needs.remote_api: the skill's own description says its work goes through a web API (a REST or
  GraphQL API, "API v2", endpoints) of a server it does not run;
- needs.hosted_cli: the CLI of a hosted forge against its remote (glab mr/ci/cluster/api ...);
- needs.live_chain: JSON-RPC calls to a live chain (eth_*, --rpc-url, an RPC_URL);
- needs.model_api: the description says the core step asks a language model (LLM-assisted
  generation, natural-language actions, a hosted model) and names no local model: a provider
  billed by use;
- workflow.agent_runtime: the work runs inside another agent's runtime (spawning sub-agents, the
  Agent/Task/Skill tools, session tools, messaging the user) rather than in a shell.

Each separates need from mention the way external.py does: optional and advice lines are not
needs; a need fails on enough core lines, warns on optional ones."""
from __future__ import annotations

import re

from pipeline.filters.base import RuleResult, passed
from pipeline.filters.external import _hits, _lines, _verdict
from pipeline.filters.workflow import concrete_commands, skill_commands
from workbench.models import Outcome, ParsedSkill

_DEVICE = re.compile(
    r"\b(printers?|ipps?://|lpadmin|smart (plugs?|bulbs?|lights?|home|switch(es)?)|philips hue|hue bridge|"
    r"home ?assistant|zigbee|z-wave|matter devices?|mqtt broker|e-?ink (display|screen)s?|e-?paper|"
    r"thermostats?|iot devices?|esp32|esp8266|raspberry pi'?s? gpio|gpio pins?|/dev/tty(usb|acm)\d*|"
    r"serial port|bluetooth|ble devices?|on (your|the) (lan|local network)|local network devices?)\b", re.I)
# (a bare private IP is no device: security and firewall texts are full of example addresses)
_PROBE = re.compile(
    r"(^|`|\$\s|\|\s*)\s*(dig|whois|nslookup|host|nmap|masscan|traceroute|mtr|ping)\s+(-\S+\s+|\+\w+\s+|[a-z]{1,5}\s+)*"
    r"(\S*(<[\w-]+>|\$\{?\w+\}?)\S*|[\w-]+(\.[\w-]+)+)|"
    r"\bopenssl\s+s_client\b[^\n]*-connect\s+(?!localhost|127\.)\S+|\bcrt\.sh\b|\bsubfinder\b|\bamass\s+enum\b", re.I)
# a probe of this machine or of a server the skill starts itself is local
_LOCAL_TARGET = re.compile(r"\b(localhost|127\.0\.0\.1|::1|0\.0\.0\.0)\b", re.I)
_REMOTE_API = re.compile(
    r"\b(REST|GraphQL|HTTP|JSON:API|web)( and [\w -]{1,30})? APIs?\b|\bAPIs? v\d\b|\bv\d+ APIs?\b|"
    r"\bAPI endpoints?\b|\b[A-Z][\w.-]* REST\b|\b(REST|HTTP) endpoints?\b|/api/v\d")
# the skill builds or mocks an API itself: local work
_BUILDS_API = re.compile(r"\b(build|design|implement|scaffold|mock|generate|document|write|create|serve|test)\w*\s+"
                         r"((an?|the|your|our|its)\s+)?([\w-]+\s+){0,2}((REST|GraphQL|HTTP|web)\s+)?(APIs?|endpoints?)\b|"
                         r"\bopenapi\b|\bswagger\b", re.I)
_HOSTED_CLI = re.compile(r"\bglab\s+(mr|issue|ci|cluster|api|release|repo\s+(create|fork|view|clone)|variable|"
                         r"schedule|pipeline|auth)\b|\b(tea|hub)\s+(pr|pulls|issues?|release)\b")
_LIVE_CHAIN = re.compile(r"\beth_(call|sendRawTransaction|getBalance|blockNumber|getLogs|sendTransaction)\b|"
                         r"--rpc-url\b|\b\w*RPC_URL\b|\bcast\s+(send|call|balance|block)\b|"
                         r"\bsolana\s+(transfer|balance|airdrop)\b|\bmainnet\.infura\.io\b|\balchemy\.com/v2\b")
_AGENT_RUNTIME = re.compile(
    r"\bsub-?agents?\b|\bsubagent_type\b|\b(Agent|Task|Skill|SendMessage|TodoWrite) tool\b|\bTask(Create|Update)\b|"
    r"\bSkill\(\s*skill\b|\bsessions?_(spawn|send|list|history)\b|\bsessions_\w+\b|"
    r"\b(spawn|launch|dispatch|fan out|delegate)\w*\b[^.;]{0,30}\b(parallel )?(agents?|workers?)\b|"
    r"\bparallel agents\b|\b(message|notify|ping) the user\b|\bwait for the user\b|\binvoke (the |a |other )?skills?\b",
    re.I)
MIN_RUNTIME_LINES = 3
_MODEL_CORE = re.compile(
    r"\b(LLM|large language model)[- ](assisted|powered|driven|based|generated|judged?|calls?|api|endpoints?|"
    r"providers?)\b|\b(needs?|requires?|uses?|using|via|through|calls?|with) (an? |the )?(LLM|language model|"
    r"model provider)s?\b(?!\.)|\bnatural[- ]language (actions?|commands?|instructions?)\b|"
    r"\b(hosted|cloud|remote) (LLMs?|language models?)\b", re.I)
_LOCAL_MODEL = re.compile(r"\b(ollama|llama\.?cpp|local (llm|model)s?|offline|on-device|gguf|vllm|lm studio|"
                          r"open(-source)? models?)\b", re.I)
_OPTIONAL_BEFORE = re.compile(r"\b(optional(ly)?|if you have|can also)\b[^.;,]{0,25}$", re.I)


def device(skill: ParsedSkill) -> RuleResult:
    hits = _hits(_lines(skill, _DEVICE), lambda ln: None if ln.in_front_matter and not ln.text.lstrip().startswith(
        ("description", "name")) else _DEVICE.search(ln.text))
    return _verdict("needs.device", hits, "needs a physical device or a service on the local network",
                    "needs no device or LAN service", core_needed=2)


def live_target(skill: ParsedSkill) -> RuleResult:
    # an optional lookup ("identify the owner if needed: whois ...") is a side step of offline work
    hits = [h for h in _hits(_lines(skill, _PROBE),
                             lambda ln: None if _LOCAL_TARGET.search(ln.text) else _PROBE.search(ln.text))
            if not h.optional]
    return _verdict("needs.live_target", hits, "probes real hosts on the network (DNS, TLS, ports)",
                    "probes no outside host", core_needed=2)


def remote_api(skill: ParsedSkill) -> RuleResult:
    """What the skill is (name, description) said to go through a web API, when the text does not
    build or mock that API itself. A warning, not a failure: hand labels find that API supplementary
    about as often as core ("GitLab REST API timing data is supplementary"), so a person decides."""
    about = f"{skill.name}. {skill.description}"
    m = _REMOTE_API.search(about)
    if not m or _BUILDS_API.search(about):
        return passed("needs.remote_api", "its description names no web API it works through")
    hits = _hits(tuple(ln for ln in _lines(skill) if m.group(0) in ln.text), lambda ln: _REMOTE_API.search(ln.text))
    core = [h for h in hits if not h.optional]
    if not core:
        return passed("needs.remote_api", f"the web API its description names ('{m.group(0)}') is optional there")
    h = core[0]
    return RuleResult("needs.remote_api", Outcome.WARN,
                      f"may work through a web API of a server it does not run ('{m.group(0)}') — line "
                      f"{h.line.number}: {h.line.text.strip()[:200]}", f"SKILL.md:{h.line.number}")


def hosted_cli(skill: ParsedSkill) -> RuleResult:
    hits = _hits(_lines(skill, _HOSTED_CLI), lambda ln: _HOSTED_CLI.search(ln.text))
    return _verdict("needs.hosted_cli", hits, "runs the CLI of a hosted forge against its remote",
                    "runs no hosted forge's CLI", core_needed=2)


def live_chain(skill: ParsedSkill) -> RuleResult:
    hits = _hits(_lines(skill, _LIVE_CHAIN), lambda ln: _LIVE_CHAIN.search(ln.text))
    return _verdict("needs.live_chain", hits, "calls a live chain's RPC", "calls no chain RPC", core_needed=2)


def model_api(skill: ParsedSkill) -> RuleResult:
    """Read from what the skill is (name, description): a thin text says no more, and there the
    model is the work ("Use LLM-assisted harness generation"). A model named optional, or a local
    one, is no need."""
    about = f"{skill.name}. {skill.description}"
    m = None if _LOCAL_MODEL.search(about) else next(
        (m for m in _MODEL_CORE.finditer(about) if not _OPTIONAL_BEFORE.search(about[:m.start()])), None)
    if m is None:
        return passed("needs.model_api", "its description names no hosted language model as the core step")
    return RuleResult("needs.model_api", Outcome.FAIL,
                      f"its description says the core step asks a language model ('{m.group(0)}'): "
                      f"{' '.join(skill.description.split())[:160]}", "SKILL.md description")


def agent_runtime(skill: ParsedSkill) -> RuleResult:
    """Many lines of agent-runtime work and fewer shell commands than them: the core runs in the
    agent's runtime. A skill of shell work that also delegates passes."""
    hits = [h for h in _hits(_lines(skill, _AGENT_RUNTIME), lambda ln: _AGENT_RUNTIME.search(ln.text))
            if not h.optional]
    commands = concrete_commands(skill_commands(skill))
    if len(hits) >= MIN_RUNTIME_LINES and len(hits) > len(commands):
        shown = "; ".join(f"line {h.line.number}: {h.line.text.strip()[:120]}" for h in hits[:3])
        return RuleResult("workflow.agent_runtime", Outcome.FAIL,
                          f"the work runs inside an agent's runtime (sub-agents, agent tools, the user), not a "
                          f"shell: {len(hits)} such lines against {len(commands)} concrete command(s) — {shown}",
                          f"SKILL.md:{hits[0].line.number}")
    return passed("workflow.agent_runtime", f"{len(hits)} line(s) of agent-runtime work, "
                  f"{len(commands)} concrete command(s)")


RULES = (device, live_target, remote_api, hosted_cli, live_chain, model_api, agent_runtime)
