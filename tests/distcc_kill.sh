#!/bin/sh
# distccd killed in the middle of a build: with DISTCC_FALLBACK=0 the
# compiles it did not take fail, each reported with distcc's reason and
# what to do, exit 1, and no object is left for them; the compiles it had
# finished are intact. Then `fallback = true` builds the rest locally with
# the daemon still gone, and every object equals a local build's.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
scratch
. "$top_srcdir/tests/distcc_lib.sh"
DISTCCD_JOBS=2 DISTCC_SLOTS=2 distccd_start
gen_tree 120
cd "$SCRATCH"
n=$(wc -l <tree/sources.txt)

write_ini local ""
vsched_run --config local.ini -j2 -q >local.out 2>&1
check "the local build succeeds" test $? -eq 0

write_ini dist distcc "timeout = 60"
DISTCC_FALLBACK=0 vsched_run --config dist.ini -j2 -k 0 >dist.out 2>&1 &
run=$!
# Kill the daemon (its whole process group) once it finished a few.
for i in $(seq 1 600); do
    [ "$(grep -c COMPILE_OK distccd.log)" -ge 3 ] && break
    sleep 0.02
done
distccd_stop
remote=$(grep -c COMPILE_OK distccd.log) # what it finished before it died
wait $run
rc=$?
check "the build with the daemon gone fails: exit 1 (got $rc)" test "$rc" -eq 1
built=0 missing=0 same=0
while read -r src; do
    o=out/dist/release/${src}.o
    if [ -f "$o" ]; then
        built=$((built + 1))
        cmp -s "$o" "out/local/release/${src}.o" && same=$((same + 1))
    else
        missing=$((missing + 1))
    fi
done <tree/sources.txt
echo "  distccd compiled $remote before it was killed; $built objects, $missing missing"
check "some compiles finished before the kill" test "$built" -ge 3
check "some compiles were left when it died" test "$missing" -ge 1
check "every object there equals the local build's" test "$same" -eq "$built"
check "the failures say distcc could not compile, and what to do" \
    grep -q "distcc could not compile it (status 1[0-9][0-9]: .*set fallback = true" dist.out
check "each missing object is a reported failure" \
    test "$(grep -c 'distcc could not compile it' dist.out)" -eq "$missing"
check "the summary counts the failures" \
    grep -q "$missing failed" dist.out
# distcc 3.4 leaves its preprocessor running when it gives up on a dead
# host, and that process may write the compile's depfile after the
# compile was cleaned up: only such a depfile may remain, never an object.
check "no temporary object is left" \
    sh -c "! find out/dist -name '*.tmp.*' ! -name '*.tmp.*.d' | grep ."

# fallback = true: the same state, the daemon still gone.
write_ini dist distcc "timeout = 60" "fallback = true"
DISTCC_FALLBACK=0 vsched_run --config dist.ini -j2 >fallback.out 2>&1
check "with fallback = true the rest builds locally (exit $?)" test $? -eq 0
check "every object now equals the local build's" same_objects local dist
check "and distccd compiled nothing more" \
    test "$(grep -c COMPILE_OK distccd.log)" -eq "$remote"
finish
