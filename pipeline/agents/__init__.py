"""Agents that act in a trial's container (DESIGN §9): nop, oracle, ablation, terminus-2."""
