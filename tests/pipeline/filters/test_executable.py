"""Executable rules: GUI, paid/private services, OS, binaries."""
from __future__ import annotations

from pipeline.filters import executable
from tests.pipeline.filters.rule_helpers import assert_flagged, assert_passes, line_of, make_skill
from workbench.models import Outcome

# --- gui -----------------------------------------------------------------------------

def test_gui_flags_clicking_through_an_installer():
    skill = make_skill("Then click the OK button in the installer to finish.")
    assert_flagged(executable.gui(skill), "executable.gui", skill,
                   "click the OK button in the installer")


def test_gui_flags_drag_and_drop():
    skill = make_skill("Drag and drop the exported file onto the upload area.")
    assert_flagged(executable.gui(skill), "executable.gui", skill, "Drag and drop the exported file")


def test_gui_passes_headless_note():
    skill = make_skill("""
        Runs headless, no GUI needed.
        Works on a server without a desktop app or GUI installer.
    """)
    assert_passes(executable.gui(skill), "executable.gui")


def test_gui_passes_terminal_words_that_look_like_gui_words():
    skill = make_skill("""
        Compute a rolling average over a sliding window of 5 rows.
        Split the file on tabs with `cut -f2 -d$'\\t'` and `find . -name '*.csv'`.
        Open the report with `less -S report.txt`.
    """)
    assert_passes(executable.gui(skill), "executable.gui")


def test_gui_passes_python_click_library():
    skill = make_skill(
        "The CLI is built with click; install the dependencies with `pip install -r requirements.txt`.")
    assert_passes(executable.gui(skill), "executable.gui")


# --- paid_service --------------------------------------------------------------------

def test_paid_service_flags_paid_plan_in_text():
    skill = make_skill("This skill requires a paid subscription to the export API.")
    assert_flagged(executable.paid_service(skill), "executable.paid_service", skill,
                   "requires a paid subscription to the export API.")


def test_paid_service_flags_intranet_url():
    skill = make_skill("Fetch the data with `curl https://reports.acme.corp/export.csv`.")
    assert_flagged(executable.paid_service(skill), "executable.paid_service", skill,
                   "curl https://reports.acme.corp/export.csv")


def test_paid_service_flags_paid_credentials_in_metadata():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              env: [OPENAI_API_KEY, DATA_DIR]
    """)
    res = executable.paid_service(skill)
    assert res.rule == "executable.paid_service"
    assert res.outcome == Outcome.FAIL
    assert "OPENAI_API_KEY" in res.evidence
    assert "DATA_DIR" not in res.evidence
    assert res.location == "metadata.openclaw.requires.env"


def test_paid_service_passes_free_local_service_and_license_line():
    skill = make_skill("""
        Works against a local PostgreSQL instance; no account needed.
        The free tier of the public API is enough for the sample data.
        License: MIT.
    """)
    assert_passes(executable.paid_service(skill), "executable.paid_service")


def test_paid_service_passes_local_env_vars_in_metadata():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              env: [PGHOST, PGPASSWORD, SFTP_HOST, DATA_DIR]
    """)
    assert_passes(executable.paid_service(skill), "executable.paid_service")


def test_paid_service_passes_docker_compose_internal_network():
    skill = make_skill(
        "The app and the database reach each other over the compose project's internal network; "
        "no ports are published.")
    assert_passes(executable.paid_service(skill), "executable.paid_service")


# --- os ------------------------------------------------------------------------------

def test_os_flags_darwin_only_declaration():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            os: [darwin]
    """)
    res = executable.operating_system(skill)
    assert res.rule == "executable.os"
    assert res.outcome == Outcome.FAIL
    assert "darwin" in res.evidence
    assert res.location == "metadata.openclaw.os"


def test_os_flags_top_level_windows_declaration():
    skill = make_skill(front_extra="os: [Windows]")
    res = executable.operating_system(skill)
    assert res.outcome == Outcome.FAIL
    assert "windows" in res.evidence


def test_os_flags_several_macos_only_commands():
    skill = make_skill("""
        ```bash
        brew install jq
        launchctl load ~/Library/LaunchAgents/com.demo.plist
        ```
    """)
    res = executable.operating_system(skill)
    assert_flagged(res, "executable.os", skill, "brew install jq")
    n = line_of(skill, "launchctl load")
    assert f"line {n}: launchctl load" in res.evidence


def test_os_passes_linux_declaration():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            os: [linux]
    """)
    assert_passes(executable.operating_system(skill), "executable.os")


def test_os_passes_multi_os_declaration_including_linux():
    skill = make_skill(front_extra="os: [darwin, linux]")
    assert_passes(executable.operating_system(skill), "executable.os")


def test_os_passes_a_single_macos_alternative_next_to_apt():
    skill = make_skill("""
        Install jq first:

        ```bash
        sudo apt-get install -y jq   # Debian/Ubuntu
        brew install jq              # macOS
        ```
    """)
    assert_passes(executable.operating_system(skill), "executable.os")


def test_os_passes_brew_as_one_install_option_next_to_a_language_package_manager():
    skill = make_skill("""
        Use the install path that matches your environment:
        - brew install k8sgpt
        - brew install k8sgpt/tap/k8sgpt-beta
        - go install github.com/k8sgpt-ai/k8sgpt@latest
    """)
    assert_passes(executable.operating_system(skill), "executable.os")
    # without the portable line the brew-only install is a macOS need still
    only_brew = make_skill("""
        - brew install k8sgpt
        - brew install k8sgpt/tap/k8sgpt-beta
    """)
    assert executable.operating_system(only_brew).outcome == Outcome.FAIL


def test_go_and_protoc_are_known_binaries():
    skill = make_skill(front_extra="metadata: {openclaw: {requires: {bins: [go, protoc]}}}")
    assert_passes(executable.binaries(skill), "executable.binaries")


def test_os_passes_systemd_set_subcommands():
    skill = make_skill("""
        ```bash
        sudo timedatectl set-timezone UTC
        sudo hostnamectl set-hostname web01
        git branch --set-upstream-to=origin/main
        ```
    """)
    assert_passes(executable.operating_system(skill), "executable.os")


# --- binaries ------------------------------------------------------------------------

def test_binaries_warns_about_unknown_binary():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              bins: [jq, frobnicate]
    """)
    res = executable.binaries(skill)
    assert res.rule == "executable.binaries"
    assert res.outcome == Outcome.WARN
    assert "frobnicate" in res.evidence
    assert "jq" not in res.evidence.split(":", 1)[1]


def test_binaries_warns_when_install_is_brew_only():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              bins: [frobnicate]
            install:
              - kind: brew
                formula: frobnicate
    """)
    res = executable.binaries(skill)
    assert res.outcome == Outcome.WARN
    assert "frobnicate" in res.evidence


def test_binaries_passes_known_binaries():
    skill = make_skill(front_extra="""
        allowed-tools: Bash(git:*) Read
        metadata:
          openclaw:
            requires:
              bins: [jq, sqlite3]
    """)
    res = executable.binaries(skill)
    assert_passes(res, "executable.binaries")
    for b in ("git", "jq", "sqlite3"):
        assert b in res.evidence


def test_binaries_passes_unknown_binary_with_pip_install():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              bins: [http]
            install:
              - kind: pip
                package: httpie
                bins: [http]
    """)
    assert_passes(executable.binaries(skill), "executable.binaries")


def test_binaries_passes_unknown_binary_with_top_level_apt_install():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              bins: [csvtool]
        install:
          - kind: apt
            package: csvtool
    """)
    assert_passes(executable.binaries(skill), "executable.binaries")


def test_binaries_passes_install_declared_in_json_string_metadata():
    skill = make_skill(front_extra="""
        metadata: '{"openclaw": {"requires": {"bins": ["http"]}, "install": [{"kind": "pip", "package": "httpie", "bins": ["http"]}]}}'
    """)
    assert "http" in skill.bins
    assert_passes(executable.binaries(skill), "executable.binaries")


def test_binaries_passes_skill_without_special_binaries():
    skill = make_skill()
    res = executable.binaries(skill)
    assert_passes(res, "executable.binaries")


def test_all_executable_rules_pass_a_clean_skill():
    skill = make_skill()
    for rule in executable.RULES:
        assert rule(skill).outcome == Outcome.PASS, rule.__name__


def test_os_passes_brew_as_a_fallback_next_to_apt():
    skill = make_skill("""
        ```bash
        if command -v apt-get >/dev/null; then sudo apt-get install -y age
        elif command -v brew >/dev/null; then brew install age
        fi
        ```
        On macOS without apt: `brew install age`.
    """)
    assert_passes(executable.operating_system(skill), "executable.os")


def test_os_flags_a_skill_that_says_it_is_macos_only():
    skill = make_skill("This skill is macOS-only: it drives the Notes app through `memo`.")
    assert_flagged(executable.operating_system(skill), "executable.os", skill, "This skill is macOS-only")


def test_paid_service_flags_payment_credentials_in_requires_env():
    skill = make_skill(front_extra="""
        metadata:
          openclaw:
            requires:
              env: [NEXUS_PAYMENT_PROOF]
    """)
    res = executable.paid_service(skill)
    assert res.outcome == Outcome.FAIL and "NEXUS_PAYMENT_PROOF" in res.evidence


def test_paid_service_flags_a_login_to_a_private_network_host():
    skill = make_skill("Copy the firmware with `scp build/fw.bin root@192.168.7.100:/tmp/`.")
    assert_flagged(executable.paid_service(skill), "executable.paid_service", skill, "root@192.168.7.100")


def test_paid_service_passes_loopback_and_public_documentation_addresses():
    skill = make_skill("Test with `ssh -p 2222 tester@127.0.0.1` and `curl http://203.0.113.5/` in the docs.")
    assert_passes(executable.paid_service(skill), "executable.paid_service")


def test_os_flags_a_skill_that_builds_an_ios_app():
    skill = make_skill(description="Write a native module for a mobile app in Swift (iOS) and Kotlin.", extra="""
        Register the module in the AppDelegate and rebuild.

        ```bash
        npx pod-install
        ```
    """)
    res = executable.operating_system(skill)
    assert res.outcome == Outcome.FAIL and res.rule == "executable.os"
    assert "Apple platforms" in res.evidence and "Swift for iOS" in res.evidence
    assert "an iOS app delegate" in res.evidence
    assert res.location == f"SKILL.md:{line_of(skill, 'Swift (iOS)')}"


def test_os_passes_server_swift_and_an_ios_section_deep_in_a_web_skill():
    server_swift = make_skill(description="Build a Vapor web service in Swift on Linux.", extra="""
        ```bash
        swift build && swift test
        ```
    """)
    assert_passes(executable.operating_system(server_swift), "executable.os")
    filler = "\n".join(f"- browser step {i}: `agent open https://localhost:{8000 + i}`" for i in range(30))
    web = make_skill(extra=filler + "\n\n### Mobile Safari (optional)\n"
                     "On a Mac with Xcode, list devices with `xcrun simctl list`.\n")
    assert_passes(executable.operating_system(web), "executable.os")
