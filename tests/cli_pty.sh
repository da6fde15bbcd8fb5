#!/bin/sh
# The status line on a real pseudo-terminal (script(1) runs vsched-run on
# one, 40 columns wide): "[done/total] STAGE file" rewritten in place
# ("\r" + erase line), elided in the middle to the width, cleared before
# other output; colour on a terminal unless NO_COLOR or --color=never,
# and with --color=always even off one.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
command -v script >/dev/null 2>&1 || {
    echo "SKIP: script(1) is not installed (bsdutils)"
    exit 77
}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
scratch
S=$SCRATCH
mktree "$S" --seed 6 --files 4 --headers 3 --dirs 2 --funcs 1 ||
    { echo "cannot generate the tree"; exit 1; }
long=src/d0/a_file_whose_name_is_far_longer_than_the_terminal_is_wide.c
printf 'int long_named(void) { return 2; }\n' >"$S/tree/$long"
total=$(( $(wc -l <"$S/tree/sources.txt") + 1 ))
VR="$top_builddir/vsched-run"
# on_pty NAME ENV... -- ARGS: vsched-run ARGS on a 40-column pty, its
# output (as the terminal got it) in $S/NAME.out; the exit status is
# vsched-run's.
on_pty() {
    _name=$1
    shift
    _env=""
    while [ "$1" != "--" ]; do _env="$_env $1"; shift; done
    shift
    timeout 120 script -qec "stty cols 40; env $_env '$VR' --config '$S/b.ini' $*" /dev/null \
        >"$S/$_name.out" 2>&1
}
# segs FILE: the status segments (what follows each CR + erase-line), one
# per line, colour codes kept.
segs() {
    python3 -c '
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
for s in t.split("\r\x1b[K")[1:]:
    s = s.split("\r\n")[0]
    if s.startswith("["): print(s)' "$1"
}

on_pty cold NO_COLOR= -- -j 2
check "a build on a pty exits 0" test $? -eq 0
segs "$S/cold.out" >"$S/cold.segs"
check "the status line is rewritten in place (CR, erase line), one segment per stage end" \
    test "$(wc -l <"$S/cold.segs")" -ge $((total * 3))
check "... [done/total] STAGE file" \
    test "$(grep -cE "^\[[0-9]+/$total\] (source|analysis|artifact) " "$S/cold.segs")" -eq "$(wc -l <"$S/cold.segs")"
check "... no segment wider than the terminal (39 of 40 columns)" \
    test "$(awk '{ if (length($0) > 39) n++ } END { print n + 0 }' "$S/cold.segs")" -eq 0
check "... the long name elided in the middle, its end kept" \
    grep -qE "^\[[0-9]+/$total\] artifact src/d0/a_f.*\.\.\..*_wide\.c$" "$S/cold.segs"
check "... counting up to [$total/$total]" grep -q "^\[$total/$total\] artifact " "$S/cold.segs"
check "... the line is cleared before the summary" \
    python3 -c 'import sys; t = open(sys.argv[1], "rb").read(); sys.exit(0 if b"\r\x1b[Kvsched-run: linked" in t else 1)' "$S/cold.out"
check "... the summary is a line of its own" grep -q "^vsched-run: $total built, 0 failed" "$S/cold.out"

printf 'int broken(void) { return nope_zzz; }\n' >"$S/tree/src/d0/broken.c"
on_pty color NO_COLOR= -- -k 0
check "a failure on a pty: exit 1" test $? -eq 1
esc=$(printf '\033')
check "colour on a terminal: FAILED in red" grep -q "${esc}\[1;31mFAILED${esc}\[0m: src/d0/broken.c" "$S/color.out"
printf '/* again */\n' >>"$S/tree/src/d0/broken.c"
on_pty nocolor NO_COLOR=1 -- -k 0
check "NO_COLOR=1: no colour on a terminal" \
    sh -c "grep -q 'FAILED: src/d0/broken.c' '$S/nocolor.out' && ! grep -q '${esc}\[1;3' '$S/nocolor.out'"
printf '/* again */\n' >>"$S/tree/src/d0/broken.c"
on_pty never NO_COLOR= -- -k 0 --color=never
check "--color=never: none" sh -c "! grep -q '${esc}\[1;3' '$S/never.out'"
printf '/* again */\n' >>"$S/tree/src/d0/broken.c"
"$VR" --config "$S/b.ini" -k 0 --color=always >"$S/always.out" 2>&1
check "--color=always off a terminal: colour, but plain lines (no CR)" \
    sh -c "grep -q '${esc}\[1;31mFAILED${esc}\[0m: src/d0/broken.c' '$S/always.out' &&
           ! grep -q \"\$(printf '\r')\" '$S/always.out'"
finish
