"""The LLM synthesizer: planner, then constructor in FACET's forward order, with routed repair."""
