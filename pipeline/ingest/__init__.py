"""Reading skill packages from folders, git checkouts and JSONL exports."""
