#!/usr/bin/env python3
"""Summarise a conversion funnel: stage-to-stage conversion, overall conversion and the largest drop-off."""
import argparse
import json


def analyse(stages):
    steps = []
    for prev, cur in zip(stages, stages[1:]):
        rate = cur["users"] / prev["users"] if prev["users"] else 0.0
        steps.append({"from": prev["name"], "to": cur["name"], "conversion": round(rate, 4),
                      "lost": prev["users"] - cur["users"]})
    worst = max(steps, key=lambda s: s["lost"])
    overall = stages[-1]["users"] / stages[0]["users"] if stages[0]["users"] else 0.0
    return {"stages": len(stages), "overall_conversion": round(overall, 4), "steps": steps,
            "largest_drop": {"at": f"{worst['from']} -> {worst['to']}", "lost": worst["lost"]}}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("funnel", help="JSON file: {\"stages\": [{\"name\": ..., \"users\": ...}, ...]}")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    with open(args.funnel, encoding="utf-8") as fh:
        report = analyse(json.load(fh)["stages"])
    if args.format == "json":
        print(json.dumps(report, indent=2))
        return
    for s in report["steps"]:
        print(f"{s['from']:>12} -> {s['to']:<12} {s['conversion'] * 100:6.2f}%  lost {s['lost']}")
    print(f"overall {report['overall_conversion'] * 100:.2f}%; largest drop {report['largest_drop']['at']}")


if __name__ == "__main__":
    main()
