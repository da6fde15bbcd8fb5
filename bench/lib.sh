# bench/lib.sh -- measuring helpers of bench/run; sourced, not run.
#
# A measured command is a shell function printing one line of KEY=VALUE
# words on stdout (and exiting non-zero when its run was wrong). `rounds`
# calls a set of them in turn, round after round (A B A B ...), and keeps
# each function's lines under $RES; `med` and `ratio` reduce them.
#
# Needs: RES (a directory), WARMUP, PAIRS.

say() { printf '%s\n' "$*" >&2; }
die() { say "bench: $*"; exit 2; }

# fail MSG: a check failed; the run goes on, bench/run exits 1.
fail() {
    say "bench: FAIL: $*"
    echo "$*" >>"$RES/failures"
}

failures() { [ -f "$RES/failures" ] && wc -l <"$RES/failures" || echo 0; }

# field KEY LINE: VALUE of the word KEY=VALUE in LINE (empty if none).
field() {
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# median: of the numbers on stdin, one per line ("-" when none).
median() {
    sort -g | awk '{ v[NR] = $1 }
        END {
            if (NR == 0) { print "-"; exit }
            m = int((NR + 1) / 2)
            if (NR % 2) print v[m]; else printf "%.6g\n", (v[m] + v[m + 1]) / 2
        }'
}

# rounds LABEL [--before HOOK] FN...: WARMUP + PAIRS rounds; each calls
# HOOK ROUND (in this shell), then every FN ROUND in order. The lines of
# measured rounds go to $RES/LABEL.FN, one per round; a failed call is
# recorded as a failure and as the line "failed=1".
rounds() {
    _label=$1
    shift
    _hook=
    if [ "$1" = --before ]; then
        _hook=$2
        shift 2
    fi
    _r=0
    while [ "$_r" -lt $((WARMUP + PAIRS)) ]; do
        [ -n "$_hook" ] && "$_hook" "$_r"
        for _fn in "$@"; do
            if _line=$("$_fn" "$_r"); then :; else
                fail "$_label: $_fn (round $_r): ${_line:-no output}"
                _line="failed=1 $_line"
            fi
            _tag=measured
            [ "$_r" -lt "$WARMUP" ] && _tag=warm-up
            say "  $_label $_fn [$_tag $_r] $_line"
            [ "$_r" -ge "$WARMUP" ] && echo "$_line" >>"$RES/$_label.$_fn"
        done
        _r=$((_r + 1))
    done
}

# values LABEL FN KEY: KEY's value in each measured round, one per line.
values() {
    [ -f "$RES/$1.$2" ] || return 0
    while read -r line; do
        field "$3" "$line"
    done <"$RES/$1.$2"
}

# med LABEL FN KEY: the median of KEY over the measured rounds.
med() { values "$1" "$2" "$3" | grep -v '^$' | median; }

# ratio LABEL FN_A KEY_A FN_B KEY_B: the median over rounds of A / B.
ratio() {
    values "$1" "$2" "$3" >"$RES/.a"
    values "$1" "$4" "$5" >"$RES/.b"
    paste "$RES/.a" "$RES/.b" |
        awk '$1 != "" && $2 != "" && $2 > 0 { printf "%.6g\n", $1 / $2 }' |
        median
}

# all_equal LABEL FN KEY: 1 when KEY has one value over every round.
all_equal() {
    [ "$(values "$1" "$2" "$3" | sort -u | wc -l)" -eq 1 ] && echo 1 ||
        echo 0
}

# fmt NUMBER DIGITS: NUMBER with DIGITS decimals ("-" stays "-").
fmt() {
    case $1 in
    - | '') echo - ;;
    *) awk -v x="$1" -v d="$2" 'BEGIN { f = "%." d "f\n"; printf f, x }' ;;
    esac
}

# row CELLS...: one row of the result table.
row() {
    line="|"
    for c in "$@"; do
        line="$line $c |"
    done
    echo "$line" >>"$RES/table.md"
}
