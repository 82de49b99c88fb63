#!/usr/bin/env python3
"""Move top-level files of DIR into category subfolders. Dry run unless --apply."""
import argparse
import os
from collections import Counter

CATEGORIES = {
    "Archives": [".tar.gz", ".tar.xz", ".tar.zst", ".tgz", ".zip", ".7z", ".rar", ".gz", ".xz", ".bz2"],
    "Images": [".jpg", ".jpeg", ".png", ".gif", ".webp", ".svg", ".heic", ".tiff"],
    "Documents": [".pdf", ".doc", ".docx", ".odt", ".txt", ".md", ".xlsx", ".ods", ".csv", ".pptx"],
    "Audio": [".mp3", ".flac", ".ogg", ".wav", ".m4a"],
    "Video": [".mp4", ".mkv", ".webm", ".mov", ".avi"],
    "Code": [".py", ".sh", ".js", ".json", ".yaml", ".yml", ".c", ".go", ".rs"],
    "Packages": [".deb", ".appimage", ".whl", ".iso"],
}
SKIP = (".part", ".crdownload", ".tmp")


def category(name):
    low = name.lower()
    best = None
    for cat, exts in CATEGORIES.items():
        for ext in exts:
            if low.endswith(ext) and (best is None or len(ext) > best[1]):
                best = (cat, len(ext))
    return best[0] if best else "Other"


def free_name(folder, name):
    stem, ext = os.path.splitext(name)
    candidate, n = name, 1
    while os.path.exists(os.path.join(folder, candidate)):
        candidate = f"{stem} ({n}){ext}"
        n += 1
    return candidate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("directory")
    ap.add_argument("--apply", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(os.path.expanduser(args.directory))
    counts = Counter()
    log = open(os.path.join(root, ".sort-log.tsv"), "a") if args.apply else None
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if not entry.is_file(follow_symlinks=False) or entry.name.startswith("."):
            continue
        if entry.name.lower().endswith(SKIP):
            continue
        cat = category(entry.name)
        dest_dir = os.path.join(root, cat)
        dest = os.path.join(dest_dir, free_name(dest_dir, entry.name))
        print(f"{entry.path} -> {dest}")
        counts[cat] += 1
        if args.apply:
            os.makedirs(dest_dir, exist_ok=True)
            os.replace(entry.path, dest)
            log.write(f"{entry.path}\t{dest}\n")
    if log:
        log.close()
    for cat, n in counts.most_common():
        print(f"{cat}: {n}")
    if not args.apply:
        print("(dry run; pass --apply to move files)")


if __name__ == "__main__":
    main()
