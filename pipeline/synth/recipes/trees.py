"""Folder-shaped inputs: a small documentation tree and a messy download inbox."""
from __future__ import annotations

from .base import Artifact, StepContext
from .seeds import FIRST, LAST, PRODUCTS, a_date, email, pick

TOPICS = ["install", "upgrade", "backup", "restore", "monitoring", "tuning", "faq", "security"]


def place_tree(ctx: StepContext, root: str, files: list[tuple[str, bytes]]) -> None:
    for rel, data in files:
        ctx.add_input(f"{root}/{rel}", data)


def seed_docs_tree(ctx: StepContext) -> Artifact:
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/input/docs", "/app/input/handbook", "/app/input/wiki-export", "/app/input/manual"]))
    files = []
    for topic in pick(rng, TOPICS, rng.randint(4, 6)):
        sub = rng.choice(["guide", "ops", "reference"])
        body = [f"# {topic.capitalize()}", "",
                f"Owner: {email(rng)}", f"Last reviewed: {a_date(rng)}",
                f"Ticket: DOC-{rng.randint(100, 999)}", "",
                f"This page explains {topic} for the {rng.choice(PRODUCTS)} service."]
        files.append((f"{sub}/{topic}.md", ("\n".join(body) + "\n").encode()))
    files.append(("README.md", b"# Operations handbook\n\nStart with guide/ then ops/.\n"))
    files.append(("CHANGELOG.txt", "".join(f"{a_date(rng)} DOC-{rng.randint(100, 999)} updated\n"
                                            for _ in range(rng.randint(3, 6))).encode()))
    files.sort()
    place_tree(ctx, root, files)
    return Artifact("tree", root, fmt="dir", files=tuple(files), label="docs")


INBOX_EXT = ["pdf", "PDF", "jpg", "JPG", "png", "csv", "txt", "md", "log", "tar.gz", "json", ""]


def seed_inbox(ctx: StepContext) -> Artifact:
    """A download folder: files with mixed-case extensions, some nested, some without one."""
    rng = ctx.rng
    root = ctx.claim(rng.choice(["/app/inbox", "/app/downloads", "/app/unsorted", "/app/dropzone"]))
    files: list[tuple[str, bytes]] = []
    used = set()
    for i in range(rng.randint(12, 18)):
        ext = rng.choice(INBOX_EXT)
        while True:
            base = f"{rng.choice(FIRST)}_{rng.choice(['notes', 'scan', 'invoice', 'photo', 'export', 'draft', 'report'])}_{rng.randint(1, 99)}"
            if base not in used:
                used.add(base)
                break
        name = f"{base}.{ext}" if ext else base
        where = rng.choice(["", "", "", "old/", "misc/", "old/2023/"])
        data = f"{name} {rng.choice(LAST)} {rng.randint(1000, 9999)}\n".encode() * rng.randint(1, 40)
        files.append((where + name, data))
    files.sort()
    place_tree(ctx, root, files)
    return Artifact("tree", root, fmt="dir", files=tuple(files), label="inbox")


def ext_of(name: str) -> str:
    """Lower-cased extension after the last dot of the base name ('tar.gz' counts as 'gz')."""
    base = name.rsplit("/", 1)[-1]
    if "." not in base.strip("."):
        return ""
    return base.rsplit(".", 1)[1].lower()
