"""The LLM layer: one client for any OpenAI-compatible endpoint, with cache, retries, budget and a call log."""
