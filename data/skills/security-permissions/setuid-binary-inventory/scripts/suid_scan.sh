#!/usr/bin/env bash
# List setuid/setgid files on local filesystems with owning Debian package.
# Output: MODE OWNER PATH PACKAGE (PACKAGE is UNPACKAGED when dpkg does not know the file)
set -uo pipefail
mounts=$(findmnt -rn -t ext2,ext3,ext4,xfs,btrfs -o TARGET)
for m in $mounts; do
  find "$m" -xdev -type f \( -perm -4000 -o -perm -2000 \) -printf '%m %u %p\n' 2>/dev/null
done | sort -u -k3 | while read -r mode owner path; do
  pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
  printf '%s %s %s %s\n' "$mode" "$owner" "$path" "${pkg:-UNPACKAGED}"
done
