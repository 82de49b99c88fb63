"""The line pre-filter the rules use (pipeline/filters/required_literals.py) never drops a line
a pattern matches: every match holds one of the pattern's required literals, case folding
included, so a rule that looks only at the lines holding one gives what a search of every line
gives."""
from __future__ import annotations

import random
import re

import pytest

from pipeline.filters import (bundled_code, credentials, executable, exfiltration, external, gui, line_context,
                              outside_kinds, safety, workflow)
from pipeline.filters.base import find_lines
from pipeline.filters.required_literals import LineIndex, fold, line_index, may_match, required_literals


def _rule_patterns() -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for mod in (bundled_code, credentials, executable, exfiltration, external, gui, line_context, outside_kinds,
                safety, workflow):
        for name, value in vars(mod).items():
            values = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
            out += [(f"{mod.__name__}.{name}", v) for v in values if isinstance(v, re.Pattern)]
    return out


PATTERNS = _rule_patterns()


def test_every_character_ignorecase_matches_to_an_ascii_letter_folds_to_it():
    """Python's re matches four non-ASCII characters to ASCII letters under IGNORECASE; fold
    maps exactly those (a full scan of Unicode)."""
    letter = re.compile("[a-z0-9]", re.I)
    found = {chr(x) for x in range(0x80, 0x110000) if letter.fullmatch(chr(x))}
    assert found == {"\u0130", "\u0131", "\u017f", "\u212a"}
    for char in found:
        [ascii_letter] = [a for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, char, re.I)]
        assert fold(char) == ascii_letter
    assert fold("LİST ſecret KEY") == "list secret key"


def test_literals_of_sequences_alternatives_and_repeats():
    assert required_literals(re.compile(r"\b(get|create) (an? )?api[ _-]?keys?\b", re.I)) == {"api"} or \
        required_literals(re.compile(r"\b(get|create) (an? )?api[ _-]?keys?\b", re.I)) == {"key"}
    assert required_literals(re.compile(r"\b(metamask|phantom wallet)\b|\bmnemonic\b")) == \
        {"metamask", "phantom wallet", "mnemonic"}
    assert required_literals(re.compile(r"(ab)+x?")) == {"ab"}
    assert required_literals(re.compile(r"WALLET_[A-Z]+", re.I)) == {"wallet_"}   # compared lower case
    for open_ended in (r"\w+", r"[A-Z][a-z]*", r"(foo)?\d+", r"foo|\d", r"(?=abc)\w", "\n"):
        assert required_literals(re.compile(open_ended)) is None, open_ended


def _fuzz_lines(rng: random.Random, pattern: re.Pattern[str], n: int) -> list[str]:
    """Lines made of the pattern's own literals and words around them, in mixed case: lines it
    matches, and near misses."""
    pieces = sorted(required_literals(pattern) or ()) + re.findall(r"[A-Za-z_./:-]{2,}", pattern.pattern)[:60]
    filler = ["the", "a", "your", "to", "run", "  ", "-", "`", "$", "=", ":", "/", "(", '"', "X_API_KEY", "https://h.io/x"]
    lines = []
    for _ in range(n):
        words = [rng.choice(pieces + filler) for _ in range(rng.randint(1, 8))]
        line = rng.choice([" ", "", "_"]).join(words)
        lines.append("".join(c.upper() if rng.random() < 0.3 else c for c in line))
    return lines


@pytest.mark.parametrize("name, pattern", PATTERNS, ids=[n for n, _ in PATTERNS])
def test_no_line_a_rule_pattern_matches_lacks_its_literals(name, pattern):
    literals = required_literals(pattern)
    if literals is None:
        return
    rng = random.Random(name)
    for line in _fuzz_lines(rng, pattern, 400):
        if pattern.search(line):
            assert any(lit in fold(line) for lit in literals), (name, line)


def test_candidate_lines_are_every_matching_line_in_order():
    text = "\n".join(["intro", "Get an API key", "nothing", "set API_KEY=1", "", "api", "last Api"])
    pat = re.compile(r"\bapi\b", re.I)
    index = line_index(text)
    cands = index.candidates((pat,))
    assert cands == sorted(cands)
    assert {i for i, ln in enumerate(text.splitlines()) if pat.search(ln)} <= set(cands)
    assert index.candidates(()) is None and index.candidates((re.compile(r"\w+"),)) is None
    # the same lines as a full search, with line numbers and the limit
    patterns = [pat, re.compile(r"nothing")]
    brute = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), 1) if any(p.search(ln) for p in patterns)][:3]
    assert find_lines(text, patterns) == brute


def test_line_breaks_of_every_kind_count_as_splitlines_counts_them():
    text = "a\r\nkey one\x0bb\u2028key two\r\x85key three"
    pat = re.compile("key")
    lines = text.splitlines()
    assert [lines[i] for i in line_index(text).candidates((pat,))] == ["key one", "key two", "key three"]
    assert LineIndex(["x", ""]).candidates((pat,)) == []


def test_may_match_is_false_only_without_a_literal():
    pat = re.compile(r"\bkind\s+create\s+cluster\b", re.I)
    assert may_match("a CLUSTER", pat) and not may_match("kind create", pat)   # its longest literal
    assert may_match("anything", re.compile(r"\w+"))


def test_metered_vendor_names_hold_a_literal_of_the_vendor_pattern():
    """external.metered_lines looks only at lines holding a METERED_VENDOR literal: every vendor
    METERED_USE names (its match holds one, on the text with links blanked) must hold one, and no
    literal used on blanked text may hold a run of spaces."""
    literals = required_literals(credentials.METERED_VENDOR)
    for vendor in credentials.METERED_VENDORS:
        assert any(lit in vendor for lit in literals), vendor
    for pat in (credentials.METERED_VENDOR, external._MCP, external._MCP_TOOL, exfiltration._SENDER):
        assert not any("  " in lit for lit in required_literals(pat))


def test_hostile_text_costs_linear_work():
    """A 1 MiB text of one line or 100k lines full of a literal: each literal is looked for once
    per line, not once per occurrence, and the whole rule set stays quick."""
    import time

    from pipeline.filters import runner
    from tests.pipeline.filters.rule_helpers import skill_from_text

    for body in ("api key token " * 75_000, "api key token\n" * 75_000, "\x00\x01ſK" * 250_000):
        text = "---\nname: big\ndescription: A big one.\n---\n" + body
        index = line_index(text)
        start = time.perf_counter()
        cands = index.candidates((re.compile(r"\bapi[ _-]?key\b", re.I), re.compile("token")))
        assert cands is not None and len(cands) <= len(index.lines)
        runner.check_skill("x", skill_from_text(text))
        assert time.perf_counter() - start < 60


def test_candidate_lines_are_exactly_the_lines_holding_a_literal_short_list_or_long():
    rng = random.Random(5)
    words = [f"w{i}x" for i in range(30)] + ["a", "w1", "x w2", " ", "\t"]
    text = "\n".join("".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(400))
    lines = text.splitlines()
    for n in (3, 25):
        pattern = re.compile("|".join(f"w{i}x" for i in range(n)))
        literals = required_literals(pattern)
        assert len(literals) == n
        expected = [i for i, ln in enumerate(lines) if any(lit in fold(ln) for lit in literals)]
        assert LineIndex(lines).candidates((pattern,)) == expected
