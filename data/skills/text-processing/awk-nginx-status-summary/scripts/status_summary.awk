#!/usr/bin/awk -f
# Summarise combined-format access logs: status counts, top 5xx paths, top IPs, bytes.
$9 !~ /^[0-9][0-9][0-9]$/ { bad++; next }
{
    total++
    status[$9]++
    ip[$1]++
    bytes += ($10 == "-" ? 0 : $10)
    if ($9 ~ /^5/) {
        path = $7
        sub(/\?.*/, "", path)
        err[path]++
    }
}
function top(arr, n, title,    k, i, j, keys, m, tmp) {
    m = 0
    for (k in arr) keys[++m] = k
    # simple selection sort, fine for the top-N of a log summary
    for (i = 1; i <= m && i <= n; i++)
        for (j = i + 1; j <= m; j++)
            if (arr[keys[j]] > arr[keys[i]]) { tmp = keys[i]; keys[i] = keys[j]; keys[j] = tmp }
    print "== " title
    for (i = 1; i <= m && i <= n; i++) printf "%8d  %s\n", arr[keys[i]], keys[i]
}
END {
    printf "requests: %d  (skipped malformed: %d)\n", total, bad
    printf "bytes served: %.1f MB\n", bytes / 1048576
    print "== status"
    for (s in status) printf "%s %8d  %5.1f%%\n", s, status[s], 100 * status[s] / total | "sort"
    close("sort")
    top(err, 10, "top paths with 5xx")
    top(ip, 10, "top client IPs")
}
