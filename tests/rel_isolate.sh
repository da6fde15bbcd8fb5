#!/bin/sh
# [executor] isolate = true (src/host/build/isolate.h), through the real
# vsched-run, real worker processes and the real rogue test executor
# (tests/plugins/rogue.c, a libtool module loaded through libltdl):
#   - a tree of 10 files of which 2 crash (SIGSEGV in artifact, abort()
#     in analysis): exit 1, the 8 good outputs equal a plain build's, each
#     bad file reported with its cause; diagnostics, blockers and the
#     loader through the context work from the workers; the next run
#     plans only the 2 failed files, and once they are fixed builds them;
#   - the same tree without isolate dies of the signal (what isolation
#     saves);
#   - a hang past isolate_timeout, an exit, junk on the channel: each
#     fails its own file with its cause, the rest builds;
#   - the configuration reaches the workers from --config - and --set;
#     a bad value of the key is refused up front;
#   - SIGINT during a hang: exit 130, no worker left;
#   - SIGINT during an isolated cc compile ends the compiler (the cancel
#     reaches cc in its worker);
#   - the cc executor builds the bundled example identically with and
#     without isolate, and --deps prints the same.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
# Under AddressSanitizer or ThreadSanitizer a SIGSEGV would become the
# sanitizer's report and an exit status: let the plugin's crash be the
# signal it is.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
export ASAN_OPTIONS TSAN_OPTIONS
S=$SCRATCH
BUILD=$(cd "$top_builddir" && pwd) # the runs below cd into their trees
PLUG="$BUILD/tests/plugins"
RUN="$BUILD/vsched-run"

# tree DIR: ten files, f1 has a blocker (h.h), f4 reads h.h through the
# context, f6 warns from its artifact; f3 and f7 misbehave.
tree() {
    rm -rf "$1"
    mkdir -p "$1/src"
    for i in 0 1 2 3 4 5 6 7 8 9; do
        printf 'int f%d = %d;\n' $i $i >"$1/src/f$i.c"
    done
    printf '#define H 1\n' >"$1/src/h.h"
    printf '// rogue: dep h.h\nint f1 = H;\n' >"$1/src/f1.c"
    printf '// rogue: read h.h\nint f4;\n' >"$1/src/f4.c"
    printf '// rogue: warn artifact\nint f6;\n' >"$1/src/f6.c"
    printf 'int f3;\n// rogue: crash artifact\n' >"$1/src/f3.c"
    printf 'int f7;\n// rogue: abort analysis\n' >"$1/src/f7.c"
    cat >"$1/b.ini" <<EOF2
[vsched]
state_dir = state
[loader]
plugin = fs
root = src
[executor]
plugin = $PLUG/rogue.la
out_dir = out
isolate = ${2:-true}
[batch]
inputs = *.c
keep_going = 0
EOF2
}
sums() { (cd "$1" 2>/dev/null && find . -type f ! -name '*.tmp.*' -exec md5sum {} + | sort); }
run() { (cd "$1" && shift && timeout 60 "$RUN" "$@"); }

# ---- the reference: a plain build of the 8 good files ------------------------------
tree "$S/ref" false
rm "$S/ref/src/f3.c" "$S/ref/src/f7.c"
run "$S/ref" --config b.ini >"$S/ref.out" 2>&1
check "reference: the plain build of the good files exits 0" test $? -eq 0
sums "$S/ref/out" >"$S/ref.sums"
check "reference: 8 outputs" test "$(wc -l <"$S/ref.sums")" -eq 8

# ---- isolated: 2 of 10 crash -----------------------------------------------------------
T="$S/t"
tree "$T"
run "$T" --config b.ini >"$S/iso.out" 2>&1
rc=$?
cat "$S/iso.out"
check "isolate: exit 1 (files failed; the run did not die)" test $rc -eq 1
check "isolate: 8 built, 2 failed" grep -q "vsched-run: 8 built, 2 failed" "$S/iso.out"
sums "$T/out" >"$S/iso.sums"
check "isolate: the 8 outputs equal the plain build's" cmp -s "$S/ref.sums" "$S/iso.sums"
check "isolate: the SIGSEGV named with plugin, operation and file" \
    grep -q "plugin 'rogue' crashed (SIGSEGV) in artifact of f3.c" "$S/iso.out"
check "isolate: the abort() named with plugin, operation and file" \
    grep -q "plugin 'rogue' crashed (SIGABRT) in analysis of f7.c" "$S/iso.out"
check "isolate: a worker's warning reaches the output" \
    grep -q "rogue: warning as asked" "$S/iso.out"
check "isolate: ctx->load worked from a worker (f4 holds h.h)" \
    grep -q "define H 1" "$T/out/release/f4.c.out"
# Workers run this build's vsched-run (/proc/self/exe): none is left.
EXE=$(readlink -f "$RUN")
check "isolate: no worker outlives the run" \
    sh -c "test \$(pgrep -fc '^$EXE --isolate-worker') -eq 0"

run "$T" --config b.ini -n >"$S/plan.out" 2>&1
check "isolate: the next run plans exactly the 2 failed files" \
    sh -c "test \$(grep -c '^artifact ' '$S/plan.out') -eq 2 &&
           grep -q '^artifact release f3.c' '$S/plan.out' &&
           grep -q '^artifact release f7.c' '$S/plan.out'"
printf 'int f3;\n' >"$T/src/f3.c"
printf 'int f7;\n' >"$T/src/f7.c"
run "$T" --config b.ini >"$S/fixed.out" 2>&1
check "isolate: once fixed, the next run exits 0" test $? -eq 0
check "isolate: ... and builds only the 2 fixed files" \
    grep -q "vsched-run: 2 built, 0 failed" "$S/fixed.out"
tree "$S/ref2" false
printf 'int f3;\n' >"$S/ref2/src/f3.c"
printf 'int f7;\n' >"$S/ref2/src/f7.c"
run "$S/ref2" --config b.ini >/dev/null 2>&1
check "isolate: outputs equal a plain clean build of the fixed tree" \
    sh -c "sums() { (cd \"\$1\" && find . -type f -exec md5sum {} + | sort); }
           test \"\$(sums '$T/out')\" = \"\$(sums '$S/ref2/out')\""

# ---- without isolate the same tree dies ----------------------------------------------------
tree "$S/plain" false
run "$S/plain" --config b.ini >"$S/plain.out" 2>&1
rc=$?
check "no isolate: the run dies of the plugin's signal (status $rc > 128)" test $rc -gt 128
check "no isolate: it never reaches its summary" \
    sh -c "! grep -q 'built,' '$S/plain.out'"

# ---- a hang, an exit, junk on the channel ------------------------------------------------------
H="$S/h"
tree "$H"
printf 'int f3;\n// rogue: hang artifact\n' >"$H/src/f3.c"
printf 'int f7;\n// rogue: exit deps\n' >"$H/src/f7.c"
printf 'int f8;\n// rogue: garbage artifact\n' >"$H/src/f8.c"
printf 'isolate_timeout = 1\n' >>"$H/b.ini"
sed -i 's/^isolate_timeout = 1$//; /^isolate = true$/a isolate_timeout = 1' "$H/b.ini"
run "$H" --config b.ini >"$S/hang.out" 2>&1
rc=$?
cat "$S/hang.out"
check "faults: exit 1" test $rc -eq 1
check "faults: 7 built, 3 failed" grep -q "vsched-run: 7 built, 3 failed" "$S/hang.out"
check "faults: the hang is killed at isolate_timeout and named" \
    grep -q "plugin 'rogue' timed out (no answer after 1 s) in artifact of f3.c" "$S/hang.out"
check "faults: an exit is named with its status" \
    grep -q "plugin 'rogue' exited (status 7) in extract_deps of f7.c" "$S/hang.out"
check "faults: junk on the channel is a malformed answer" \
    grep -q "plugin 'rogue' sent a malformed answer (a message of [0-9]* bytes; the bound is 256 MiB) in artifact of f8.c" "$S/hang.out"
check "faults: a timed-out call is a timeout" grep -q "f3.c.*timed out" "$S/hang.out"

# ---- the configuration from standard input and --set --------------------------------------------
tree "$S/set" false
(cd "$S/set" && timeout 60 "$RUN" --config - --set executor.isolate=true \
    <b.ini >"$S/set.out" 2>&1)
rc=$?
check "--config - and --set executor.isolate=true: exit 1, not a crash" test $rc -eq 1
check "--config - and --set: the crash is isolated and named" \
    grep -q "crashed (SIGSEGV) in artifact of f3.c" "$S/set.out"
check "--config - and --set: the good files built" \
    grep -q "vsched-run: 8 built, 2 failed" "$S/set.out"
run "$S/set" --config b.ini --set executor.isolate=maybe >"$S/bad.out" 2>&1
rc=$?
check "isolate = maybe: exit 2" test $rc -eq 2
check "isolate = maybe: the message names the key" grep -q "isolate" "$S/bad.out"
run "$S/set" --config b.ini --set executor.isolate_timeout=-1 >"$S/bad2.out" 2>&1
check "isolate_timeout = -1: exit 2" test $? -eq 2
check "a loader refuses isolate (a key of [executor] only)" \
    sh -c "cd '$S/set' && timeout 60 '$RUN' --config b.ini --set loader.isolate=true >'$S/bad3.out' 2>&1; test \$? -eq 2"

"$RUN" --isolate-worker >"$S/hand.out" 2>&1
check "--isolate-worker by hand: exit 2, saying it is internal" \
    sh -c "test $? -eq 2 && grep -q 'is internal' '$S/hand.out'"

# ---- SIGINT while a worker hangs ------------------------------------------------------------------
G="$S/g"
tree "$G"
printf 'int f3;\n// rogue: hang artifact\n' >"$G/src/f3.c"
(cd "$G" && exec "$RUN" --config b.ini >"$S/int.out" 2>&1) &
pid=$!
n=0
while ! pgrep -P $pid >/dev/null 2>&1 && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
workers=$(pgrep -P $pid | tr '\n' ' ')
check "SIGINT: the run has workers ($workers)" test -n "$workers"
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130" test $rc -eq 130
left=0
for w in $workers; do kill -0 "$w" 2>/dev/null && left=$((left + 1)); done
check "SIGINT: no worker left, none a zombie" test $left -eq 0

# ---- SIGINT during a cc compile: the cancel reaches cc in its worker ----------------------------
# cc polls is_cancelled and ends its compiler's process group; that the
# compiler is gone proves CANCEL reached it (a worker merely killed would
# leave the compiler, in a group of its own, running its 30 s).
C="$S/c"
mkdir -p "$C/src"
printf 'int c1;\n' >"$C/src/c1.c"
cat >"$C/slowcc" <<EOF2
#!/bin/sh
[ "\$1" = --version ] && { echo slowcc 1; exit 0; }
echo \$\$ >>"$C/pids"
sleep 30
exec cc "\$@"
EOF2
chmod +x "$C/slowcc"
cat >"$C/b.ini" <<EOF2
[vsched]
state_dir = state
[loader]
plugin = fs
root = src
[executor]
plugin = cc
compiler = $C/slowcc
out_dir = out
isolate = true
[batch]
inputs = *.c
EOF2
(cd "$C" && exec "$RUN" --config b.ini >"$S/ccint.out" 2>&1) &
pid=$!
n=0
while [ ! -s "$C/pids" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "cc SIGINT: the slow compiler started in a worker" test -s "$C/pids"
kill -INT $pid
wait $pid
rc=$?
check "cc SIGINT: exit 130" test $rc -eq 130
n=0
while kill -0 "$(cat "$C/pids")" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
check "cc SIGINT: the compiler is gone (cc was told, in its worker)" \
    sh -c "! kill -0 $(cat "$C/pids" 2>/dev/null || echo 1) 2>/dev/null"
check "cc SIGINT: no temporary left" \
    test -z "$(find "$C/out" -name '*.tmp.*' 2>/dev/null)"

# ---- cc: the bundled example, with and without isolate -----------------------------------------------
E="$S/ex"
mkdir -p "$E"
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$E/"
chmod -R u+w "$E"
ini="$E/conf/example.ini"
vsched_run --config "$ini" --set cache.max_size=0 >"$S/cc1.out" 2>&1
check "cc: the plain build exits 0" test $? -eq 0
(cd "$E/build/hello" && find . -path ./.vsched -prune -o -type f -exec md5sum {} + | sort) >"$S/cc1.sums"
rm -rf "$E/build"
vsched_run --config "$ini" --set cache.max_size=0 --set executor.isolate=true \
    >"$S/cc2.out" 2>&1
check "cc: the isolated build exits 0" test $? -eq 0
(cd "$E/build/hello" && find . -path ./.vsched -prune -o -type f -exec md5sum {} + | sort) >"$S/cc2.sums"
check "cc: objects and program are byte for byte the same ($(wc -l <"$S/cc1.sums") files)" \
    sh -c "test -s '$S/cc1.sums' && cmp -s '$S/cc1.sums' '$S/cc2.sums'"
check "cc: the same summary" \
    sh -c "test \"\$(grep -c 'built, 0 failed' '$S/cc2.out')\" -eq 1"
"$E/build/hello/release/hello" | grep -q "^hello, vsched"
check "cc: the isolated build's program runs" test $? -eq 0
vsched_run --config "$ini" --deps >"$S/deps1.out" 2>&1
vsched_run --config "$ini" --deps --set executor.isolate=true >"$S/deps2.out" 2>&1
check "cc: --deps prints the same with isolate ($(wc -l <"$S/deps1.out") lines)" \
    sh -c "test -s '$S/deps1.out' && cmp -s '$S/deps1.out' '$S/deps2.out'"
finish
