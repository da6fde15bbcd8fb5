# Helpers of the incremental-build tests; sourced after lib.sh, not run.
# Their own variables start with _ (a sourced function shares the
# caller's variables).
#
# The trees come from bench/vsched-gen (deterministic from a seed; its
# deps.txt lists every .c's transitive headers), and every check reads the
# run's --report with jq.
command -v jq >/dev/null 2>&1 || {
    echo "SKIP: jq is not installed (tools/setup installs it)"
    exit 77
}
GEN="$top_builddir/bench/vsched-gen"

# mktree DIR [vsched-gen options]: DIR/tree (its files dated a minute
# back) and DIR/b.ini building it (profile release, -O1, link "prog",
# state in DIR/state, outputs in DIR/out). The .c files are under src/dK/
# (pass --dirs).
mktree() {
    _mk_dir=$1
    shift
    "$GEN" "$@" "$_mk_dir/tree" >/dev/null || return 1
    # A stamp taken within 50 ms of a write is not trusted (stamp.h):
    # files written just now would be read once more by the second run.
    find "$_mk_dir/tree" -type f -exec touch -d '-1 minute' {} +
    cat >"$_mk_dir/b.ini" <<EOF
[vsched]
cpu_threads = 2
state_dir = state

[loader]
plugin = fs
root = tree

[executor]
plugin = cc
cflags = -O1
include_dirs = include
out_dir = out

[batch]
inputs = src/*/*.c
link = prog
EOF
}

# build DIR NAME [vsched-run options]: run the build of DIR/b.ini with
# --report DIR/NAME.json, output in DIR/NAME.out; the exit status is
# vsched-run's.
build() {
    _b_dir=$1
    _b_name=$2
    shift 2
    vsched_run --config "$_b_dir/b.ini" --report "$_b_dir/$_b_name.json" \
        "$@" >"$_b_dir/$_b_name.out" 2>&1
}

# rebuilt REPORT: the inputs rebuilt (made or restored), sorted.
rebuilt() {
    jq -r '.files[] | select(.rebuilt) | .path' "$1" | sort
}
# cached REPORT: the inputs restored from the cache, sorted.
cached() {
    jq -r '.files[] | select(.cached) | .path' "$1" | sort
}
# reasons REPORT: "path: reason" of every rebuilt input, sorted.
reasons() {
    jq -r '.files[] | select(.rebuilt) | "\(.path): \(.reason)"' "$1" | sort
}
# stat_of REPORT KEY: one number of the report's stats.
stat_of() {
    jq -r ".stats.$2" "$1"
}
# includers DIR HEADER: the .c files whose deps.txt lists HEADER, sorted.
includers() {
    grep -E ": (.* )?$2( |\$)" "$1/tree/deps.txt" | cut -d: -f1 | sort
}

# same_list NAME WANT GOT: the two texts are equal; shows both when not.
same_list() {
    if [ "$2" = "$3" ]; then
        pass "$1"
    else
        fail "$1"
        echo "  want: $(echo $2)"
        echo "  got:  $(echo $3)"
    fi
}

# edit_code FILE: change what FILE compiles to (a header's constant, or a
# .c file's first multiplier get one more digit), so its objects change.
edit_code() {
    case $1 in
    *.h) sed -i -E '0,/_K [0-9]+u/s/(_K )([0-9]+)u/\1\21u/' "$1" ;;
    *) sed -i -E '0,/acc \* [0-9]+/s/(acc \* )([0-9]+)/\1\21/' "$1" ;;
    esac
}
# edit_comment FILE: change FILE's bytes but not its code (a comment).
edit_comment() {
    printf '/* edited %s */\n' "$(date +%s%N)" >>"$1"
}

# start_bg DIR NAME [vsched-run options]: the build of DIR/b.ini in the
# background, bounded by timeout, output in DIR/NAME.out; sets BG (the
# timeout process, to wait for) and VPID (vsched-run itself, to signal).
start_bg() {
    _s_dir=$1
    _s_name=$2
    shift 2
    timeout -s KILL 120 "$top_builddir/vsched-run" --config "$_s_dir/b.ini" \
        --report "$_s_dir/$_s_name.json" "$@" >"$_s_dir/$_s_name.out" 2>&1 &
    BG=$!
    VPID=""
    _s_i=0
    while [ -z "$VPID" ] && [ $_s_i -lt 250 ]; do
        VPID=$(pgrep -P "$BG")
        [ -n "$VPID" ] || sleep 0.02
        _s_i=$((_s_i + 1))
    done
}

# wait_for FILE [SECONDS]: until FILE exists (default 20 s); 0 when it does.
wait_for() {
    _w_i=0
    _w_max=$(( ${2:-20} * 50 ))
    while [ ! -e "$1" ] && [ $_w_i -lt $_w_max ]; do
        sleep 0.02
        _w_i=$((_w_i + 1))
    done
    [ -e "$1" ]
}

# slow_cc DIR SECONDS: DIR/slowcc, a compiler that sleeps before each
# compile (and says it is "slowcc 1"); it touches DIR/compiling first.
slow_cc() {
    printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "slowcc 1"; exit 0; fi\n: >"%s/compiling"\nsleep %s\nexec cc "$@"\n' \
        "$1" "$2" >"$1/slowcc"
    chmod +x "$1/slowcc"
}
