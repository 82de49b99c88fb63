"""What a skill's core workflow needs from outside the machine — an account, an API key, a
hosted MCP server, a crypto wallet, a SaaS product, a server to talk to — one rule each, so
the reason is exact. A sandbox for training has none of these.

Each rule separates NEEDS from CAN USE: a signal in an optional context (an "optional" line,
an `[optional]` or "Advanced"/"Integrations" section, "if you have", "falls back to", "set X
to enable") is a warning; the same signal in the core workflow fails the skill; advice about
the thing ("never hard-code your token") is not a signal at all. Evidence is the lines."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.filters.base import RuleResult, from_hits, passed
from pipeline.filters.credentials import (CREDENTIAL_VAR, METERED_USE, METERED_VENDOR, blank_urls, credential_vars,
                                          metered)
from pipeline.filters.line_context import Line, optional_at, skill_lines
from pipeline.filters.required_literals import line_index, may_match
from pipeline.ingest.skill_markdown import as_list, openclaw_meta
from workbench.models import Outcome, ParsedSkill


def _one_of(*patterns: str) -> re.Pattern[str]:
    """One case-insensitive pattern for a list of alternatives: one search per line."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I | re.M)


_KEY_WORDS = r"(api[ _-]?keys?|api[ _-]?tokens?|access[ _-]tokens?|secret[ _-]keys?|bearer tokens?|auth tokens?|client secrets?)"
_API_KEY_PHRASES = _one_of(
    rf"\b(get|obtain|grab|generate|create|copy|paste|provide|enter|add|set|export|configure|need|needs|requires?|"
    rf"required|using|with) (an? |your |the |its )?([\w.-]+ ){{0,3}}{_KEY_WORDS}\b",
    rf"\b{_KEY_WORDS} (is |are )?(required|needed|must be set)\b",
    r"\bx-api-key\s*:",
    r"\bauthorization\s*:\s*(bearer|token|basic)\s+\$\{?[A-Z_]+",
    r"\bsettings\s*>\s*api\b",
)
_EXPORT_VAR = re.compile(r"\b(export\s+|-e\s+|env\s+)?[A-Z][A-Z0-9_]*\s*=\s*\S", re.M)   # X_API_KEY=... sets it
_BARE_KEY = re.compile(rf"\b{_KEY_WORDS}\b|\bauth keys?\b", re.I)   # counts in a set-up section or the description
# "no API key needed", "without a token": the line says the opposite of a need
_NO_NEED = re.compile(r"\bout of scope\b|\b(no|without|not|never|zero|free of)\b[^.;]{0,20}\b(api[ _-]?keys?|keys?|tokens?|"
                      r"accounts?|logins?|sign-?ups?|credentials?|auth\w*|mcp|servers?|cloud|network)\b[^.;]{0,20}|\b(key|account|login|auth\w*)[- ]free\b", re.I)

# --- accounts ---------------------------------------------------------------------------

# `vercel login`, `gh auth login`, `huggingface-cli login`: a command line, in a code block or backticks
_CLI_LOGIN = re.compile(r"(^\s*(\$\s*)?|`)[\w.-]+(\s+auth)?\s+(login|signin|sign-in)\b")
_VENDOR_ACCOUNT = re.compile(r"\byour ([A-Z][\w.]*[ -]){1,3}account\b")   # "your Google account"
_ACCOUNT = _one_of(
    r"\b(gh|glab)\s+auth\s+(login|status|token|refresh)\b",
    r"\bgcloud\s+auth\b|\baws\s+(configure|sso\s+login)\b|\baz\s+login\b",
    r"\b(sign(ed|s)?[ -]?(up|in)|log(ged|s)?[ -]?in(to)?|register|need|needs|requires?)\b"
    r"( for| to| with| into| on)? (an? |your |the )?(?!(user|service|system|local|root|admin|unix|linux) )"
    r"([\w.-]+ ){0,3}account\b",
    r"\boauth\s*(2(\.0)?)?\b.{0,40}\b(client|credentials?|consent|flow|app|token|scopes?|authori[sz]ation)\b",
    r"\bcredentials\.json\b|\bclient_secret\w*\.json\b|\bservice[ -]account\s+(key|json|credentials?|file)\b",
    r"\bpersonal access token\b|\b(tenant|workspace|organi[sz]ation) id\b",
    r"\b(cloud|storage|developer|hosting|paid|premium|business|enterprise|team) accounts?\b",
    r"\bauthenticated\s+(`?[\w-]+`?\s+)?(cli|session|user|account|client)\b",
    r"\bbrowser cookies?\b.{0,40}\bauth|\bauth\w*\b.{0,40}\bbrowser cookies?\b|\blogged-in\s+(browser|session|account)\b",
)
# "GitHub auth with repo scopes", "AWS credentials", "an Okta tenant" under Prerequisites
# (a vendor-looking name: GitHub, AWS, MuAPI, E2B — not a sentence's first word such as "Check")
_SETUP_ACCOUNT = re.compile(r"\b([A-Z]{2,}[\w.-]*|[A-Z][a-z]+[A-Z][\w.-]*|[A-Z]\w*\d\w*)\s+"
                            r"(auth|authentication|login|credentials?|account|tenant)\b")
# GitHub's CLI beyond local git: every one of these needs `gh auth`
_GH_REMOTE = re.compile(r"\bgh\s+(pr|issue|api|run|release|workflow|gist|secret|label|project|search|"
                        r"repo\s+(create|fork|view|edit|delete|sync)|codespace|cache|variable)\b")

# --- MCP --------------------------------------------------------------------------------

_MCP_TOOL = re.compile(r"\bmcp__[\w-]+")
_MCP = _one_of(
    r"\b(connect|install|configure|add|enable|set ?up|requires?|needs?|uses?|using|via|through|call)\w*\b"
    r".{0,50}\bmcp\b",
    r"\bmcp\b.{0,30}\b(server|tools?|integration|connector|client|endpoint)s?\b",
    r"\bclaude mcp add\b|\"mcpServers\"|\bmcpServers\s*:|\.mcp\.json\b",
    r"https?://[\w.-]*\bmcp\b[\w./-]*|https?://\S+/(mcp|sse)\b",
)
# building, testing or reviewing an MCP server is local work, not a need
_MCP_BUILD = re.compile(r"\b(build|create|write|implement|develop|scaffold|test|debug|author|design|make)\w*\b"
                        r".{0,40}\bmcp (servers?|tools?)\b|\bfastmcp\b|\bmcp[- ]builder\b|\bmcp (sdk|inspector)\b", re.I)

# --- wallets ----------------------------------------------------------------------------

_WALLET = _one_of(
    r"\b(seed|recovery|mnemonic|secret) phrase\b|\bmnemonic\b",
    r"\bwallet'?s? private key\b|\bprivate key\b.{0,30}\bwallet\b|\bwallet\b.{0,30}\bprivate key\b",
    r"\b(connect|fund|create|import|unlock|load)\w*\s+(a\s+|your\s+|the\s+)?(crypto(currency)?\s+|web3\s+)?wallet\b",
    r"\b(funded|crypto(currency)?|web3|solana|ethereum|evm|bitcoin|usdc|hot|custodial)\s+wallets?\b",
    r"\bon-?chain\s+(transactions?|tx|payments?|transfers?|swaps?)\b",
    r"\b(sign|send|broadcast|submit)\w*\s+(a\s+|the\s+|raw\s+)?transactions?\b.{0,40}\b(chain|wallet|eth|sol|rpc|gas)\b",
    r"\b(metamask|phantom wallet|walletconnect|ledger live)\b",
    r"\b(WALLET_PRIVATE_KEY|PRIVATE_KEY|MNEMONIC|SEED_PHRASE|WALLET_[A-Z_]+)\s*=",
    r"\b(mainnet|testnet)\b.{0,30}\b(rpc|faucet|funds?|gas)\b",
)

# --- SaaS: the work happens in someone's hosted product ----------------------------------

# Hosted products whose data and work live in the vendor's cloud. Naming one is not a need;
# working in it (its API host, its deploy, its dashboard) is.
SAAS_PRODUCTS = (
    "notion", "linear", "slack", "jira", "confluence", "airtable", "asana", "trello", "clickup", "monday.com",
    "hubspot", "salesforce", "zendesk", "intercom", "freshdesk", "shopify", "stripe", "paypal", "twilio",
    "sendgrid", "mailchimp", "mailgun", "figma", "canva", "google drive", "google docs", "google sheets",
    "google calendar", "gmail", "notebooklm", "google analytics", "search console", "microsoft 365",
    "sharepoint", "outlook", "microsoft teams", "onedrive", "dropbox", "zoom", "discord", "telegram",
    "whatsapp", "twitter", "linkedin", "reddit", "youtube", "instagram", "facebook", "tiktok", "sentry",
    "datadog", "new relic", "pagerduty", "grafana cloud", "vercel", "netlify", "heroku", "supabase",
    "firebase", "apify", "browserless", "e2b", "replicate", "pinecone", "snowflake", "bigquery", "databricks",
    "langfuse", "langsmith", "langtrace", "cloudinary", "algolia", "auth0", "clerk", "okta", "bamboohr",
    "workday", "servicenow", "splunk", "weaviate cloud", "modal", "runpod", "openrouter", "elevenlabs",
    # public clouds: a skill about their stacks and resources works in someone's account
    "aws", "amazon web services", "azure", "google cloud", "gcp",
)
_SAAS_NAMES = r"(" + "|".join(re.escape(p) for p in SAAS_PRODUCTS) + r")"
_SAAS_NAME = re.compile(rf"\b{_SAAS_NAMES}\b", re.I)
_SAAS_WORK = _one_of(
    rf"\b{_SAAS_NAMES}\b.{{0,40}}\b(dashboard|workspace|tenant|org(anization)?|project|site|instance|"
    rf"portal|admin|account|app|bot|channel|board|base|database|pages?|api|apis|cdn|platform|ui|console|"
    rf"stacks?|subscription|resources|sdk|cli)\b",
    r"\b(in|from|on|via|open|into|to)\s+(the|your)\s+([A-Z][\w.-]*\s+){0,3}(dashboard|portal|admin panel|"
    r"control panel|web app|web ui)\b",
    r"\b(netlify|vercel|heroku|fly|flyctl|railway|render|firebase|supabase|wrangler|amplify|eas)\s+deploy\b",
    r"\bdeploy(ed|ing|s)?\s+(it\s+|them\s+|this\s+|your\s+\w+\s+)?(to|on)\s+" + _SAAS_NAMES + r"\b",
    r"https?://(api\.)?[\w-]+\.(com|io|so|app|ai|dev|co)/(api|v\d)\b",
)

# --- network services: a server someone else runs, that the skill only talks to ----------

_LOCAL_CLUSTER = re.compile(r"\b(kind\s+create\s+cluster|minikube\s+start|k3d\s+cluster\s+create|k3s\s+server|"
                            r"microk8s|docker\s+run\b.{0,80}\b(postgres|redis|mysql|elasticsearch|kafka|mongo))", re.I)
_LOCALHOST = re.compile(r"\blocalhost\b|\b127\.0\.0\.1\b|\[::1\]|\b0\.0\.0\.0\b|\bsqlite\b|\bduckdb\b", re.I)
_NETWORK = _one_of(
    r"\bkubectl\s+(-\S+\s+)*(get|describe|logs|exec|apply|delete|rollout|top|port-forward|cordon|drain|scale|"
    r"patch|edit|create|cluster-info|auth can-i)\b",
    r"\b(psql|mysql|mongosh|mongo|redis-cli|cqlsh|clickhouse-client|sqlcmd|influx)\b.{0,40}(\s-h\s*\S|--host|"
    r"\s-U\s|\$\{?(DATABASE_URL|PGHOST|DB_HOST))",
    r"\b(postgres(ql)?|mysql|mongodb(\+srv)?|redis|rediss|amqp|kafka|clickhouse)://",
    r"\bkafka-(topics|console-\w+|consumer-groups)\b|\b(elasticsearch|opensearch)\b.{0,40}:9200\b|:9200/_",
    r"\b(connect(s|ing)? to|against|talks? to|queries|query)\s+(a |an |the |your )?(running |live |remote |"
    r"production |existing |self-hosted )+([\w-]+ ){0,2}(server|database|cluster|instance|broker|endpoint)\b",
    r"\b(a|your|the) (live|running|production) ([\w-]+ ){0,2}(cluster|server|instance|database)\b",
    r"\b(a|your|the) remote ([\w-]+ ){0,2}(server|instance|database|host)\b",
    r"\bssh\s+(-\S+\s+)*[\w.-]+@(?!localhost|127\.)[\w.-]+",
    r"\bdocker\s+push\b",
    r"\b(crawl|scrap)\w*\b.{0,40}\b(live|remote|public)\s+(web)?sites?\b",
)
# "- MISP instance (v2.4+) with API access", "a running Elasticsearch cluster" under Prerequisites
_SERVER_PREREQ = re.compile(r"^\s*[-*]?\s*(an? |access to (an? )?)?[\w.-]+ (instance|server|cluster|broker)\b", re.I)
_NETWORK_ENV = re.compile(r"^(PG(HOST|PASSWORD|USER|DATABASE)|DATABASE_URL|DB_(HOST|URL|PASSWORD)|REDIS_URL|"
                          r"MONGO\w*_URI|KAFKA_\w+|ELASTIC\w*_URL|KUBECONFIG|\w+_HOST|\w+_URL)$")


@dataclass(frozen=True)
class Hit:
    line: Line
    optional: bool


def _hits(lines: tuple[Line, ...], match: Callable[[Line], object]) -> list[Hit]:
    """Lines where `match` finds the thing (a re.Match, a (start, end) span, or any truthy value
    for the whole line), optional when their context or the clause around the find says so."""
    out = []
    for ln in lines:
        if ln.advice or _NO_NEED.search(ln.text):
            continue
        found = match(ln)
        if not found:
            continue
        start, end = found.span() if isinstance(found, re.Match) else found if isinstance(found, tuple) \
            else (0, len(ln.text))
        out.append(Hit(ln, ln.optional or ln.secondary or optional_at(ln.text, start, end)))
    return out


def _first(text: str, *patterns: re.Pattern[str]) -> re.Match | None:
    return next((m for p in patterns if (m := p.search(text))), None)


def _var_span(text: str, names: list[str]) -> tuple[int, int] | None:
    if not names:
        return None
    i = text.find(names[0])
    return (i, i + len(names[0])) if i >= 0 else (0, len(text))


def _verdict(rule: str, hits: list[Hit], what: str, clean: str, *, core_needed: int = 1,
             declared: list[str] | None = None, says_needed: Callable[[Line], bool] = lambda ln: False) -> RuleResult:
    """Fail on `core_needed` core hits, one that `says_needed` or stands under Prerequisites /
    Setup, or a declared requirement; warn on optional ones only."""
    core = [h for h in hits if not h.optional]
    optional = [h for h in hits if h.optional]
    if declared:
        return RuleResult(rule, Outcome.FAIL, f"{what}: declares {', '.join(declared)}",
                          "metadata.openclaw.requires.env")
    # a need stated under Prerequisites / Setup is a need even when said once
    if len(core) >= core_needed or any(h.line.setup or says_needed(h.line) for h in core):
        return from_hits(rule, Outcome.FAIL, what, _evidence(core))
    if optional:
        return from_hits(rule, Outcome.WARN, f"can optionally use: {what}", _evidence(optional))
    if core:   # fewer mentions than a need takes: a remark in passing
        return passed(rule, f"{clean}; mentioned in passing at line {core[0].line.number}")
    return passed(rule, clean)


def _evidence(hits: list[Hit]) -> list[tuple[int, str]]:
    seen: list[tuple[int, str]] = []
    for h in hits:
        if all(n != h.line.number for n, _ in seen):
            seen.append((h.line.number, h.line.text.strip()[:240]))
    return seen[:3]


def _declared_env(skill: ParsedSkill) -> list[str]:
    requires = openclaw_meta(skill.front_matter).get("requires")
    env = as_list(requires.get("env")) if isinstance(requires, dict) else []
    return sorted(set(env) | set(skill.env_vars))


def _lines(skill: ParsedSkill, *could_match: re.Pattern[str]) -> tuple[Line, ...]:
    """The skill's lines; given patterns, only those lines one of them could match (the lines
    that hold one of their required literals), in order."""
    lines = skill_lines(skill.raw_text)
    if not could_match:
        return lines
    kept = line_index(skill.raw_text).candidates(could_match)
    return lines if kept is None else tuple(lines[i] for i in kept)


def _metered_span(ln: Line) -> re.Match | tuple[int, int] | None:
    return METERED_USE.search(blank_urls(ln.text)) or _var_span(ln.text, [v for v in credential_vars(ln.text)
                                                                if METERED_VENDOR.match(v)])


def metered_lines(skill: ParsedSkill) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(core, optional) lines that use the key or API of a vendor billed by use."""
    # a find holds a vendor's name (METERED_USE's vendor or a metered credential name's): blanking
    # links only turns characters into spaces, so the name is in the line as written
    hits = _hits(_lines(skill, METERED_VENDOR), _metered_span)
    return (_evidence([h for h in hits if not h.optional]), _evidence([h for h in hits if h.optional]))


_LOCAL_USE = re.compile(r"\blocalhost\b|\b127\.0\.0\.1\b|\[::1\]|\blocal(ly)?\b.{0,20}\b(service|server|"
                        r"endpoint|api|instance|app)s?\b", re.I)
_REMOTE_URL = re.compile(r"https?://(?!localhost\b|127\.0\.0\.1\b|\[::1\])[\w-]+\.[\w.-]+", re.I)


def _local_vars(lines: tuple[Line, ...], names: set[str]) -> set[str]:
    """Credential vars the text ties to a service on this machine (and never to a remote URL)."""
    local = set()
    for name in names:
        uses = [ln.text for ln in lines if name in ln.text and not ln.in_front_matter]
        if any(_LOCAL_USE.search(t) for t in uses) and not any(_REMOTE_URL.search(t) for t in uses):
            local.add(name)
    return local


def api_key(skill: ParsedSkill) -> RuleResult:
    """A key or token of an outside service that is not metered (those are executable.paid_service)."""
    lines = _lines(skill)
    names = {v for ln in _lines(skill, CREDENTIAL_VAR) for v in credential_vars(ln.text)} | set(_declared_env(skill))
    local = _local_vars(lines, names)
    declared = [e for e in _declared_env(skill) if credential_vars(e) and not metered(e) and e not in local]

    def find(ln: Line):
        if metered(ln.text) or _LOCAL_USE.search(ln.text) or set(credential_vars(ln.text)) & local:
            return None
        return _var_span(ln.text, credential_vars(ln.text)) or _API_KEY_PHRASES.search(ln.text) \
            or (_BARE_KEY.search(ln.text) if ln.setup else None)
    hits = _hits(_lines(skill, CREDENTIAL_VAR, _API_KEY_PHRASES, _BARE_KEY), find)
    # one bare `$X_TOKEN` in an example is a remark; "requires X_API_KEY", `export X_API_KEY=` is a need
    return _verdict("needs.api_key", hits, "needs an API key or token of an outside service",
                    "needs no API key or token", declared=declared, core_needed=2,
                    says_needed=lambda ln: bool(_API_KEY_PHRASES.search(ln.text) or _EXPORT_VAR.search(ln.text)))


def account(skill: ParsedSkill) -> RuleResult:
    hits = _hits(_lines(skill, _ACCOUNT, _VENDOR_ACCOUNT, _CLI_LOGIN, _SETUP_ACCOUNT),
                 lambda ln: _first(ln.text, _ACCOUNT, _VENDOR_ACCOUNT)
                 or (_CLI_LOGIN.search(ln.text) if ln.in_code or "`" in ln.text else None)
                 or (_SETUP_ACCOUNT.search(ln.text) if ln.setup else None))
    gh = _hits(_lines(skill, _GH_REMOTE), lambda ln: _GH_REMOTE.search(ln.text))
    # one `gh pr view` among many local commands is a side remark; a workflow of them is a need
    if len([h for h in gh if not h.optional]) >= 2:
        hits += gh
    else:
        hits += [Hit(h.line, True) for h in gh]
    hits.sort(key=lambda h: h.line.number)
    # a login in a code block or an account said in words is a need; one `fix login bug` in backticks is not
    return _verdict("needs.account", hits, "needs an account or login with an outside service",
                    "needs no account or login", core_needed=2,
                    says_needed=lambda ln: bool(_first(ln.text, _ACCOUNT, _VENDOR_ACCOUNT)
                                                or ln.in_code and _CLI_LOGIN.search(ln.text)))


# documentation lookups through MCP (Context7, docs search) help write code; the work does not need them
_MCP_DOCS = re.compile(r"\bmcp__[\w-]*(context7|docs?|documentation|deepwiki)[\w-]*|\bcontext7\b", re.I)
_FILE_NAME = re.compile(r"[\w./-]+\.(md|txt|py|ts|js|sh)\b")


def _mcp_line(ln: Line) -> re.Match | None:
    if _MCP_DOCS.search(ln.text) or _MCP_BUILD.search(ln.text):
        return None
    text = _FILE_NAME.sub(lambda m: " " * len(m.group(0)), ln.text)   # same length: spans stay right
    return _first(text, _MCP_TOOL, _MCP)


def mcp(skill: ParsedSkill) -> RuleResult:
    if "mcp" not in skill.raw_text.lower():
        return passed("needs.mcp", "needs no MCP server")
    if _MCP_BUILD.search(f"{skill.name}\n{skill.description}"):
        return passed("needs.mcp", "builds or tests an MCP server: local work")
    tools = [t for t in skill.tools if _MCP_TOOL.search(t) and not _MCP_DOCS.search(t)]
    # blanking file names leaves runs of 4+ spaces, which no literal of these patterns holds
    hits = _hits(_lines(skill, _MCP_TOOL, _MCP), _mcp_line)
    if tools:   # the skill asks its harness for these tools: it does not run without them
        return RuleResult("needs.mcp", Outcome.FAIL, "needs MCP tools: " + ", ".join(tools[:5]),
                          "front matter allowed-tools")
    # one remark ("validate schemas via the X MCP") is a help, a workflow through MCP says so more than once
    return _verdict("needs.mcp", hits, "needs an MCP server's tools", "needs no MCP server", core_needed=2)


_WALLET_HINT = re.compile(r"wallet|mnemonic|phrase|chain|transaction|metamask|mainnet|testnet|private_key|ledger", re.I)


def wallet(skill: ParsedSkill) -> RuleResult:
    if not _WALLET_HINT.search(skill.raw_text) and not skill.env_vars:
        return passed("needs.wallet", "needs no crypto wallet")
    declared = [e for e in _declared_env(skill) if re.search(r"WALLET|MNEMONIC|SEED_PHRASE|PRIVATE_KEY", e)]
    hits = _hits(_lines(skill, _WALLET), lambda ln: _WALLET.search(ln.text))
    return _verdict("needs.wallet", hits, "needs a crypto wallet or on-chain transactions",
                    "needs no crypto wallet", declared=declared)


def saas(skill: ParsedSkill) -> RuleResult:
    about = {m.group(0).lower() for m in _SAAS_NAME.finditer(f"{skill.name}\n{skill.description}")}
    hits = _hits(_lines(skill, _SAAS_WORK), lambda ln: (m := _SAAS_WORK.search(ln.text)) and (
        bool(about & {n.group(0).lower() for n in _SAAS_NAME.finditer(ln.text)}) or not _SAAS_NAME.search(ln.text)) and m)
    if not about:
        # a skill that is not about a hosted product needs it only where it works in one repeatedly
        hits = [h for h in hits if _SAAS_NAME.search(h.line.text) or re.search(r"deploy", h.line.text, re.I)]
        return _verdict("needs.saas", hits, "works inside a hosted (SaaS) product",
                        "works in no hosted product", core_needed=3)
    # named in the skill's name it is what the skill is about; named in the description (often in a
    # list of tools it covers) it takes more lines of work in it
    in_name = bool(_SAAS_NAME.search(skill.name))
    return _verdict("needs.saas", hits, f"works inside a hosted product ({', '.join(sorted(about))})",
                    "works in no hosted product", core_needed=2 if in_name else 3)


# words one of _NETWORK's or _SERVER_PREREQ's patterns needs: a cheap look before the regexes
_NETWORK_WORDS = ("kubectl", "psql", "mysql", "mongo", "redis", "cqlsh", "clickhouse", "sqlcmd", "influx", "://",
                  "kafka", "9200", "ssh", "docker", "crawl", "scrap", "server", "instance", "cluster", "broker",
                  "database", "endpoint", "host")


def _may_network(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in _NETWORK_WORDS)


def network_service(skill: ParsedSkill) -> RuleResult:
    if may_match(skill.raw_text, _LOCAL_CLUSTER) and _LOCAL_CLUSTER.search(skill.raw_text):
        return passed("needs.network_service", "starts the servers it talks to itself")
    declared = [e for e in _declared_env(skill) if _NETWORK_ENV.match(e) and not credential_vars(e)]
    # a CI or compose file the skill writes (`docker push`, `kubectl rollout` in its YAML) runs elsewhere
    hits = _hits(_lines(skill, _NETWORK, _SERVER_PREREQ), lambda ln: None if ln.in_config or not _may_network(ln.text)
                 or _LOCALHOST.search(ln.text) else
                 _NETWORK.search(ln.text) or (_SERVER_PREREQ.search(ln.text) if ln.setup else None))
    return _verdict("needs.network_service", hits, "talks to a server it does not run (database, cluster, "
                    "broker, remote host)", "talks to no outside server", core_needed=2,
                    declared=declared if declared and hits else None)


RULES = (account, api_key, mcp, wallet, saas, network_service)
