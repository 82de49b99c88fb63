"""Task synthesis: turn a sampled skill path into a verified multi-step terminal task.

`protocol.Synthesizer` is what the batch (`batch`) calls, with a path's context from the
store (`context.path_contexts`); `providers` maps a provider name to one: `offline`
(`compose.synthesize_task` over the recipe library, `recipes/`) or `llm` (`llm/`).
`layout` holds the fixed parts of the Harbor bundle.
"""
