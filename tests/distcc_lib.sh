# Helpers of the distcc tests: a real distccd on 127.0.0.1 and a generated
# tree; sourced after tests/lib.sh and `scratch`, not run.
#
# distccd_start: starts `distccd --daemon --no-detach` on a free port in a
# process group of its own (logging to $SCRATCH/distccd.log), sets PORT,
# DISTCC_DIR (a private lock and backoff directory) and DISTCC_HOSTS, and
# arranges that the whole group is stopped at exit, pass or fail.
# distccd_stop: stops it now (the kill test's "machine goes away").
# gen_tree N: bench/vsched-gen into $SCRATCH/tree; the .c names in
# $SCRATCH/tree/sources.txt.
# write_ini NAME LAUNCHER [EXTRA LINES]: $SCRATCH/NAME.ini over the tree,
# objects under $SCRATCH/out/NAME.

command -v distccd >/dev/null 2>&1 && command -v distcc >/dev/null 2>&1 || {
    echo "SKIP: distcc is not installed (tools/setup installs it)"
    exit 77
}

DISTCCD_PGID=
distccd_stop() {
    if [ -n "$DISTCCD_PGID" ]; then
        kill -TERM "-$DISTCCD_PGID" 2>/dev/null
        for _i in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "-$DISTCCD_PGID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "-$DISTCCD_PGID" 2>/dev/null
        DISTCCD_PGID=
    fi
}

distccd_start() {
    export DISTCC_DIR="$SCRATCH/distcc-dir"
    mkdir -p "$DISTCC_DIR"
    trap 'distccd_stop; [ -n "${VSCHED_TEST_KEEP:-}" ] || rm -rf "$SCRATCH"' EXIT
    trap 'exit 1' INT TERM
    for _try in 1 2 3 4 5 6 7 8; do
        PORT=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
        : >"$SCRATCH/distccd.log"
        setsid distccd --daemon --no-detach --listen 127.0.0.1 \
            --allow 127.0.0.1 --port "$PORT" --log-stderr \
            --log-level=info -j "${DISTCCD_JOBS:-8}" \
            2>>"$SCRATCH/distccd.log" &
        DISTCCD_PGID=$!
        for _i in $(seq 1 50); do
            grep -q "listening on" "$SCRATCH/distccd.log" && break
            kill -0 "$DISTCCD_PGID" 2>/dev/null || break
            sleep 0.1
        done
        if grep -q "listening on 127.0.0.1:$PORT" "$SCRATCH/distccd.log"; then
            export DISTCC_HOSTS="127.0.0.1:$PORT/${DISTCC_SLOTS:-8}"
            return 0
        fi
        distccd_stop
    done
    echo "FAIL: distccd did not start:"; cat "$SCRATCH/distccd.log"
    exit 1
}

gen_tree() {
    "$top_builddir/bench/vsched-gen" --seed 16 --files "$1" --headers 10 \
        --dirs 3 --funcs 3 "$SCRATCH/tree" >/dev/null || {
        echo "FAIL: vsched-gen"; exit 1; }
}

write_ini() {
    _name=$1
    _launcher=$2
    shift 2
    {
        printf '[vsched]\nstate_dir = state-%s\n' "$_name"
        printf '[loader]\nplugin = fs\nroot = tree\n'
        printf '[executor]\nplugin = cc\ncflags = -O2\ninclude_dirs = include\n'
        printf 'out_dir = out/%s\nlauncher = %s\n' "$_name" "$_launcher"
        for _l in "$@"; do printf '%s\n' "$_l"; done
        printf '[batch]\ninputs = src/*/*.c\n'
    } >"$SCRATCH/$_name.ini"
}

# same_objects A B: every source's object in out/A equals out/B's.
same_objects() {
    _ok=0
    while read -r _src; do
        _o=${_src}.o
        cmp -s "$SCRATCH/out/$1/release/$_o" "$SCRATCH/out/$2/release/$_o" ||
            { echo "  $_o differs or is missing"; _ok=1; }
    done <"$SCRATCH/tree/sources.txt"
    return $_ok
}

# compiled_remotely: the number of COMPILE_OK lines of distccd, one per
# distinct source of the tree.
compiled_remotely() {
    grep 'COMPILE_OK' "$SCRATCH/distccd.log" |
        sed 's/.* //' | sort -u | grep -c "^$(cd "$SCRATCH/tree" && pwd -P)/src/"
}
