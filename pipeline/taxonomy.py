"""The skill categories of the workbench and how a category is inferred when absent.

Inference weighs evidence by how much it says about the work a skill does in a terminal:
binaries its code blocks really invoke (install lines do not count), the file formats they
handle, specific terms in its name, description and declared (foreign) category. Body words
add a little and never decide alone. When the best category is weak or not clearly ahead of
the next one, the skill stays UNCATEGORIZED: a wrong category misleads every later stage
(scenarios, recipe choice), an unknown one is only unknown.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

UNCATEGORIZED = "uncategorized"

# slug -> specific terms (word-boundary matches, lower case) that point at it when a skill's
# name, description or declared category uses them. Generic words ("file", "text", "api",
# "server", "test", "log" as a verb) are left out: they occur in skills of every kind.
CATEGORY_TERMS: dict[str, tuple[str, ...]] = {
    "file-operations": ("rsync", "symlink", "symlinks", "hard link", "hard links", "filesystem",
                        "file system", "disk usage", "disk space", "duplicate files", "directory tree",
                        "file tree", "bulk rename", "rename files", "renaming files", "find files",
                        "mtime", "inode", "inodes", "file sync", "sync folders", "organize files",
                        "directories", "folders"),
    "text-processing": ("sed", "awk", "regex", "regexes", "regular expression", "regular expressions",
                        "text processing", "iconv", "character encoding", "encodings", "line endings",
                        "whitespace", "unicode", "plain text", "text files", "word count", "pandoc",
                        "find and replace", "search and replace", "ripgrep", "grep", "markdown", "epub"),
    "data-processing": ("csv", "tsv", "json", "jsonl", "ndjson", "yaml", "xml", "parquet", "jq", "yq",
                        "etl", "dataframe", "dataframes", "pandas", "spreadsheet", "spreadsheets", "xlsx",
                        "data cleaning", "data transformation", "data conversion", "tabular data",
                        "data pipeline", "data pipelines", "data extraction"),
    "databases": ("sqlite", "sqlite3", "sql", "database", "databases", "postgres", "postgresql", "psql",
                  "duckdb", "mysql", "mariadb", "mongodb", "redis", "clickhouse", "database migration",
                  "schema migration", "schema migrations", "pg_dump", "sql queries", "sql query", "orm"),
    "git": ("git", "commit", "commits", "branch", "branches", "rebase", "merge conflict", "merge conflicts",
            "bisect", "stash", "cherry-pick", "submodule", "submodules", "reflog", "pull request",
            "pull requests", "git history", "worktree", "worktrees", "changelog"),
    "archives-compression": ("tar", "tarball", "tarballs", "gzip", "zip", "unzip", "xz", "zstd", "bzip2",
                             "7z", "archive", "archives", "compress", "compression", "decompress"),
    "system-administration": ("systemd", "systemctl", "sysadmin", "system administration", "user accounts",
                              "process management", "apt", "dpkg", "journalctl", "sysctl", "kernel",
                              "logrotate", "daemon", "daemons", "hostname", "swap", "docker", "container",
                              "containers", "kubernetes", "k8s", "kubectl", "helm", "ansible", "linux server",
                              "server administration", "provisioning", "disk partitions", "gitops", "argocd"),
    "networking-http": ("http", "https", "curl", "wget", "dns", "tcp", "udp", "socket", "sockets", "tls",
                        "ssl", "http request", "http requests", "proxy", "reverse proxy", "load balancer",
                        "ping", "traceroute", "networking", "network", "websocket", "port forwarding",
                        "http server", "rest client", "status codes"),
    "security-permissions": ("permission", "permissions", "chmod", "chown", "setuid", "acl", "acls",
                             "setfacl", "ssh", "gpg", "encrypt", "encryption", "decrypt", "checksum",
                             "checksums", "secrets", "umask", "sudoers", "password", "passwords",
                             "hardening", "vulnerability", "vulnerabilities", "cve", "sast", "pentest", "pentesting", "pen test",
                             "penetration testing", "malware", "exploit", "exploits", "security",
                             "misconfiguration", "misconfigurations",
                             "firewall", "certificate", "certificates", "owasp", "forensics", "osint"),
    "scientific-computing": ("numpy", "scipy", "numerical", "matrix", "matrices", "statistics",
                             "statistical", "regression", "curve fitting", "simulation", "simulations",
                             "fft", "fourier", "gnuplot", "integral", "equation", "equations",
                             "interpolation", "monte carlo", "linear algebra", "differential equations",
                             "physics", "chemistry", "molecular", "finite element", "bioinformatics",
                             "genomics", "scientific", "quantum", "signal processing", "numerical methods"),
    "software-build-debug": ("compile", "compiler", "compilation", "makefile", "cmake", "gcc", "gdb",
                             "valgrind", "debug", "debugging", "debugger", "unit test", "unit tests",
                             "test suite", "pytest", "jest", "segfault", "linker", "backtrace",
                             "stack trace", "profiler", "profiling", "lint", "linter", "linting",
                             "refactor", "refactoring", "ci/cd", "continuous integration",
                             "test-driven", "static analysis", "type checking", "build system",
                             "build failures", "code quality", "benchmark", "benchmarks", "acceptance tests",
                             "integration tests", "end-to-end tests", "e2e tests"),
    "log-analysis": ("log", "logs", "access log", "auth log", "apache", "user agent", "user agents",
                     "status code", "requests per", "ip addresses", "failed logins", "intrusion", "access logs", "syslog", "log file", "log files", "log analysis",
                     "error log", "error logs", "log parsing", "log lines", "error rate", "percentile",
                     "percentiles", "5xx", "4xx", "siem", "log entries"),
    "scheduling-automation": ("cron", "crontab", "cron job", "cron jobs", "schedule", "scheduled",
                              "scheduling", "scheduler", "timer", "timers", "periodic", "flock", "inotify",
                              "inotifywait", "file watcher", "retry", "retries", "backoff", "nightly",
                              "hourly"),
    "dependency-management": ("pip", "venv", "virtualenv", "requirements.txt", "npm", "package.json",
                              "lockfile", "lockfiles", "lock file", "dependency", "dependencies",
                              "version pinning", "pinning", "poetry", "wheel", "wheels", "vendoring",
                              "semver", "outdated packages", "supply chain", "package manager", "pipenv",
                              "sbom"),
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_TERMS)

# Binaries whose invocation points at one category.
BIN_CATEGORY: dict[str, str] = {
    **dict.fromkeys(("git", "tig", "git-lfs"), "git"),
    **dict.fromkeys(("sqlite3", "psql", "duckdb", "mysql", "mariadb", "mongosh", "redis-cli", "pg_dump",
                     "pg_restore", "mysqldump", "clickhouse-client", "litecli", "pgcli", "sqlcmd"), "databases"),
    **dict.fromkeys(("jq", "yq", "xsv", "qsv", "mlr", "csvcut", "csvsql", "csvstat", "in2csv", "csvjson",
                     "dasel", "gron", "jo"), "data-processing"),
    **dict.fromkeys(("tar", "zip", "unzip", "xz", "unxz", "zstd", "unzstd", "7z", "gzip", "gunzip", "bzip2",
                     "pigz", "zcat", "lz4", "brotli", "unrar"), "archives-compression"),
    **dict.fromkeys(("crontab", "inotifywait", "systemd-run", "flock", "entr", "anacron"),
                    "scheduling-automation"),
    **dict.fromkeys(("gdb", "lldb", "valgrind", "cmake", "make", "gcc", "g++", "clang", "ninja", "meson",
                     "mvn", "gradle", "pytest", "ctest", "ltrace", "perf", "rustc", "javac", "tsc",
                     "shellcheck", "ruff", "mypy", "bazel", "eslint"), "software-build-debug"),
    **dict.fromkeys(("pip-compile", "pip-audit", "poetry", "pipenv", "pipdeptree", "composer"),
                    "dependency-management"),
    **dict.fromkeys(("gpg", "setfacl", "getfacl", "chmod", "chown", "ssh-keygen", "openssl", "sops",
                     "gopass", "visudo", "trivy", "semgrep", "gitleaks", "trufflehog", "bandit", "nmap",
                     "sha256sum", "lynis", "auditctl", "ufw", "iptables", "nft"), "security-permissions"),
    **dict.fromkeys(("curl", "wget", "dig", "nslookup", "ss", "netstat", "nc", "ncat", "ping",
                     "traceroute", "mtr", "tcpdump", "iperf3", "grpcurl", "wrk"),
                    "networking-http"),
    **dict.fromkeys(("systemctl", "journalctl", "useradd", "usermod", "groupadd", "mount", "lsblk",
                     "sysctl", "dpkg", "docker", "podman", "kubectl", "helm", "ansible",
                     "ansible-playbook", "lsof", "pkill"), "system-administration"),
    **dict.fromkeys(("gnuplot", "bc", "octave", "Rscript", "julia", "gmx", "lmp", "qalc"),
                    "scientific-computing"),
    **dict.fromkeys(("iconv", "sed", "awk", "gawk", "pandoc", "dos2unix", "tr", "rg", "grep"),
                    "text-processing"),
    **dict.fromkeys(("rsync", "find", "fd", "fdfind", "tree", "du", "rename", "ncdu"),
                    "file-operations"),
    **dict.fromkeys(("lnav", "goaccess"), "log-analysis"),
}
# Tools whose category depends on the subcommand ("npm audit" vs "npm test").
SUBCOMMAND_CATEGORY: dict[tuple[str, str], str] = {
    **{("npm", s): "dependency-management" for s in ("audit", "outdated", "ls", "update", "ci", "dedupe")},
    **{("npm", s): "software-build-debug" for s in ("test", "run", "build")},
    **{("pip", s): "dependency-management" for s in ("freeze", "list", "check", "show", "download")},
    **{("uv", s): "dependency-management" for s in ("lock", "sync", "tree", "pip")},
    **{("cargo", s): "software-build-debug" for s in ("build", "test", "check", "clippy", "run")},
    **{("cargo", s): "dependency-management" for s in ("update", "tree", "audit")},
    **{("go", s): "software-build-debug" for s in ("build", "test", "vet")},
    ("go", "mod"): "dependency-management",
}
# Lines that set a tool up rather than use it: `pip install x`, `git clone …`, `curl … | sh`.
_INSTALLERS = {"pip", "pip3", "pipx", "npm", "npx", "yarn", "pnpm", "brew", "apt", "apt-get", "yum", "dnf",
               "pacman", "apk", "cargo", "go", "gem", "uv", "conda", "choco", "winget", "snap", "port"}
_INSTALL_VERBS = {"install", "add", "i", "get", "tool"}
_PIPE_TO_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z)?sh\b")

# File formats a skill handles (in its code and inline code) and the category they point at.
FORMAT_CATEGORY: dict[str, str] = {
    **dict.fromkeys(("csv", "tsv", "json", "jsonl", "ndjson", "parquet", "xml", "yaml", "yml", "xlsx"),
                    "data-processing"),
    **dict.fromkeys(("sql", "db", "sqlite", "sqlite3", "duckdb"), "databases"),
    **dict.fromkeys(("tar", "tgz", "gz", "zip", "xz", "zst", "7z", "bz2"), "archives-compression"),
    **dict.fromkeys(("log",), "log-analysis"),
    **dict.fromkeys(("patch", "diff"), "text-processing"),
    **dict.fromkeys(("c", "cpp", "h", "o", "so"), "software-build-debug"),
    **dict.fromkeys(("pem", "crt", "key", "gpg", "asc"), "security-permissions"),
    **dict.fromkeys(("service", "timer"), "system-administration"),
    **dict.fromkeys(("lock",), "dependency-management"),
}
_FORMAT = re.compile(r"(?<![\w/])[\w./-]*\w\.(" + "|".join(sorted(FORMAT_CATEGORY, key=len, reverse=True))
                     + r")(?![\w-])")

# How much each kind of evidence weighs, and what a decision needs.
NAME_WEIGHT = 3.0         # per term in the name
DESCRIPTION_WEIGHT = 2.0  # per term in the description
DECLARED_WEIGHT = 2.0     # per term in a declared category that is not one of ours
FOLDER_WEIGHT = 6.0       # a folder above the package named after one of our categories: the author sorted it there
DECLARED_BIN_WEIGHT = 2.0  # per binary the skill declares it needs
COMMAND_WEIGHT = 1.5      # per code line invoking a binary, at most COMMAND_CAP lines per binary
COMMAND_CAP = 3
# General tools every kind of shell work pipes through: they say little of the kind of work.
GLUE_BINS = frozenset({"grep", "sed", "awk", "gawk", "tr", "find", "rg", "xargs", "curl", "tar", "chmod"})
GLUE_WEIGHT = 0.5
FORMAT_WEIGHT = 0.75      # per distinct file format its code handles, at most FORMAT_CAP per category
FORMAT_CAP = 3
BODY_WEIGHT = 0.1         # per term in the body, at most BODY_CAP per category: it never decides alone
BODY_CAP = 1.0
MIN_SCORE = 3.0           # the best category needs at least this (one name term, or a term and a command)
MARGIN = 1.5              # and this many times the runner-up's score

# Names people give categories, mapped onto ours.
ALIASES: dict[str, str] = {
    "files": "file-operations", "file": "file-operations", "filesystem": "file-operations",
    "text": "text-processing", "csv": "data-processing", "json": "data-processing",
    "data": "data-processing", "data-processing": "data-processing", "sql": "databases",
    "sqlite": "databases", "database": "databases", "db": "databases", "vcs": "git",
    "version-control": "git", "archives": "archives-compression", "compression": "archives-compression",
    "sysadmin": "system-administration", "system": "system-administration",
    "ops": "system-administration", "networking": "networking-http", "network": "networking-http",
    "http": "networking-http", "web": "networking-http", "security": "security-permissions",
    "permissions": "security-permissions", "science": "scientific-computing",
    "scientific": "scientific-computing", "math": "scientific-computing",
    "build": "software-build-debug", "debugging": "software-build-debug",
    "software-engineering": "software-build-debug", "logs": "log-analysis",
    "logging": "log-analysis", "scheduling": "scheduling-automation", "cron": "scheduling-automation",
    "automation": "scheduling-automation", "dependencies": "dependency-management",
    "packaging": "dependency-management",
}

_PATTERNS = {
    cat: re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(k) for k in sorted(kws, key=len, reverse=True))
                    + r")(?![\w-])")
    for cat, kws in CATEGORY_TERMS.items()
}
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
# Phrases whose words are terms of another meaning: signing in is not a log file, a neural
# network is not networking, a regression test is not a statistical regression.
_FALSE_FRIENDS = re.compile(r"\blog(?:ging|ged|s)?\s+(?:in|into|on|out)\b|\b(?:neural|social|professional)\s+networks?\b"
                            r"|\bregressions?\s+(?:tests?|testing|suites?|coverage)\b")
_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "xargs"}


@dataclass(frozen=True)
class CategoryEvidence:
    name: str
    description: str
    body: str = ""
    code_lines: Sequence[str] = ()   # lines of the fenced code blocks
    declared_bins: Sequence[str] = ()
    declared: str = ""               # a declared category that is not one of ours
    folders: Sequence[str] = ()      # the folders above the package inside its corpus


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def normalize_category(given: str) -> str:
    slug = slugify(given)
    if slug in CATEGORY_TERMS:
        return slug
    return ALIASES.get(slug, slug)


def _commands(snippets: Iterable[str]) -> Iterable[tuple[str, str]]:
    """(binary, first argument) for each command a code line runs; install lines are skipped."""
    for snippet in snippets:
        line = snippet.strip()
        if not line or line.startswith("#") or _PIPE_TO_SHELL.search(line):
            continue
        for part in re.split(r"\|\||&&|[|;]|\$\(", line):
            words = part.strip().lstrip("$> ").split()
            while words and (words[0] in _WRAPPERS or "=" in words[0]):
                words = words[1:]
            if not words:
                continue
            binary, arg = words[0].rsplit("/", 1)[-1], (words[1] if len(words) > 1 else "")
            if arg.startswith(("=", "(", ":")) or binary.endswith(":"):
                continue  # code, not a command: `find = …`, `make(…)`, `tar: …`
            if binary in _INSTALLERS and arg in _INSTALL_VERBS or (binary == "git" and arg == "clone"):
                break  # setting the tool up says nothing of what the skill does with it
            yield binary, arg


def _command_weight(binary: str) -> float:
    return GLUE_WEIGHT if binary in GLUE_BINS else COMMAND_WEIGHT


def _command_category(binary: str, arg: str) -> str | None:
    return SUBCOMMAND_CATEGORY.get((binary, arg)) or BIN_CATEGORY.get(binary)


def _code_snippets(ev: CategoryEvidence) -> list[str]:
    code = list(ev.code_lines)
    if not code and ev.body:
        from pipeline.ingest.skill_markdown import parse_sections  # one fence rule for the project
        code = parse_sections(ev.body, 1)[1]
    return code + _INLINE_CODE.findall(ev.body)


def category_scores(ev: CategoryEvidence) -> tuple[Counter[str], Counter[str]]:
    """(score per category, the part of it that is not body words)."""
    strong: Counter[str] = Counter()
    for text, weight in ((ev.name.replace("-", " ").replace("_", " "), NAME_WEIGHT),
                         (ev.description, DESCRIPTION_WEIGHT), (ev.declared, DECLARED_WEIGHT)):
        low = _FALSE_FRIENDS.sub(" ", text.lower())
        for cat, pattern in _PATTERNS.items():
            strong[cat] += weight * len(set(pattern.findall(low)))
    for folder in set(ev.folders):  # collections sorted into category folders ("security/", "db/")
        cat = normalize_category(re.sub(r"^\d+[-_.]", "", folder))
        if cat in CATEGORY_TERMS:
            strong[cat] += FOLDER_WEIGHT
    for b in set(ev.declared_bins):
        if b in BIN_CATEGORY:
            strong[BIN_CATEGORY[b]] += DECLARED_BIN_WEIGHT
    snippets = _code_snippets(ev)
    lines_per_bin = Counter((b, cat) for b, arg in _commands(snippets) if (cat := _command_category(b, arg)))
    for (b, cat), n in lines_per_bin.items():
        strong[cat] += _command_weight(b) * min(n, COMMAND_CAP)
    formats: dict[str, set[str]] = {}
    for snippet in snippets:
        for ext in _FORMAT.findall(snippet.lower()):
            formats.setdefault(FORMAT_CATEGORY[ext], set()).add(ext)
    for cat, exts in formats.items():
        strong[cat] += FORMAT_WEIGHT * min(len(exts), FORMAT_CAP)
    scores = Counter(strong)
    body = _FALSE_FRIENDS.sub(" ", ev.body[:20000].lower())
    for cat, pattern in _PATTERNS.items():
        scores[cat] += min(BODY_CAP, BODY_WEIGHT * len(pattern.findall(body)))
    return scores, strong


def decide(scores: Counter[str], strong: Counter[str]) -> str:
    """The best category when it is strong enough and clearly ahead, else UNCATEGORIZED."""
    ranked = sorted(CATEGORIES, key=lambda c: (-scores[c], CATEGORIES.index(c)))
    best, second = ranked[0], ranked[1]
    if strong[best] <= 0 or scores[best] < MIN_SCORE or scores[best] < MARGIN * scores[second]:
        return UNCATEGORIZED
    return best


def infer(ev: CategoryEvidence) -> str:
    return decide(*category_scores(ev))


def infer_category(name: str, description: str, body: str, bins: Sequence[str], *,
                   code_lines: Sequence[str] = (), declared: str = "", skill_key: str = "") -> str:
    """bins: the binaries the skill declares it needs; its code blocks are read from body
    (or given as code_lines) for the binaries it really runs; skill_key: its path in the corpus."""
    folders = skill_key.split("/")[:-1]
    return infer(CategoryEvidence(name, description, body, code_lines, bins, declared, folders))
