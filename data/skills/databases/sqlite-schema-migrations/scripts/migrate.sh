#!/usr/bin/env bash
# Apply migrations/NNNN_name.sql files to an SQLite database, tracked via PRAGMA user_version.
# Usage: migrate.sh [--dry-run] DB_FILE MIGRATIONS_DIR
set -euo pipefail

dry_run=0
if [[ "${1:-}" == "--dry-run" ]]; then dry_run=1; shift; fi
db="${1:?database file required}"
dir="${2:?migrations directory required}"

current=$(sqlite3 "$db" "PRAGMA user_version;")
echo "current version: $current"

shopt -s nullglob
for file in "$dir"/[0-9][0-9][0-9][0-9]_*.sql; do
  num=$((10#$(basename "$file" | cut -c1-4)))
  if (( num <= current )); then continue; fi
  if (( dry_run )); then echo "pending: $file"; continue; fi
  echo "applying $file"
  {
    echo "PRAGMA foreign_keys=ON;"
    echo "BEGIN;"
    cat "$file"
    echo ";"
    echo "PRAGMA user_version=$num;"
    echo "COMMIT;"
  } | sqlite3 -bail "$db"
  current=$num
done

echo "schema version: $(sqlite3 "$db" 'PRAGMA user_version;')"
