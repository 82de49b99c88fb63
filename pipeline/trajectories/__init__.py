"""Agent trajectories: ATIF models, building, reading and Harbor's validation (atif.py)."""
