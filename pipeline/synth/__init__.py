"""Task synthesis: turn a sampled skill path into a verified multi-step terminal task.

`compose.synthesize_task` is the offline synthesizer (a recipe library, `recipes/`);
`layout` holds the fixed parts of the Harbor bundle it writes.
"""
