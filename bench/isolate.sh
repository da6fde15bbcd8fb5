#!/bin/sh
# bench/isolate.sh -- what [executor] isolate costs: cold builds with the
# cc executor, isolate = false against isolate = true in the same run,
# alternating (off on off on ...), cache off, state removed before each:
#
#   example   the bundled examples/hello (its 4 objects and the link)
#   tree      a generated tree of --files N .c files (bench/vsched-gen)
#   null      --files N synthetic files, 3 blockers each, through the
#             null loader and executor at no cost: the protocol's own
#             cost per call (4 calls a file, blockers re-created)
#
#     bench/isolate.sh [--pairs N] [--warmup N] [--files N] [--jobs N]
#
# Prints the medians (wall and CPU seconds, CPU of the children
# included) and the median of the per-round ratios on / off. Each build
# is checked: every object built, and the isolated build's objects equal
# the plain build's. Exits 0, 1 when a check failed, 2 on usage errors.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib.sh"
. "$here/tree.sh"

PAIRS=5
WARMUP=1
FILES=500
JOBS=$(nproc)
while [ $# -gt 0 ]; do
    case $1 in
    --pairs) PAIRS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) die "unknown option '$1'; see the top of bench/isolate.sh" ;;
    esac
done
GEN="$here/vsched-gen"
TIMEIT="$here/vsched-timeit"
VSCHED_RUN="$top/vsched-run"
COMPILER=${CC:-cc}
CFLAGS="-O1"
TMO=600
NINJA=
for p in "$GEN" "$TIMEIT" "$VSCHED_RUN"; do
    [ -x "$p" ] || die "$p: not built (make first)"
done
RES=$(mktemp -d "${TMPDIR:-/tmp}/vsched-isolate-bench.XXXXXX")
trap 'rm -rf "$RES"' EXIT
export RES

# ---- the example --------------------------------------------------------------
cp -R "$top/conf" "$top/examples" "$RES/"
chmod -R u+w "$RES"
EX_INI="$RES/conf/example.ini"
ex_build() { # ex_build LABEL ISOLATE
    rm -rf "$RES/build"
    _t=$(timed "$RES/ex.$1.log" "$VSCHED_RUN" --config "$EX_INI" -j "$JOBS" \
        --set cache.max_size=0 --set "executor.isolate=$2") || return 1
    grep -q "built, 0 failed" "$RES/ex.$1.log" || return 1
    (cd "$RES/build/hello/release" && find . -type f -exec md5sum {} + |
        sort) >"$RES/ex.$1.sums"
    echo "$_t"
}
# same_sums PREFIX WHAT: the isolated build's checksums equal the plain one's.
same_sums() {
    cmp -s "$RES/$1.off.sums" "$RES/$1.on.sums" || {
        echo "$2 differ from the plain build's"
        return 1
    }
}
ex_off() { ex_build off false; }
ex_on() { ex_build on true && same_sums ex outputs; }
say "example: cold build, isolate off / on"
rounds example ex_off ex_on

# ---- the generated tree ---------------------------------------------------------------
tree_make "$RES/t" "$FILES"
tr_build() { # tr_build LABEL ISOLATE
    rm -rf "$RES/t/state" "$RES/t/out/vsched"
    _line=$(run_vsched "$RES/t" --set cache.max_size=0 \
        --set "executor.isolate=$2") || { echo "$_line"; return 1; }
    [ "$(objects "$RES/t" vsched)" -eq "$FILES" ] ||
        { echo "$(objects "$RES/t" vsched) objects"; return 1; }
    (cd "$RES/t/out/vsched" && find . -name '*.o' -exec md5sum {} + |
        sort) >"$RES/t.$1.sums"
    echo "$_line"
}
tr_off() { tr_build off false; }
tr_on() { tr_build on true && same_sums t objects; }
say "tree: $FILES files, cold build, isolate off / on"
rounds tree tr_off tr_on

# ---- the null executor: the cost of the calls themselves ---------------------------
NULL_INI="$RES/null.ini"
cat >"$NULL_INI" <<EOF
[vsched]
state_dir = $RES/null-state
[loader]
plugin = null
files = $FILES
deps = 3
[executor]
plugin = null
[batch]
inputs = $(seq -f 'f%g' 0 $((FILES - 1)) | tr '\n' ' ')
[cache]
max_size = 0
EOF
nl_build() { # nl_build LABEL ISOLATE
    rm -rf "$RES/null-state"
    _t=$(timed "$RES/null.$1.log" "$VSCHED_RUN" --config "$NULL_INI" -j "$JOBS" \
        --set "executor.isolate=$2") || return 1
    grep -q "vsched-run: $FILES built, 0 failed" "$RES/null.$1.log" ||
        { echo "not $FILES built"; return 1; }
    echo "$_t"
}
nl_off() { nl_build off false; }
nl_on() { nl_build on true; }
say "null: $FILES synthetic files, isolate off / on"
rounds null nl_off nl_on

echo "| workload | off wall s | on wall s | on/off wall | off cpu s | on cpu s | on/off cpu |"
echo "|---|---|---|---|---|---|---|"
for w in example:ex tree:tr null:nl; do
    l=${w%%:*}
    f=${w#*:}
    echo "| $l | $(fmt "$(med "$l" "${f}_off" wall_s)" 3) |" \
        "$(fmt "$(med "$l" "${f}_on" wall_s)" 3) |" \
        "$(fmt "$(ratio "$l" "${f}_on" wall_s "${f}_off" wall_s)" 3) |" \
        "$(fmt "$(med "$l" "${f}_off" cpu_s)" 3) |" \
        "$(fmt "$(med "$l" "${f}_on" cpu_s)" 3) |" \
        "$(fmt "$(ratio "$l" "${f}_on" cpu_s "${f}_off" cpu_s)" 3) |"
done
echo "(medians of $PAIRS rounds after $WARMUP warm-up, -j $JOBS, $COMPILER $CFLAGS)"
[ "$(failures)" -eq 0 ] || exit 1
