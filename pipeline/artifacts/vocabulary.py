"""The controlled vocabulary of machine-state kinds that skills consume and produce.

Each kind is defined once, here: the file extensions, file names, binaries and prose words
that signal it, and the sentences that describe it as machine state. Scenario inference
writes its canonical sentences from these templates only, so two real skills where one
leaves what the other needs get the very same sentence (and so meet in one graph node).

Signals by binary: ``reads`` lists commands whose run means the kind is there before
(``psql`` needs a PostgreSQL database), ``writes`` commands that leave it behind
(``pg_dump`` leaves an SQL dump). An entry may name a subcommand: ``"git bisect"``.
"""
from __future__ import annotations

from dataclasses import dataclass

IN_WORKDIR = "{what} is in the working directory"
MADE_FROM = "a new {bare}, made from an input of the same kind, has just been saved"
CHANGED = "a modified {bare}, with new edits not yet reviewed, is in place"


@dataclass(frozen=True)
class StateKind:
    name: str
    noun: str                                  # "a CSV table"; "{q}" marks where a qualifier goes
    extensions: tuple[str, ...] = ()           # without the dot, lower case; "tar.gz" allowed
    filenames: tuple[str, ...] = ()            # exact base names: Makefile, Dockerfile
    reads: tuple[str, ...] = ()                # commands that need the kind present
    writes: tuple[str, ...] = ()               # commands that leave the kind behind
    words: tuple[str, ...] = ()                # prose phrases, lower case, matched on word boundaries
    present_template: str = IN_WORKDIR         # "{what}" is the noun phrase
    produced_template: str = MADE_FROM         # the kind made anew from an input of the same kind

    def what(self, qualifier: str | None = None) -> str:
        noun = self.noun.replace("{q}", qualifier or "").replace("  ", " ")
        if qualifier and "{q}" not in self.noun:
            noun = f"{noun} ({qualifier})"
        return noun.strip()

    def present(self, qualifier: str | None = None) -> str:
        """The kind is there, ready to be used: the state a consumer starts from and a producer leaves."""
        return _capital(self.present_template.format(what=self.what(qualifier))) + "."

    def produced(self, qualifier: str | None = None) -> str:
        """A new instance made from an input of the same kind (a CSV table cleaned into a new one)."""
        what = self.what(qualifier)
        bare = what.removeprefix("a ").removeprefix("an ")
        return _capital(self.produced_template.format(what=what, bare=bare)) + "."


def _capital(s: str) -> str:
    return s[:1].upper() + s[1:]


def _k(name: str, noun: str, ext: str = "", files: str = "", reads: str = "", writes: str = "",
       words: str = "", present: str = IN_WORKDIR, produced: str = MADE_FROM) -> StateKind:
    split = lambda s, sep=" ": tuple(x.strip() for x in s.split(sep) if x.strip())  # noqa: E731
    return StateKind(name, noun, split(ext), split(files), split(reads, ","), split(writes, ","),
                     split(words, ","), present, produced)


_SERVICE = "{what} is running and reachable on this machine"
_SERVICE_CHANGED = "data in {what} has been changed by the previous step"
_FS = "{what} are set on files in the working directory"

# Order matters twice: it is the order of kinds in a sentence naming several, and an
# extension claimed by two kinds belongs to the first.
KINDS: tuple[StateKind, ...] = (
    _k("git-repository", "a git repository", files=".git .gitignore .gitattributes",
       reads="git status, git add, git commit, git push, git pull, git checkout, git switch, git merge, git "
             "stash, git branch, git tag, git worktree, git submodule, gh",
       writes="git clone, git init", words="git repository, git repo, working tree, pull request, git branch",
       produced="a new commit sits on top of the branch of {what} in the working directory"),
    _k("git-history", "a git repository with a history of commits",
       reads="git log, git bisect, git blame, git show, git reflog, git rebase, git cherry-pick, git revert, "
             "git shortlog, git rev-list", words="commit history, git history, git log, bisect"),
    _k("patch-file", "a patch file", ext="patch diff", reads="patch, git apply, git am",
       writes="diff, git diff, git format-patch", words="patch file, unified diff"),
    _k("csv-table", "a CSV table", ext="csv", reads="csvcut, csvstat, csvsql, csvlook, csvgrep, mlr, xsv, qsv",
       writes="in2csv", words="csv file, csv files, csv data, comma-separated"),
    # Apart from CSV: the delimiter is machine state a reader must match (cut -f, join -t, sort -t),
    # and the TSV that awk/jq pipelines leave would otherwise pile onto every CSV reader as one hub.
    _k("tsv-table", "a tab-separated (TSV) text table", ext="tsv tab", words="tsv file, tsv files, tab-separated"),
    _k("jsonl-records", "a JSONL file of records", ext="jsonl ndjson", words="jsonl, ndjson, json lines"),
    _k("json-document", "a JSON document", ext="json geojson", reads="jq", words="json file, json document, json data"),
    _k("yaml-config", "a YAML configuration file", ext="yaml yml", reads="yq", words="yaml file, yaml config"),
    _k("config-file", "a configuration file", ext="toml ini conf cfg properties env",
       words="config file, configuration file, dotfile"),
    _k("xml-document", "an XML document", ext="xml xsd xsl xslt rss atom", reads="xmllint, xmlstarlet, xsltproc",
       words="xml file, xml document"),
    _k("markdown-doc", "a Markdown document", ext="md markdown mdx rst adoc", reads="markdownlint",
       words="markdown file, markdown document"),
    _k("latex-document", "a LaTeX document", ext="tex bib", reads="pdflatex, xelatex, latexmk, bibtex",
       words="latex document"),
    _k("pdf-document", "a PDF document", ext="pdf", reads="pdftotext, pdfinfo, qpdf, pdftk, pdfgrep",
       writes="pdflatex, xelatex, latexmk, wkhtmltopdf", words="pdf file, pdf document, pdfs"),
    _k("office-document", "an office document (spreadsheet, word-processor or slides file)",
       ext="xlsx xls ods docx doc odt pptx ppt", reads="libreoffice, soffice",
       words="excel file, spreadsheet, word document, slide deck"),
    _k("html-page", "an HTML page", ext="html htm xhtml", reads="tidy", words="html page, html file, static site"),
    _k("text-file", "a plain text file", ext="txt text", words="text file, plain text"),
    _k("log-file", "a log file", ext="log", reads="journalctl, logrotate, lnav, goaccess",
       words="log file, log files, logs, access log, error log, syslog"),
    _k("shell-script", "a shell script", ext="sh bash zsh fish", reads="shellcheck, shfmt, bats",
       words="shell script, bash script"),
    _k("source-tree", "a {q} source tree", ext="py js mjs cjs ts tsx jsx go rs c h cc cpp hpp java kt rb php "
       "swift scala lua pl r jl cs ex exs hs ml zig dart vue svelte",
       reads="ruff, black, flake8, pylint, mypy, eslint, prettier, gofmt, rustfmt, clang-format, ctags, rg, "
             "semgrep, tsc", words="source code, codebase, code base, source tree", produced=CHANGED),
    _k("build-project", "a {q} project with a build configuration",
       files="Makefile makefile CMakeLists.txt meson.build build.gradle pom.xml Cargo.toml go.mod "
             "build.zig configure.ac SConstruct BUILD.bazel",
       reads="make, cmake, meson, ninja, cargo build, go build, gradle, mvn, bazel, npm run, yarn build, "
             "pnpm build", words="build system, makefile, build configuration"),
    _k("test-suite", "a {q} project with a test suite", reads="pytest, jest, vitest, mocha, go test, cargo test, "
       "npm test, tox, nox, ctest, bats, phpunit, rspec, unittest", words="test suite, unit tests, test cases"),
    _k("dependency-manifest", "a dependency manifest",
       files="requirements.txt requirements-dev.txt pyproject.toml setup.py setup.cfg Pipfile poetry.lock "
             "package.json package-lock.json yarn.lock pnpm-lock.yaml Gemfile Gemfile.lock composer.json "
             "Cargo.lock go.sum uv.lock",
       reads="pip-audit, safety, npm audit, npm ci, poetry lock, uv lock",
       words="dependency manifest, lockfile, lock file, dependencies list"),
    _k("python-environment", "a Python virtual environment with packages installed", files=".venv venv",
       reads="pip freeze, pip list, pip show", writes="pip install, python -m venv, python3 -m venv, virtualenv, "
       "uv venv, uv pip, poetry install, conda create, pipx install", words="virtual environment, virtualenv, venv"),
    _k("compiled-binary", "a compiled executable", ext="o so a out exe elf wasm dylib",
       reads="objdump, nm, readelf, strip, ldd, gdb, valgrind, strace, ltrace", writes="gcc, g++, clang, cc, rustc, "
       "go build, cargo build, zig build", words="compiled binary, executable binary, shared library, object file"),
    _k("tar-archive", "a tar archive", ext="tar tar.gz tgz tar.xz txz tar.bz2 tbz2 tar.zst",
       words="tarball, tar archive"),
    _k("zip-archive", "a zip archive", ext="zip jar whl 7z", reads="unzip, zipinfo", writes="zip, 7z",
       words="zip archive, zip file"),
    _k("compressed-file", "a compressed file", ext="gz xz zst bz2 lz4 br lzma", reads="gunzip, unxz, unzstd, zcat, "
       "xzcat, zstdcat, bunzip2", writes="gzip, xz, zstd, bzip2, lz4, pigz, brotli", words="compressed file"),
    _k("sqlite-database", "an SQLite database file", ext="sqlite sqlite3 db", reads="sqlite3, sqlite-utils, datasette",
       words="sqlite database, sqlite db, sqlite"),
    _k("duckdb-database", "a DuckDB database file", ext="duckdb", reads="duckdb", words="duckdb"),
    _k("parquet-dataset", "a Parquet dataset", ext="parquet arrow feather orc avro", words="parquet, apache arrow"),
    _k("sql-dump", "an SQL dump or schema script", ext="sql", writes="pg_dump, pg_dumpall, mysqldump",
       words="sql dump, database dump, schema migration, sql script"),
    _k("postgres-database", "a PostgreSQL database", reads="psql, pg_dump, pg_dumpall, pg_restore, createdb, "
       "dropdb, pg_isready, pgbench, pg_ctl", words="postgres, postgresql", present=_SERVICE,
       produced=_SERVICE_CHANGED),
    _k("mysql-database", "a MySQL database", reads="mysql, mysqldump, mysqladmin, mariadb",
       words="mysql, mariadb", present=_SERVICE, produced=_SERVICE_CHANGED),
    _k("redis-store", "a Redis server", reads="redis-cli, redis-server", words="redis", present=_SERVICE,
       produced=_SERVICE_CHANGED),
    _k("http-service", "a local HTTP service on a loopback port",
       reads="nginx, uvicorn, gunicorn, flask run, http-server, caddy, ab, wrk, hey",
       words="localhost, 127.0.0.1, loopback, local server, web server, dev server, http server, rest api",
       present="{what} is listening for requests",
       produced="{what} has been reconfigured by the previous step and serves the new setup"),
    _k("http-response", "a saved HTTP response", writes="curl, wget, http, httpie, xh",
       words="http response, response body, status code"),
    _k("tls-certificate", "a TLS certificate with its private key", ext="pem crt cer csr key p12 pfx",
       writes="openssl req, openssl x509, openssl genrsa, openssl genpkey, certbot, mkcert, step",
       reads="openssl s_client, openssl verify", words="tls certificate, ssl certificate, x.509, certificate"),
    _k("ssh-key", "an SSH key pair", files="id_rsa id_ed25519 id_ecdsa authorized_keys known_hosts",
       reads="ssh-add, ssh-copy-id, ssh, scp, sftp", writes="ssh-keygen", words="ssh key, ssh keys, key pair"),
    _k("gpg-key", "a GnuPG keyring with a key pair", ext="asc sig", reads="gpg --verify, gpg --sign, gpgv",
       writes="gpg --gen-key, gpg --full-generate-key, gpg --quick-gen-key, gpg --import",
       words="gpg key, pgp key, gnupg, keyring"),
    _k("encrypted-file", "an encrypted file", ext="gpg age enc aes", reads="age -d, gpg --decrypt, gpg -d",
       writes="age, gpg -c, gpg --symmetric, gpg --encrypt, gpg -e, openssl enc",
       words="encrypted file, encrypt, decrypt"),
    _k("checksum-manifest", "a checksum manifest", ext="sha256 sha512 md5 sha1", files="SHA256SUMS MD5SUMS "
       "SHA512SUMS checksums.txt", writes="sha256sum, sha512sum, md5sum, sha1sum, b2sum, shasum",
       words="checksum, checksums, sha256, hash manifest"),
    _k("file-permissions", "ownership and permission bits", reads="stat, getfacl, namei",
       writes="chmod, chown, chgrp, setfacl, umask, chattr", words="file permissions, permission bits, setuid, acl",
       present=_FS, produced="files in the working directory now have new owners and modes"),
    _k("user-accounts", "local user and group accounts",
       reads="getent, id, groups, chage", writes="useradd, usermod, userdel, groupadd, adduser, passwd, visudo",
       words="user account, user accounts, sudoers", present="{what} exist on this machine",
       produced="a newly created user account is registered on this machine"),
    _k("systemd-unit", "a systemd unit file", ext="service timer socket mount", reads="systemctl, journalctl",
       words="systemd unit, systemd service, unit file, systemd timer"),
    _k("cron-schedule", "a crontab schedule", files="crontab", reads="crontab, anacron",
       words="cron job, cron jobs, crontab, cron schedule, cron expression"),
    _k("running-process", "a running process", reads="ps, pgrep, pkill, kill, killall, top, htop, lsof, pidof, "
       "strace, fuser, nohup", words="running process, pid, daemon, background process",
       present="{what} is alive on this machine",
       produced="a new background process has been started on this machine"),
    _k("firewall-rules", "firewall rules", reads="iptables, ip6tables, nft, ufw",
       words="firewall rule, firewall rules, iptables, nftables", present="{what} are loaded on this machine",
       produced="the packet filter of this machine now enforces a changed rule set"),
    _k("container-image", "a container build context with a Dockerfile", files="Dockerfile Containerfile "
       "docker-compose.yml compose.yaml .dockerignore", reads="hadolint, docker build, podman build, buildah",
       words="dockerfile, container image, docker image"),
    _k("image-file", "an image file", ext="png jpg jpeg gif webp bmp tif tiff svg ico heic avif",
       reads="identify, exiftool, tesseract, pngquant, optipng, jpegoptim", writes="convert, magick, mogrify, "
       "cwebp, rsvg-convert, dot", words="image file, image files, screenshot, thumbnail"),
    _k("plot-image", "a chart image rendered from data", writes="gnuplot", words="plot, chart, histogram, "
       "matplotlib, savefig, seaborn, plotly"),
    _k("audio-file", "an audio file", ext="mp3 wav flac ogg m4a aac opus aiff", reads="sox, soxi",
       words="audio file, audio track, waveform"),
    _k("video-file", "a video file", ext="mp4 mkv mov webm avi m4v flv", reads="ffmpeg, ffprobe, mediainfo",
       words="video file, video files, videos"),
    _k("subtitle-file", "a subtitle file", ext="srt vtt ass", words="subtitles, captions"),
    _k("email-message", "an email message file", ext="eml mbox msg", words="mbox, eml file"),
    _k("calendar-file", "an iCalendar file", ext="ics", words="icalendar, ics file"),
    _k("notebook", "a Jupyter notebook", ext="ipynb", reads="jupyter, nbconvert, papermill",
       words="jupyter notebook, notebook"),
    _k("graph-diagram", "a diagram source file", ext="dot gv mmd puml", reads="mmdc, plantuml",
       words="mermaid diagram, graphviz, diagram"),
    _k("report", "a written report", words="report, summary report, audit report, findings"),
    _k("directory-tree", "a directory tree of files", reads="find, tree, rsync, du, ls, fd, fdfind, locate",
       writes="mkdir, rsync, cp", words="directory tree, folder structure, directory structure"),
)

BY_NAME: dict[str, StateKind] = {k.name: k for k in KINDS}
ORDER: dict[str, int] = {k.name: i for i, k in enumerate(KINDS)}


def _first_claim(pairs) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, kind in pairs:
        out.setdefault(key, kind)
    return out


BY_EXTENSION: dict[str, str] = _first_claim((e, k.name) for k in KINDS for e in k.extensions)
BY_FILENAME: dict[str, str] = _first_claim((f, k.name) for k in KINDS for f in k.filenames)
# command ("psql" or "git bisect") -> kinds it needs / kinds it leaves
READS: dict[str, tuple[str, ...]] = {}
WRITES: dict[str, tuple[str, ...]] = {}
for _kind in KINDS:
    for _cmd in _kind.reads:
        READS[_cmd] = READS.get(_cmd, ()) + (_kind.name,)
    for _cmd in _kind.writes:
        WRITES[_cmd] = WRITES.get(_cmd, ()) + (_kind.name,)
WORDS: dict[str, str] = _first_claim((w, k.name) for k in KINDS for w in k.words)
COMMANDS: frozenset[str] = frozenset(c.split()[0] for c in (*READS, *WRITES))

# The language a source file's extension names: the qualifier of source-tree and its kin.
LANGUAGE_BY_EXTENSION: dict[str, str] = {
    "py": "Python", "js": "JavaScript", "mjs": "JavaScript", "cjs": "JavaScript", "jsx": "JavaScript",
    "ts": "TypeScript", "tsx": "TypeScript", "go": "Go", "rs": "Rust", "c": "C", "h": "C", "cc": "C++",
    "cpp": "C++", "hpp": "C++", "java": "Java", "kt": "Kotlin", "rb": "Ruby", "php": "PHP", "swift": "Swift",
    "scala": "Scala", "lua": "Lua", "pl": "Perl", "r": "R", "jl": "Julia", "cs": "C#", "ex": "Elixir",
    "exs": "Elixir", "hs": "Haskell", "ml": "OCaml", "zig": "Zig", "dart": "Dart", "vue": "JavaScript",
    "svelte": "JavaScript"}
LANGUAGE_BY_COMMAND: dict[str, str] = {
    "pytest": "Python", "tox": "Python", "nox": "Python", "ruff": "Python", "black": "Python", "flake8": "Python",
    "pylint": "Python", "mypy": "Python", "python": "Python", "python3": "Python", "pip": "Python",
    "jest": "JavaScript", "vitest": "JavaScript", "mocha": "JavaScript", "eslint": "JavaScript", "npm": "JavaScript",
    "yarn": "JavaScript", "pnpm": "JavaScript", "node": "JavaScript", "tsc": "TypeScript", "go": "Go",
    "gofmt": "Go", "cargo": "Rust", "rustc": "Rust", "rustfmt": "Rust", "gcc": "C", "clang": "C", "cc": "C",
    "g++": "C++", "cmake": "C++", "make": "C", "mvn": "Java", "gradle": "Java", "rspec": "Ruby",
    "phpunit": "PHP", "ctest": "C++", "zig": "Zig"}
# A kind that already says another ("a git repository with a history of commits" says "a git
# repository"): a state naming both names only the first.
IMPLIES: dict[str, str] = {"git-history": "git-repository", "test-suite": "source-tree",
                           "build-project": "source-tree"}

# Kinds a prose word names only as a result ("writes a report", "plots a chart"): a word
# alone never makes them an input.
OUTPUT_ONLY = frozenset({"report", "plot-image", "http-response"})
QUALIFIED = frozenset(k.name for k in KINDS if "{q}" in k.noun)


def kind(name: str) -> StateKind:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown state kind {name!r}; known: {', '.join(BY_NAME)}") from None


def kind_of_file(filename: str) -> str | None:
    """The kind a file name signals, by exact name first, then its longest known extension."""
    base = filename.rstrip("/").rsplit("/", 1)[-1]
    if base in BY_FILENAME:
        return BY_FILENAME[base]
    parts = base.lower().split(".")
    for i in range(max(1, len(parts) - 3), len(parts)):   # "tar.gz" at most: a long dotted run costs nothing
        ext = ".".join(parts[i:])
        if ext in BY_EXTENSION:
            return BY_EXTENSION[ext]
    return None


def language_of_file(filename: str) -> str | None:
    return LANGUAGE_BY_EXTENSION.get(filename.rsplit(".", 1)[-1].lower()) if "." in filename else None


# States of skills with thin evidence: about their main tool, else their own topic (so they
# never pile into one hub). Pre and post are worded apart on purpose: with the same long
# topic in both, "material about X" / "a finished X result" embed as one node (a self-loop).
# What such skills leave is, in practice, a written document: saying so (Markdown) lets a
# bridge carry a path on to skills that read documents.
EMPTY_WITH_TOOL = "An empty working directory is ready on a machine where {tool} is installed."
EMPTY_FOR_TOPIC = "An empty working directory is ready for {topic}."
TOOL_INPUTS = "{tool} is installed, and the files it works on are in the working directory."
TOOL_SUMMARY = "A Markdown summary of what {tool} reported is in the working directory."
TOPIC_INPUTS = "The working directory holds the inputs of {topic}."
TOPIC_SUMMARY = "A Markdown document with the results of {topic} is in the working directory."


def report_on(kind_name: str, qualifier: str | None = None) -> str:
    """What a skill that only reads or checks a kind leaves behind: a report about it."""
    subject = kind(kind_name).what(qualifier)
    return kind("report").present(f"on {subject}").replace(f"({'on ' + subject})", f"on {subject}")


def present_state(kinds: list[tuple[str, str | None]]) -> str:
    """One text for several kinds present at once, in vocabulary order (so the same set of
    kinds always reads the same); kinds in the working directory share one sentence."""
    implied = {IMPLIES[k] for k, _ in kinds if k in IMPLIES}
    ordered = sorted({(k, q) for k, q in kinds if k not in implied}, key=lambda kq: (ORDER[kq[0]], kq[1] or ""))
    in_workdir = [kind(k).what(q) for k, q in ordered if kind(k).present_template == IN_WORKDIR]
    out, joined = [], False
    for k, q in ordered:
        if kind(k).present_template != IN_WORKDIR:
            out.append(kind(k).present(q))
        elif not joined:
            joined = True
            if len(in_workdir) == 1:
                out.append(kind(k).present(q))
            else:
                listed = ", ".join(in_workdir[:-1]) + f" and {in_workdir[-1]}"
                out.append(_capital(f"{listed} are in the working directory."))
    return " ".join(out)
