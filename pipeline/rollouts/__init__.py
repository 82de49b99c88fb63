"""Rollout batches: agents on verified tasks, k samples each, through the trial path."""
