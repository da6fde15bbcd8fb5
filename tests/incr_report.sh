#!/bin/sh
# --report FILE: valid JSON whatever the file names hold (spaces, quotes,
# backslashes, control bytes, a newline, valid and invalid UTF-8), parsed
# by jq; files in input order; statuses of a failed file and of the files
# -k stopped.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
T="$S/tree"
mkdir -p "$T"
src() { printf 'int %s(void) { return %s; }\n' "$2" "$3" >"$T/$1"; }
src "aaa_bad.c" bad "missing_symbol_xyz"
src "plain.c" f1 1
src "with space.c" f2 2
src "quote\"back\\slash.c" f3 3
src "$(printf 'ctl\001\037.c')" f4 4
src "$(printf 'nl\nline.c')" f5 5
src "$(printf 'latin\351.c')" f6 6
src "$(printf 'utf8-\303\251.c')" f7 7
find "$T" -type f -exec touch -d '-1 minute' {} +
# One I/O thread: loads finish in input order, so aaa_bad.c's compile is
# the first (two threads let it finish last, and -k 1 then had nothing
# left to stop).
cat >"$S/b.ini" <<EOF
[vsched]
state_dir = state
io_threads = 1
[loader]
plugin = fs
root = tree
[executor]
plugin = cc
cflags = -O0
out_dir = out
[batch]
inputs = *.c
EOF
# The names as jq prints them: the invalid byte as U+FFFD (UTF-8 ef bf bd).
{
    printf 'aaa_bad.c\n'
    printf 'ctl\001\037.c\n'
    printf 'latin\357\277\275.c\n'
    printf 'nl\\nline.c\n' # (jq -c keeps the newline escaped)
    printf 'plain.c\n'
    printf 'quote"back\\slash.c\n'
    printf 'utf8-\303\251.c\n'
    printf 'with space.c\n'
} >"$S/want-names"

build "$S" k1 -j 1 -k 1
check "a failed file exits 1" test $? -eq 1
check "the report is valid JSON" sh -c "jq -e . '$S/k1.json' >/dev/null"
jq -r '.files[].path | @json | fromjson | gsub("\n"; "\\n")' "$S/k1.json" >"$S/got-names"
check "every name survives the round trip through JSON, in input order" \
    cmp -s "$S/want-names" "$S/got-names"
check "the raw report escapes the control bytes" \
    grep -qF '"path": "ctl\u0001\u001f.c"' "$S/k1.json"
check "... and replaces the byte that is not UTF-8" \
    grep -qF '"path": "latin\ufffd.c"' "$S/k1.json"
check "the report itself is valid UTF-8 without control bytes in strings" \
    sh -c "iconv -f UTF-8 -t UTF-8 '$S/k1.json' >/dev/null && ! LC_ALL=C grep -q \"\$(printf '[\\001-\\010\\013\\014\\016-\\037]')\" '$S/k1.json'"
check "the failed file is 'failed'" \
    test "$(jq -r '.files[] | select(.path == "aaa_bad.c") | .status' "$S/k1.json")" = failed
check "-k 1 stopped the rest: 'skipped', not built" \
    test "$(jq '[.files[] | select(.status == "skipped" and (.rebuilt | not))] | length' "$S/k1.json")" -ge 1
check "every status is ok, failed or skipped" \
    test "$(jq -r '[.files[].status] | unique | map(select(. != "ok" and . != "failed" and . != "skipped")) | length' "$S/k1.json")" -eq 0
check "the stats count one failure" test "$(stat_of "$S/k1.json" failed)" -eq 1

build "$S" k0 -k 0
check "-k 0: still exit 1" test $? -eq 1
check "-k 0: the others are built" \
    test "$(jq '[.files[] | select(.status == "ok")] | length' "$S/k0.json")" -eq 7
check "-k 0: each object is where its name says" \
    test -s "$S/out/release/$(printf 'nl\nline.c.o')" -a -s "$S/out/release/$(printf 'latin\351.c.o')"
src "aaa_bad.c" bad 0
build "$S" fixed --explain
check "fixing it rebuilds just it" test "$(rebuilt "$S/fixed.json")" = aaa_bad.c
check "the report's reason: 'new' (it never built before)" \
    test "$(jq -r '.files[0].reason' "$S/fixed.json")" = new
check "the stats are numbers" \
    test "$(jq '[.stats | .files, .rebuilt, .compiled, .restored, .kept, .up_to_date, .failed, .wall_ms | numbers] | length' "$S/fixed.json")" -eq 8
vsched_run --config "$S/b.ini" --report "$S/no/such/dir/r.json" >"$S/e.out" 2>&1
check "an unwritable report path exits 2" test $? -eq 2
check "... naming it" grep -q "cannot write the report $S/no/such/dir/r.json" "$S/e.out"
finish
