#!/usr/bin/env python3
"""Parse a curl -D header dump into JSON. Usage: parse_headers.py FILE|-"""
import json
import sys


def parse(text):
    blocks, current = [], []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("HTTP/"):
            current = [line]
            blocks.append(current)
        elif line.strip() and current:
            current.append(line)
    if not blocks:
        raise SystemExit("no HTTP status line found")
    last = blocks[-1]
    parts = last[0].split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    headers = {}
    for line in last[1:]:
        if ":" not in line:
            continue
        name, value = line.split(":", 1)
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return {"status": status, "protocol": parts[0], "headers": headers}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "-"
    text = sys.stdin.read() if src == "-" else open(src, encoding="latin-1").read()
    json.dump(parse(text), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
