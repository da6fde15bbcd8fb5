# Shared helpers of the shell tests; sourced, not run.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
# Every run is bounded: a hang fails the test instead of stalling CI.
vsched_run() { timeout 120 "$top_builddir/vsched-run" "$@"; }
passed=0
failed=0

fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
    scratch_gone_note
}
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
    scratch_made=$(date '+%H:%M:%S.%N')
    if [ -n "${VSCHED_TEST_KEEP:-}" ]; then
        echo "scratch directory kept: $SCRATCH"
    else
        trap 'rm -rf "$SCRATCH"' EXIT
    fi
}

# scratch_gone_note: at the first failure after the scratch directory
# vanished (nothing but the EXIT trap may remove it), say so and show
# what ran at that moment: every later failure is that one's echo.
scratch_gone_note() {
    if [ -n "${SCRATCH:-}" ] && [ ! -d "$SCRATCH" ] &&
        [ -z "${scratch_gone_noted:-}" ]; then
        scratch_gone_noted=1
        echo "FAIL: the scratch directory $SCRATCH is gone (made by this test at ${scratch_made:-its start}, kept until its exit); the processes at this moment:"
        ps -eo pid,ppid,pgid,etimes,args 2>&1 | sed 's/^/    | /'
        failed=$((failed + 1))
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
