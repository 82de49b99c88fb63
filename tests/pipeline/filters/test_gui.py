"""executable.gui in context: GUI actions fail, GUI-looking words of terminal work pass."""
from __future__ import annotations

import pytest

from pipeline.filters.gui import gui
from tests.pipeline.filters.rule_helpers import assert_flagged, assert_passes, make_skill

RULE = "executable.gui"


@pytest.mark.parametrize("line", [
    "Open Finder and drag the exported folder onto the Dropbox window.",
    "3. Click the Save button, then close the dialog.",
    "Use Photoshop to crop the screenshots before you commit them.",
    "- Drag the generated .icns file into the Xcode asset catalog.",
    "Right-click the project icon and choose Properties.",
])
def test_gui_actions_fail(line):
    skill = make_skill(line)
    assert_flagged(gui(skill), RULE, skill, line)


def test_a_gui_step_written_as_a_comment_in_a_code_block_fails():
    skill = make_skill("""
        ```bash
        simctl boot "iPhone 15"
        # 4. Click the Allow button in the permission dialog
        simctl io booted screenshot shot.png
        ```
    """)
    assert_flagged(gui(skill), RULE, skill, "# 4. Click the Allow button in the permission dialog")


@pytest.mark.parametrize("text", [
    # fzf and friends are "fuzzy finders"; a Go repo has "finder functions"; a tool's title
    "Pick a branch with fzf, the fuzzy finder: `git branch | fzf`.",
    "├── find.go          # Finder functions for the resource",
    "# Knip Unused Code and Dependency Finder",
    # SQL window functions, tab-separated files, a TUI menu, dialog(1) in a curses installer
    "Rank rows per group with a window function: `SELECT rank() OVER (PARTITION BY g ORDER BY v)`.",
    "Export tab-separated values with `mlr --itsv --ojson cat data.tsv`.",
    "Navigate the tig menu with j/k and press q to quit.",
    "The curses front end uses `dialog --menu` to ask for the target disk.",
    # the Python click library
    "Define the entry point with `@click.command()` and add options with click.option.",
    "Group the subcommands with a click group and its command decorators.",
    # a CLI tool that drives a browser receives the words as a quoted prompt
    'firecrawl interact --prompt "Click the login button" https://example.com',
    # product descriptions, not steps
    "Evidence is a code-driven alternative to drag-and-drop BI tools.",
    "A quiz module may be multiple-choice, drag-and-drop or spot-the-bug.",
])
def test_gui_words_of_terminal_work_pass(text):
    assert_passes(gui(make_skill(text)), RULE)


def test_an_email_template_in_a_code_block_is_content_not_a_step():
    skill = make_skill("""
        ```
        Subject: Password expiry notice
        Please click the link below to keep your account active.
        ```
    """)
    assert_passes(gui(skill), RULE)


def test_a_quoted_message_for_the_user_is_not_a_step():
    skill = make_skill("""
        Suggest the editor at the end:

        > Click any heading to edit it, then click Save. Press Ctrl+C to stop the server.
    """)
    assert_passes(gui(skill), RULE)


def test_opening_a_desktop_file_manager_fails():
    skill = make_skill("2. Open the Files app (Nautilus) and go to the Downloads folder.")
    assert_flagged(gui(skill), RULE, skill, "Open the Files app (Nautilus)")


@pytest.mark.parametrize("line", [
    "Use the Claude in Chrome tools to open the listing and read the salary.",
    "1. Open the careers page in Firefox and copy the posting.",
])
def test_operating_a_desktop_browser_fails(line):
    skill = make_skill(line)
    assert_flagged(gui(skill), RULE, skill, line)


@pytest.mark.parametrize("text", [
    "Render the page in headless Chrome: `chromium --headless --dump-dom page.html`.",
    "Playwright launches Chrome and saves `shot.png`.",
    "Install the chrome-devtools-mcp package.",
    "Measure Core Web Vitals using Chrome DevTools MCP traces.",
])
def test_scripted_browsers_pass(text):
    assert_passes(gui(make_skill(text)), RULE)
