"""Which names and lines carry a credential of an outside service, and which vendors bill by
use. One place for both: needs.api_key (pipeline/filters/external.py) takes the keys of
ordinary services, executable.paid_service the keys and APIs of vendors billed by use."""
from __future__ import annotations

import re
from functools import lru_cache

# env var names that hold a credential
_CRED_SUFFIX = (r"API_?KEY|API_TOKEN|API_SECRET|ACCESS_TOKEN|AUTH_TOKEN|BEARER_TOKEN|BOT_TOKEN|TOKEN|"
                r"SECRET_KEY|CLIENT_SECRET|APP_SECRET|SECRET|ACCESS_KEY(_ID)?|SECRET_ACCESS_KEY|PAT|LICENSE_KEY")
CREDENTIAL_VAR = re.compile(rf"\b(?:[A-Z][A-Z0-9]*_)*(?:{_CRED_SUFFIX})\b")
# Secrets an app the skill builds defines for itself, or flags that only mention a token.
_LOCAL_SECRET = re.compile(
    r"^(JWT|SESSION|NEXTAUTH|AUTH|BETTER_AUTH|ENCRYPTION|CSRF|XSRF|COOKIE|SIGNING|SECRET|APP|DJANGO|FLASK|"
    r"RAILS|LARAVEL|TEST|DUMMY|FAKE|EXAMPLE|MY|LOCAL|CI|WIDGET|RECAPTCHA|HCAPTCHA|TURNSTILE|CAPTCHA|"
    r"REFRESH|ID|CACHE|HASH|SALT|WEBHOOK)(_|$)|DISABLE|ENABLE|_MAX_|_LIMIT|COUNT|USAGE|BUDGET", re.I)
_CI_SECRET = re.compile(r"\$\{\{\s*secrets\.|secrets\.[A-Z_]+\s*\}\}")  # a CI file the skill writes


@lru_cache(maxsize=4096)   # the same lines are read by several rules of one skill
def credential_vars(text: str) -> tuple[str, ...]:
    """Env var names in `text` that hold a credential of some outside service."""
    if _CI_SECRET.search(text):
        return ()
    return tuple(m.group(0) for m in CREDENTIAL_VAR.finditer(text)
                 if not _LOCAL_SECRET.search(m.group(0)) and "_" in m.group(0) or m.group(0) in ("API_KEY", "API_TOKEN"))


# Vendors whose API is billed by use (LLM providers, hosted sandboxes and browsers, vector
# stores): needing their key is a paid service (executable.paid_service), not just an account.
METERED_VENDORS = (
    "openai", "anthropic", "claude api", "gemini", "google ai", "google_ai", "vertex", "cohere", "mistral", "groq",
    "openrouter", "deepseek", "perplexity", "together", "fireworks", "replicate", "e2b", "browserless",
    "pinecone", "elevenlabs", "assemblyai", "deepgram", "stability", "midjourney", "serpapi", "tavily", "exa",
    "firecrawl", "scrapingbee", "brightdata", "xai", "grok", "voyage",
)
METERED_VENDOR = re.compile(r"(?<![A-Za-z])(" + "|".join(re.escape(v).replace("\\ ", "[ _-]?") for v in METERED_VENDORS)
                      + r")(?![a-z])", re.I)
METERED_USE = re.compile(rf"(?<![A-Za-z])({'|'.join(re.escape(v) for v in METERED_VENDORS)})(?![a-z])"
                           rf"[\w.]*[ _-]?(api[ _-]?key|api[ _-]?token|key|token|api\b|credits?|account)", re.I)


_URL = re.compile(r"https?://\S+")


def blank_urls(text: str) -> str:
    """A vendor in a link (its docs, a source repo) is a reference, not a use; same length keeps spans."""
    return _URL.sub(lambda m: " " * len(m.group(0)), text)


@lru_cache(maxsize=4096)
def metered(text: str) -> bool:
    """Does `text` name the key, token or API of a vendor billed by use?"""
    return bool(METERED_USE.search(blank_urls(text)) or any(METERED_VENDOR.match(v) for v in credential_vars(text)))
