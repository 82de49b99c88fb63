"""Moved to workbench/llm/caller.py (the synthesizer, the judges and the agents share it);
kept so existing imports work."""
from workbench.llm.caller import LLMCaller

__all__ = ["LLMCaller"]
