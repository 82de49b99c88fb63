"""Export of verified tasks: Harbor task folders (the Terminal-Bench 2.0 layout), and
running Harbor itself on them from its own virtual environment."""
