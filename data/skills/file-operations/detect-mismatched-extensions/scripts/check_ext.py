#!/usr/bin/env python3
"""Print path<TAB>ext<TAB>mime for files whose content type contradicts the extension."""
import os
import subprocess
import sys

EXPECTED = {
    "jpg": {"image/jpeg"}, "jpeg": {"image/jpeg"}, "png": {"image/png"},
    "gif": {"image/gif"}, "webp": {"image/webp"}, "pdf": {"application/pdf"},
    "zip": {"application/zip"}, "gz": {"application/gzip", "application/x-gzip"},
    "xz": {"application/x-xz"}, "mp3": {"audio/mpeg"}, "mp4": {"video/mp4"},
    "docx": {"application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    "xlsx": {"application/zip", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    "html": {"text/html"}, "svg": {"image/svg+xml", "text/xml"},
}


def mime_types(paths):
    if not paths:
        return []
    out = subprocess.run(["file", "--mime-type", "-b", "--", *paths],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def main(root):
    files = []
    for dirpath, _dirs, names in os.walk(root):
        files.extend(os.path.join(dirpath, n) for n in names)
    for i in range(0, len(files), 200):
        batch = [p for p in files[i:i + 200] if os.path.isfile(p)]
        for path, mime in zip(batch, mime_types(batch)):
            ext = os.path.splitext(path)[1].lower().lstrip(".")
            if mime == "inode/x-empty":
                print(f"{path}\t{ext}\tEMPTY")
            elif ext in EXPECTED and mime not in EXPECTED[ext]:
                print(f"{path}\t{ext}\t{mime}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
