"""The recipe library of the offline synthesizer: one module per category (or two close ones).

Importing this package registers every family in `REGISTRY` and every bridging step in
`ADAPTERS`; `by_category` lists a category's families in a stable order.
"""
from __future__ import annotations

from .base import ADAPTERS, REGISTRY, Artifact, Recipe
# Importing the modules registers their families (side effect by design).
from . import adapters, archives, build, data, databases, deps, files, git, http, logs  # noqa: F401
from . import scheduling, science, security, sysadmin, text  # noqa: F401
from . import accounts, daemons, git_bisect, git_hooks, loopback, setuid_audit, shared_dirs  # noqa: F401
from . import doc_index, documents, html_pages, reports  # noqa: F401


def by_category(category: str) -> list[Recipe]:
    return sorted((r for r in REGISTRY.values() if r.category == category), key=lambda r: r.name)


__all__ = ["ADAPTERS", "REGISTRY", "Artifact", "Recipe", "by_category"]
