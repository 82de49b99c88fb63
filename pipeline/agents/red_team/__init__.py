"""The red-team probe: reward hacks tried on a task without solving it (issue 27.2)."""
