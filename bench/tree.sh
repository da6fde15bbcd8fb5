# bench/tree.sh -- a generated C tree and the same compiles under
# vsched-run, ninja and make; sourced by bench/run, not run.
#
# tree_make DIR FILES [VSCHED-GEN OPTIONS] writes, under DIR:
#
#   tree/            the sources (bench/vsched-gen; tree/deps.txt lists each
#                    file's headers, exactly what the compiler reads)
#   vsched.ini       fs loader + cc executor over tree/, objects under
#                    out/vsched/release/, state under state/
#   ninja/build.ninja, make/Makefile
#                    one edge / rule per source running the command the cc
#                    plugin runs (plugins/cc/compile.c: COMPILER CFLAGS
#                    -IROOT/INCDIR... -c ROOT/NAME -o OUT), with the headers
#                    of deps.txt as implicit inputs; objects under
#                    out/ninja/release/ and out/make/release/
#   compile.cmds     the same commands, one per line, writing out/limit/
#
# ROOT is the tree's canonical path, as the cc plugin sees it. The
# run_vsched / run_ninja / run_make functions run one build and print
# "wall_s=W cpu_s=C built=N" (built: files compiled, from the tool's own
# output; "-" where the tool does not say).
#
# Needs: GEN, VSCHED_RUN, TIMEIT, JOBS, COMPILER, CFLAGS, TMO, and NINJA
# (empty when ninja is not installed).

# tree_make DIR FILES [GEN OPTIONS...]
tree_make() {
    _d=$1
    _n=$2
    shift 2
    rm -rf "$_d"
    mkdir -p "$_d/ninja" "$_d/make" "$_d/out"
    "$GEN" --files "$_n" "$@" "$_d/tree" || die "vsched-gen failed"
    _root=$(cd "$_d/tree" && pwd -P)
    case $_root in
    *[!A-Za-z0-9/._+-]*) die "$_root: keep the work directory's path to [A-Za-z0-9/._+-] (it is written unquoted into build.ninja and a Makefile)" ;;
    esac
    _inc="-I$_root/include"
    cat >"$_d/vsched.ini" <<EOF
[vsched]
cpu_threads = $JOBS
io_threads = 2
state_dir = $_d/state

[loader]
plugin = fs
root = $_root

[executor]
plugin = cc
compiler = $COMPILER
cflags = $CFLAGS
include_dirs = include
out_dir = $_d/out/vsched

[batch]
inputs = src/*.c
profiles = release
EOF
    awk -v root="$_root" -v cc="$COMPILER $CFLAGS $_inc" \
        -v nout="$_d/out/ninja/release" -v mout="$_d/out/make/release" \
        -v lout="$_d/out/limit/release" \
        -v ninja="$_d/ninja/build.ninja" -v make="$_d/make/Makefile" \
        -v cmds="$_d/compile.cmds" '
        BEGIN {
            print "rule cc" > ninja
            print "  command = " cc " -c $in -o $out" > ninja
            print "  description = CC $in" > ninja
            print ".SUFFIXES:" > make
            print "all:" > make
        }
        {
            src = $1
            sub(/:$/, "", src)
            obj = src
            sub(/\.c$/, ".o", obj)
            hdrs = ""
            for (i = 2; i <= NF; i++)
                hdrs = hdrs " " root "/" $i
            print "build " nout "/" obj ": cc " root "/" src " |" hdrs > ninja
            print "all: " mout "/" obj > make
            print mout "/" obj ": " root "/" src hdrs > make
            print "\t" cc " -c " root "/" src " -o " mout "/" obj > make
            print cc " -c " root "/" src " -o " lout "/" obj > cmds
        }' "$_d/tree/deps.txt"
}

# The .o files under DIR/out/TOOL.
objects() { find "$1/out/$2" -name '*.o' 2>/dev/null | wc -l; }

# out_dirs DIR TOOL: recreate the (empty) object directories of TOOL (make
# and the commands of compile.cmds do not create them).
out_dirs() {
    rm -rf "$1/out/$2"
    (cd "$1/tree" && find src -type d) | while read -r _sd; do
        mkdir -p "$1/out/$2/release/$_sd"
    done
}

# timed LOG CMD...: run CMD under the timer (bounded by TMO seconds) with
# its output in LOG; prints the timer's line; fails when CMD fails.
timed() {
    _log=$1
    shift
    rm -f "$_log.time"
    timeout "$TMO" "$TIMEIT" --out "$_log.time" -- "$@" >"$_log" 2>&1
    _rc=$?
    _t=$(cat "$_log.time" 2>/dev/null)
    if [ "$_rc" -ne 0 ]; then
        tail -n 20 "$_log" >&2
        echo "status=$_rc $_t"
        return 1
    fi
    echo "$_t" | sed 's/ maxrss_kb=[0-9]*//; s/ status=0//'
}

# run_vsched DIR [OPTIONS...]: one vsched-run build of DIR.
run_vsched() {
    _dir=$1
    shift
    _t=$(timed "$_dir/vsched.log" "$VSCHED_RUN" --config "$_dir/vsched.ini" \
        -j "$JOBS" "$@") || { echo "$_t"; return 1; }
    _b=$(sed -n 's/^vsched-run: \([0-9][0-9]*\) built.*/\1/p' \
        "$_dir/vsched.log" | tail -n 1)
    # "N built, ..., M from cache": M were restored, not compiled.
    _c=$(sed -n 's/^vsched-run: [0-9]* built.* \([0-9][0-9]*\) from cache.*/\1/p' \
        "$_dir/vsched.log" | tail -n 1)
    [ -n "$_b" ] && [ -n "$_c" ] && _b=$((_b - _c))
    # A build with everything up to date says so instead.
    grep -q '^vsched-run: nothing to do' "$_dir/vsched.log" && _b=0
    echo "$_t built=${_b:--}"
}

# run_ninja DIR: one ninja build of DIR; the compiled sources (relative
# to the tree) are left in DIR/ninja.built.
run_ninja() {
    _t=$(timed "$1/ninja.log" "$NINJA" -C "$1/ninja" -j "$JOBS") ||
        { echo "$_t"; return 1; }
    _root=$(cd "$1/tree" && pwd -P)
    sed -n "s|^\[[0-9]*/[0-9]*\] CC $_root/||p" "$1/ninja.log" |
        sort >"$1/ninja.built"
    echo "$_t built=$(wc -l <"$1/ninja.built")"
}

# run_make DIR: one make build of DIR.
run_make() {
    _t=$(timed "$1/make.log" make -s -r -R -f "$1/make/Makefile" \
        -j "$JOBS") || { echo "$_t"; return 1; }
    echo "$_t built=-"
}

# dependents DIR HEADER: the sources including HEADER (deps.txt), sorted.
dependents() {
    awk -v h="$2" '{ for (i = 2; i <= NF; i++) if ($i == h) {
        sub(/:$/, "", $1); print $1 } }' "$1/tree/deps.txt" | sort
}

# busiest_header DIR LEVEL: the level-LEVEL header with the most dependents.
busiest_header() {
    awk -v l="include/l$2/" '{ for (i = 2; i <= NF; i++)
            if (index($i, l) == 1) n[$i]++ }
        END { for (h in n) print n[h], h }' "$1/tree/deps.txt" |
        sort -k1,1nr -k2,2 | head -n 1 | awk '{ print $2 }'
}

# report_rebuilt REPORT: the sources a vsched-run --report JSON file says
# were rebuilt (files[].rebuilt), sorted; fails when it cannot be read.
report_rebuilt() {
    command -v python3 >/dev/null 2>&1 || return 1
    python3 - "$1" >"$1.rebuilt" <<'EOF' || return 1
import json, sys
try:
    files = json.load(open(sys.argv[1]))["files"]
    names = [f.get("name") or f.get("source") or f["path"]
             for f in files if f.get("rebuilt")]
except (OSError, ValueError, KeyError, TypeError):
    sys.exit(1)
for n in names:
    print(n)
EOF
    sort "$1.rebuilt"
}
