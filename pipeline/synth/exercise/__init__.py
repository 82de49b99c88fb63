"""Skill-exercise steps (issue 24.3): a step whose reference solution *is* the skill's own workflow
(its bundled script, run as its SKILL.md documents it) on inputs made for the task, and the skill's
package shipped read-only with the task (issue 24.2)."""
