#!/bin/sh
# `launcher = ccache` and `launcher = ccache distcc`: objects equal a local
# build's; a second cold build (fresh out_dir and state, same ccache
# directory) is served by ccache with no compile reaching distccd; only
# the distcc pair holds `remote`. Skipped (77) where distcc or ccache is
# not installed.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
scratch
command -v ccache >/dev/null 2>&1 || {
    echo "SKIP: ccache is not installed (tools/setup installs it)"; exit 77; }
. "$top_srcdir/tests/distcc_lib.sh"
distccd_start
gen_tree 30
cd "$SCRATCH"
n=$(wc -l <tree/sources.txt)
export CCACHE_DIR="$SCRATCH/ccache" CCACHE_NOHASHDIR=1
unset CCACHE_PREFIX CCACHE_DISABLE

write_ini local ""
vsched_run --config local.ini -j2 -q >local.out 2>&1
check "the local build succeeds" test $? -eq 0

# ccache alone: local compiles, no remote resource.
write_ini cc1 ccache
vsched_run --config cc1.ini -j2 --stats >cc1.out 2>&1
check "the ccache build succeeds" test $? -eq 0
check "ccache objects equal the local build's" same_objects local cc1
check "ccache alone holds no remote" \
    sh -c "! grep -q '^stats: resource remote' cc1.out"
check "nothing went to distccd" test "$(grep -c COMPILE_OK distccd.log)" -eq 0
ccache -z >/dev/null

# ccache distcc, cold ccache: every miss compiled in distccd.
export CCACHE_DIR="$SCRATCH/ccache2"
write_ini pair1 "ccache distcc"
DISTCC_FALLBACK=0 vsched_run --config pair1.ini -j8 --stats >pair1.out 2>&1
check "the ccache distcc build succeeds" test $? -eq 0
check "every miss compiled in distccd ($n)" test "$(compiled_remotely)" -eq "$n"
check "pair objects equal the local build's" same_objects local pair1
check "the pair holds remote" grep -q '^stats: resource remote capacity=8 ' pair1.out

# Same sources, a fresh build directory: ccache answers, distccd idles.
write_ini pair2 "ccache distcc"
DISTCC_FALLBACK=0 vsched_run --config pair2.ini -j8 >pair2.out 2>&1
check "the warm ccache distcc build succeeds" test $? -eq 0
check "no compile reached distccd" \
    test "$(grep -c COMPILE_OK distccd.log)" -eq "$n"
check "warm objects equal the local build's" same_objects local pair2
hits=$(ccache -s 2>/dev/null | sed -n 's/^ *\(Cache \)\{0,1\}[Hh]its: *\([0-9]*\).*/\2/p' | head -1)
check "ccache counted $n hits (got ${hits:-?})" test "${hits:-0}" -ge "$n"
finish
