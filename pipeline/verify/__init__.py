"""Verification of task bundles: build, no-op, oracle, static rubric, decontamination."""
