# Helpers of the --watch tests; sourced after lib.sh, not run. Their own
# variables start with _ (a sourced function shares the caller's).
#
# A tree DIR/tree built by DIR/b.ini with the real cc executor through a
# compiler wrapper (DIR/cc-wrap): every compile is logged to DIR/compiles,
# and a source containing WAIT_FOR_GO blocks its compile until DIR/go
# exists (at most 30 s), its shell's pid in DIR/slow.pid.
command -v jq >/dev/null 2>&1 || {
    echo "SKIP: jq is not installed (tools/setup installs it)"
    exit 77
}

# wtree DIR: the tree (src/a.c and src/c.c include include/h.h; src/b.c
# and lib/x/x.c include nothing), the wrapper and b.ini (inputs
# src/*.c lib/*/*.c).
wtree() {
    _w=$1
    mkdir -p "$_w/tree/src" "$_w/tree/include" "$_w/tree/lib/x"
    printf 'int x_v1(void) { return 9; }\n' >"$_w/tree/lib/x/x.c"
    printf '#define H 1\n' >"$_w/tree/include/h.h"
    printf '#include "h.h"\nint a_v1(void) { return H; }\n' >"$_w/tree/src/a.c"
    printf 'int b_v1(void) { return 1; }\n' >"$_w/tree/src/b.c"
    printf '#include "h.h"\nint c_v1(void) { return H; }\n' >"$_w/tree/src/c.c"
    find "$_w/tree" -type f -exec touch -d '-1 minute' {} +
    cat >"$_w/cc-wrap" <<EOF
#!/bin/sh
src=
for a in "\$@"; do case \$a in *.c) src=\$a ;; esac; done
if [ -n "\$src" ]; then
    echo "\${src#$_w/tree/}" >>"$_w/compiles"
    if grep -q WAIT_FOR_GO "\$src"; then
        echo \$\$ >"$_w/slow.pid"
        i=0
        while [ ! -e "$_w/go" ] && [ \$i -lt 3000 ]; do
            sleep 0.01
            i=\$((i + 1))
        done
    fi
fi
exec cc "\$@"
EOF
    chmod +x "$_w/cc-wrap"
    cat >"$_w/b.ini" <<EOF
[vsched]
cpu_threads = 2
state_dir = state

[loader]
plugin = fs
root = tree

[executor]
plugin = cc
compiler = $_w/cc-wrap
cflags = -O0
include_dirs = include
out_dir = out

[batch]
inputs = src/*.c lib/*/*.c
EOF
}

# start_watch DIR [options]: vsched-run --watch in the background, its
# output in DIR/watch.out, its pid in WATCH_PID; returns once the first
# build is over and the tree is watched.
start_watch() {
    _s=$1
    shift
    : >"$_s/compiles"
    watch_out_fresh "$_s"
    "$top_builddir/vsched-run" --config "$_s/b.ini" --watch \
        --report "$_s/watch.json" "$@" >"$_s/watch.out" 2>&1 &
    WATCH_PID=$!
    wait_for "the watch starts" grep -q '^vsched-run: watching' "$_s/watch.out"
}

# watch_out_fresh DIR: empty DIR/watch.out here, before a watch is started
# in the background. The `>` of a background command truncates the file
# in the forked child, which a loaded machine may run only after the
# caller's first look: that look would find the previous watch's banner
# and go on while the new one has not even started (a FAIL of the next
# check, then of every check that waits on this watch).
watch_out_fresh() {
    : >"$1/watch.out"
}

# watch_running: WATCH_PID is still this shell's child and not a zombie.
# Once it has ended, the shell may reap it at any moment (bash does at
# once) and its pid can be another process's by the next look: a bare
# `kill -0` could then wait on, and a `kill` signal, some other test's
# process.
watch_running() {
    _st=$(ps -o ppid=,stat= -p "$WATCH_PID" 2>/dev/null) || return 1
    set -- $_st
    [ "${1:-}" = "$$" ] && [ -n "${2:-}" ] && [ "${2#Z}" = "$2" ]
}

watch_ended() {
    ! watch_running
}

# stop_watch: SIGINT, and its exit status in WATCH_RC.
stop_watch() {
    watch_running && kill -INT "$WATCH_PID" 2>/dev/null
    end_watch
    cat "$_s/watch.out" >>"$_s/watch.all" # kept for a look at a failure
}

# end_watch: wait up to 20 s for the watch to end by itself (then it is
# killed: WATCH_RC 137); its exit status in WATCH_RC. (No `timeout`
# wrapper around the process: the signals go to vsched-run itself.)
end_watch() {
    if ! wait_for "the watch ends" watch_ended; then
        watch_running && kill -KILL "$WATCH_PID" 2>/dev/null
    fi
    wait "$WATCH_PID"
    WATCH_RC=$?
}

# wait_for WHAT COND...: poll COND every 10 ms for up to 20 s; 0 once it
# holds, else 1 after saying what never happened.
wait_for() {
    _what=$1
    shift
    _i=0
    while ! "$@"; do
        _i=$((_i + 1))
        if [ $_i -ge 2000 ]; then
            echo "timed out waiting until $_what"
            return 1
        fi
        sleep 0.01
    done
    return 0
}

# watch_lines DIR: how many "watch:" summary lines the watch printed.
watch_lines() {
    grep -c '^watch: ' "$1/watch.out"
}

# wait_rounds DIR N: until N summary lines are there.
wait_rounds() {
    wait_for "$2 rebuilds are reported" \
        sh -c "test \$(grep -c '^watch: ' '$1/watch.out') -ge $2"
}

# quiet_rounds DIR: until no new summary line has come for 0.5 s (five
# times the tests' settle window), at most 20 s.
quiet_rounds() {
    _q=$(watch_lines "$1")
    _k=0
    _i=0
    while [ $_k -lt 5 ] && [ $_i -lt 200 ]; do
        sleep 0.1
        _i=$((_i + 1))
        _r=$(watch_lines "$1")
        if [ "$_r" = "$_q" ]; then
            _k=$((_k + 1))
        else
            _q=$_r
            _k=0
        fi
    done
}

# last_line DIR: the last summary line, without its time.
last_line() {
    grep '^watch: ' "$1/watch.out" | tail -n 1 | sed 's/ ([0-9.]* s)$//'
}

# symbols OBJ: the defined functions of an object, sorted, one line.
symbols() {
    nm "$1" 2>/dev/null | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' '
}
