"""Executors run work items (DESIGN §6, §9): `local` (threads) now, `ray` later."""
