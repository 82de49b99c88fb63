"""The skill categories of the workbench and how a category is inferred when absent."""
from __future__ import annotations

import re
from collections import Counter

# slug -> keywords (word-boundary matches, lower case). Order is the tie-break.
CATEGORY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "file-operations": ("file", "files", "directory", "directories", "folder", "rename", "copy",
                        "move", "find", "rsync", "symlink", "duplicate files", "disk space",
                        "tree", "mtime", "filesystem", "path", "paths", "xargs"),
    "text-processing": ("text", "sed", "awk", "grep", "regex", "regular expression", "encoding",
                        "iconv", "diff", "patch", "sort", "uniq", "lines", "words", "markdown",
                        "whitespace", "template", "tr", "cut", "column", "wc", "unicode"),
    "data-processing": ("csv", "json", "jq", "yaml", "tsv", "parquet", "transform", "dataset",
                        "columns", "records", "xml", "schema", "normalize", "merge", "pivot",
                        "aggregate", "jsonl", "ndjson"),
    "databases": ("sqlite", "sqlite3", "sql", "database", "databases", "postgres", "postgresql",
                  "psql", "duckdb", "query", "queries", "table", "index", "migration", "mysql",
                  "transaction", "backup", "dump"),
    "git": ("git", "commit", "commits", "branch", "branches", "rebase", "merge", "repository",
            "bisect", "stash", "blame", "tag", "cherry-pick", "submodule", "reflog", "hook"),
    "archives-compression": ("tar", "gzip", "gunzip", "zip", "unzip", "xz", "zstd", "bzip2",
                             "archive", "archives", "compress", "compression", "decompress",
                             "extract", "7z", "tarball", "split"),
    "system-administration": ("systemd", "systemctl", "service", "services", "user", "users",
                              "group", "groups", "process", "processes", "apt", "dpkg",
                              "mount", "journalctl", "sysctl", "kernel", "memory", "cpu",
                              "logrotate", "daemon", "hostname", "locale", "swap"),
    "networking-http": ("http", "https", "curl", "wget", "dns", "port", "ports", "socket",
                        "tls", "ssl", "request", "requests", "endpoint", "ping", "dig", "ss",
                        "netstat", "header", "headers", "proxy", "url", "server", "api"),
    "security-permissions": ("permission", "permissions", "chmod", "chown", "setuid", "acl",
                             "setfacl", "ssh", "gpg", "encrypt", "encryption", "hash", "secret",
                             "secrets", "umask", "audit", "password", "passwords", "ownership",
                             "key", "keys", "certificate", "sudoers"),
    "scientific-computing": ("numpy", "scipy", "numerical", "integration", "matrix", "statistics",
                             "regression", "fit", "fitting", "simulation", "fft", "gnuplot", "bc",
                             "units", "integral", "equation", "interpolation", "mean", "variance",
                             "histogram", "random"),
    "software-build-debug": ("build", "compile", "compiler", "make", "makefile", "cmake", "gcc",
                             "gdb", "valgrind", "debug", "debugging", "test", "tests", "pytest",
                             "segfault", "linker", "warning", "warnings", "crash", "backtrace",
                             "bug", "profile"),
    "log-analysis": ("log", "logs", "access log", "syslog", "journal", "error rate", "latency",
                     "percentile", "percentiles", "nginx", "apache", "requests per", "status code",
                     "5xx", "4xx", "ip addresses", "traffic"),
    "scheduling-automation": ("cron", "crontab", "schedule", "scheduled", "scheduling", "timer",
                              "timers", "periodic", "flock", "inotify", "inotifywait", "watch",
                              "retry", "backoff", "at job", "nightly", "hourly", "automation"),
    "dependency-management": ("pip", "venv", "virtualenv", "requirements", "npm", "package.json",
                              "lock", "lockfile", "version", "versions", "pin", "pinning",
                              "dependency", "dependencies", "conflict", "poetry", "wheel",
                              "vendor", "upgrade"),
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_KEYWORDS)

# Binaries that point strongly at one category.
BIN_CATEGORY: dict[str, str] = {
    "git": "git", "sqlite3": "databases", "psql": "databases", "duckdb": "databases",
    "mysql": "databases", "jq": "data-processing", "yq": "data-processing",
    "tar": "archives-compression", "zip": "archives-compression", "unzip": "archives-compression",
    "xz": "archives-compression", "zstd": "archives-compression", "7z": "archives-compression",
    "gzip": "archives-compression", "bzip2": "archives-compression",
    "crontab": "scheduling-automation", "at": "scheduling-automation",
    "inotifywait": "scheduling-automation", "gdb": "software-build-debug",
    "valgrind": "software-build-debug", "cmake": "software-build-debug",
    "make": "software-build-debug", "gcc": "software-build-debug",
    "pip": "dependency-management", "npm": "dependency-management",
    "gpg": "security-permissions", "setfacl": "security-permissions",
    "ssh-keygen": "security-permissions", "openssl": "security-permissions",
    "curl": "networking-http", "wget": "networking-http", "dig": "networking-http",
    "ss": "networking-http", "systemctl": "system-administration",
    "journalctl": "system-administration", "useradd": "system-administration",
    "gnuplot": "scientific-computing", "bc": "scientific-computing",
    "iconv": "text-processing", "sed": "text-processing", "awk": "text-processing",
    "rsync": "file-operations", "find": "file-operations",
}

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
    cat: re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(k) for k in kws) + r")(?![\w-])")
    for cat, kws in CATEGORY_KEYWORDS.items()
}


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def normalize_category(given: str) -> str:
    slug = slugify(given)
    if slug in CATEGORY_KEYWORDS:
        return slug
    return ALIASES.get(slug, slug)


def infer_category(name: str, description: str, body: str, bins: list[str]) -> str:
    """Keyword vote: the name counts most, then the description, then the body and binaries."""
    scores: Counter[str] = Counter()
    weighted = ((name.replace("-", " ").lower(), 3.0), (description.lower(), 2.0),
                (body[:4000].lower(), 0.25))
    for cat, pattern in _PATTERNS.items():
        for text, weight in weighted:
            scores[cat] += weight * len(pattern.findall(text))
    for b in bins:
        if b in BIN_CATEGORY:
            scores[BIN_CATEGORY[b]] += 1.5
    if not scores or max(scores.values()) == 0:
        return "uncategorized"
    best = max(scores.values())
    return next(c for c in CATEGORIES if scores[c] == best)
