"""terminus-2: Terminus-2's JSON protocol over a tmux terminal (agent.py, the loop in
episode.py, the reply parser, the messages), and scripted models for the replay server."""
