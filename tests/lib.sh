# Shared helpers of the shell tests; sourced, not run.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
# Every run is bounded: a hang fails the test instead of stalling CI.
vsched_run() { timeout 120 "$top_builddir/vsched-run" "$@"; }
passed=0
failed=0

fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
pass() { echo "PASS: $*"; passed=$((passed + 1)); }

# check NAME COND...: run the condition, count the result.
check() {
    name=$1; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

# A fresh scratch directory removed at exit (kept, and named, when
# VSCHED_TEST_KEEP is set: for looking at a failure).
scratch() {
    SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/vsched-test.XXXXXX")
    if [ -n "${VSCHED_TEST_KEEP:-}" ]; then
        echo "scratch directory kept: $SCRATCH"
    else
        trap 'rm -rf "$SCRATCH"' EXIT
    fi
}

finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

# cc_ini FILE [INPUTS]: a configuration building src/INPUTS (default
# *.c) with the fs loader and the cc executor into out/release, state in
# state/, all relative to FILE's directory; callers append sections.
cc_ini() {
    cat >"$1" <<CC_INI
[vsched]
state_dir = state
[loader]
plugin = fs
root = src
[executor]
plugin = cc
compiler = cc
out_dir = out
[batch]
inputs = ${2:-*.c}
profiles = release
CC_INI
}
