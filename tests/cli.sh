#!/bin/sh
# The command line around a build: finding the configuration (./vsched.ini,
# -C DIR, --config -), --compdb (parsed with jq, one command run for
# real), --graph (rendered by dot) and --trace (parsed by python3's json:
# one event per task, none overlapping on a thread, restores and batch
# spans), over a generated tree.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
for tool in python3 dot; do
    command -v $tool >/dev/null 2>&1 || {
        echo "SKIP: $tool is not installed (tools/setup installs it)"
        exit 77
    }
done
scratch
S=$SCRATCH
mktree "$S" --seed 3 --files 6 --headers 4 --dirs 2 --funcs 1 ||
    { echo "cannot generate the tree"; exit 1; }
nsrc=$(wc -l <"$S/tree/sources.txt")
run() { timeout 120 "$top_builddir/vsched-run" "$@"; }

# ---- finding the configuration ------------------------------------------------------
mkdir "$S/empty"
(cd "$S/empty" && run) >"$S/none.out" 2>&1
check "no --config and no vsched.ini: exit 2" test $? -eq 2
check "... saying what was looked for, where, and how to start" \
    grep -q "^vsched-run: no --config FILE given and no vsched.ini in $S/empty: write one there (see vsched.ini(5).*--config FILE.*-C DIR" "$S/none.out"
check "... one line" test "$(wc -l <"$S/none.out")" -eq 1

cp "$S/b.ini" "$S/vsched.ini"
(cd "$S" && run -n) >"$S/found.out" 2>&1
check "./vsched.ini is used without --config (exit 0)" test $? -eq 0
check "... and plans the build it describes" \
    test "$(grep -c '^artifact release src/' "$S/found.out")" -eq "$nsrc"

(cd "$S/empty" && run -C .. -n) >"$S/c.out" 2>&1
check "-C DIR finds DIR/vsched.ini" sh -c "test \$(grep -c '^artifact release' '$S/c.out') -eq $nsrc"
(cd / && run -C "$S" -C tree -C .. -n) >"$S/cc.out" 2>&1
check "-C is cumulative, each relative to the one before" \
    sh -c "test \$(grep -c '^artifact release' '$S/cc.out') -eq $nsrc"
run -C "$S/no-such-dir" -n >"$S/cbad.out" 2>&1
check "-C to a missing directory: exit 2" test $? -eq 2
check "... naming it and why" \
    grep -q "^vsched-run: -C $S/no-such-dir: cannot change to that directory: No such file or directory$" "$S/cbad.out"

(cd "$S" && run --config - -n <b.ini) >"$S/stdin.out" 2>&1
check "--config - reads standard input, paths relative to the current directory" \
    sh -c "test \$(grep -c '^artifact release' '$S/stdin.out') -eq $nsrc"
sed 's/^cpu_threads = 2$/cpu_threads = two/' "$S/b.ini" | run --config - -n >"$S/stdin-bad.out" 2>&1
check "--config - with a bad value: exit 2" test $? -eq 2
check "... located as <stdin>:LINE" grep -q "^vsched-run: <stdin>:2: .*cpu_threads" "$S/stdin-bad.out"
printf '[vsched]\nx' | run --config - -n >"$S/stdin-syn.out" 2>&1
check "--config - with a syntax error: exit 2, <stdin>:2" \
    sh -c "test $? -eq 2 && grep -q '<stdin>:2' '$S/stdin-syn.out'"
python3 -c "print('[vsched]'); print('cpu_threads = 1' + ' ' * 5000)" |
    run --config - -n >"$S/stdin-long.out" 2>&1
check "--config - with an over-long line: exit 2, never truncated" \
    sh -c "test $? -eq 2 && grep -q '^vsched-run: <stdin>:2: line too long' '$S/stdin-long.out'"
printf '[vsched]\000\n' | run --config - -n >"$S/stdin-nul.out" 2>&1
check "--config - with a NUL byte: exit 2, saying so" \
    sh -c "test $? -eq 2 && grep -q 'holds a NUL byte' '$S/stdin-nul.out'"
run --config /dev/null --color sometimes >"$S/color.out" 2>&1
check "--color with a bad word: exit 2, saying the words" \
    sh -c "test $? -eq 2 && grep -q \"expected auto, always or never, got 'sometimes'\" '$S/color.out'"
run --config "$S/b.ini" --compdb --graph >"$S/two.out" 2>&1
check "--compdb with --graph: exit 2" test $? -eq 2
run --config "$S/b.ini" --graph --trace "$S/x.json" >"$S/tg.out" 2>&1
check "--trace with --graph: exit 2, saying why" \
    sh -c "test $? -eq 2 && grep -q 'trace records a build: it cannot be combined with --graph' '$S/tg.out'"

# ---- --compdb ---------------------------------------------------------------------------
run --config "$S/b.ini" --compdb >"$S/compile_commands.json" 2>"$S/compdb.err"
check "--compdb exits 0" test $? -eq 0
check "... builds nothing: no output directory, no state" \
    sh -c "test ! -e '$S/out' && test ! -e '$S/state'"
check "... valid JSON: one entry per .c file" \
    test "$(jq length "$S/compile_commands.json")" -eq "$nsrc"
check "... each with directory, file, arguments (strings) and output" \
    test "$(jq '[.[] | select((.directory|type) == "string" and (.file|type) == "string"
        and (.output|type) == "string" and (.arguments|type) == "array"
        and ([.arguments[] | strings] | length) == (.arguments | length))] | length' \
        "$S/compile_commands.json")" -eq "$nsrc"
same_list "... the files are the sources, absolute" \
    "$(sed "s|^|$S/tree/|" "$S/tree/sources.txt" | sort)" \
    "$(jq -r '.[].file' "$S/compile_commands.json" | sort)"
check "... the compiler first, -c FILE and -o OUTPUT in the arguments" \
    test "$(jq '[.[] | select(.arguments[0] == "cc" and (.arguments | index("-c")) != null
        and .arguments[(.arguments | index("-c")) + 1] == .file
        and .arguments[(.arguments | index("-o")) + 1] == .output)] | length' \
        "$S/compile_commands.json")" -eq "$nsrc"
check "... the profile's flags and include dirs" \
    test "$(jq '[.[] | select((.arguments | index("-O1")) != null and
        (.arguments | index("-I'"$S"'/tree/include")) != null)] | length' \
        "$S/compile_commands.json")" -eq "$nsrc"
check "... no depfile flags or temporaries" \
    sh -c "! grep -q -e '-MD' -e '\.tmp\.' '$S/compile_commands.json'"
# The command is real: run the first one where it says, and get its object.
jq -r '.[0] | .directory, .output, (.arguments | @sh)' "$S/compile_commands.json" >"$S/first"
dir=$(sed -n 1p "$S/first")
obj=$(sed -n 2p "$S/first")
mkdir -p "$(dirname "$obj")"
(cd "$dir" && eval "set -- $(sed -n 3p "$S/first")" && "$@") >"$S/first.out" 2>&1
check "the first command, run as given, compiles its object" test -s "$obj"
rm -rf "$S/out"
run --config "$S/b.ini" --compdb --profile release --profile debug \
    --set profile.debug.cflags=-O0 >"$S/two.json" 2>&1
check "--compdb with two profiles: an entry per file and profile" \
    test "$(jq length "$S/two.json")" -eq $((nsrc * 2))
check "... debug's own flags" \
    test "$(jq '[.[] | select(.output | contains("/debug/")) | select((.arguments | index("-O0")) != null)] | length' "$S/two.json")" -eq "$nsrc"
timeout 60 "$top_builddir/vsched-plugin-test" --config "$S/b.ini" cc src/d0/f0000.c \
    >"$S/pt.out" 2>&1
check "vsched-plugin-test checks cc's command(): its output is the artifact's" \
    sh -c "grep -q '^src/d0/f0000.c: command\[release\]: ok [0-9]* arguments, output /.*/release/src/d0/f0000.c.o$' '$S/pt.out' &&
           grep -q ' 0 contract violations' '$S/pt.out'"
rm -rf "$S/out"
cat >"$S/null.ini" <<EOF2
[loader]
plugin = fs
root = tree
[executor]
plugin = null
[batch]
inputs = src/*/*.c
EOF2
run --config "$S/null.ini" --compdb >"$S/null.out" 2>&1
check "--compdb with an executor without command(): exit 2" test $? -eq 2
check "... naming it" grep -q "^vsched-run: --compdb: executor 'null' cannot say its commands" "$S/null.out"

# ---- --graph ----------------------------------------------------------------------------
# A name dot must see quoted: a double quote and a backslash in it.
cp "$S/tree/src/d0/f0000.c" "$S/tree/src/d0/we\"ird\\name.c"
run --config "$S/b.ini" --graph >"$S/g.dot" 2>"$S/g.err"
check "--graph exits 0" test $? -eq 0
check "... builds nothing" sh -c "test ! -e '$S/out' && test ! -e '$S/state'"
dot -Tsvg "$S/g.dot" >"$S/g.svg" 2>"$S/dot.err"
check "dot -Tsvg renders it, without a warning" sh -c "test $? -eq 0 && test ! -s '$S/dot.err'"
check "... into an SVG" grep -q "<svg" "$S/g.svg"
# The files reached: every source and every header some source includes.
reached=$(sed 's/^[^:]*: *//' "$S/tree/deps.txt" | tr ' ' '\n' | grep . | sort -u | wc -l)
nfiles=$((nsrc + 1 + reached))
check "one ellipse per file reached ($nfiles: sources and the headers they reach)" \
    test "$(grep -cE '^  f[0-9]+ \[label=' "$S/g.dot")" -eq "$nfiles"
check "one Artifact box per input, fed by its file" \
    test "$(grep -cE '^  f[0-9]+ -> a[0-9]+;' "$S/g.dot")" -eq $((nsrc + 1))
check "one link job fed by every Artifact" \
    test "$(grep -cE '^  a[0-9]+ -> j0;' "$S/g.dot")" -eq $((nsrc + 1))
id_of() { grep -F "[label=\"$1\"]" "$S/g.dot" | sed -E 's/^  (f[0-9]+) .*/\1/'; }
f0=$(id_of src/d0/f0000.c)
# Its quoted includes (<stdio.h> is outside the tree), as source names.
direct=$(sed -n 's|^#include "\(.*\)"$|include/\1|p' "$S/tree/src/d0/f0000.c")
ok=1
for h in $direct; do
    hid=$(id_of "$h")
    grep -q "^  $hid -> $f0 \[color=blue\];" "$S/g.dot" || { echo "  no blocker edge $h -> f0000.c"; ok=0; }
done
check "each header f0000.c includes is a blocker edge into it ($(echo $direct))" \
    sh -c "test $ok -eq 1 && test -n '$direct'"
check "... and no other edge into it" \
    test "$(grep -c -- "-> $f0 " "$S/g.dot")" -eq "$(echo $direct | wc -w)"
check "the odd name is quoted for dot" grep -qF 'label="src/d0/we\"ird\\\\name.c"' "$S/g.dot"
rm -f "$S/tree/src/d0/we\"ird\\name.c"

# ---- --trace ------------------------------------------------------------------------------
tcheck() { # tcheck TRACE CHECK...: python3 over the parsed trace
    python3 - "$@" <<'PY'
import json, sys, collections
path, what = sys.argv[1], sys.argv[2]
d = json.load(open(path))
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
def count(cat): return sum(1 for e in ev if e["cat"] == cat)
if what == "count":
    print(count(sys.argv[3]))
elif what == "names":
    print("\n".join(sorted(e["name"] for e in ev if e["cat"] == sys.argv[3])))
elif what == "overlap":
    lanes = collections.defaultdict(list)
    for e in ev:
        lanes[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    bad = 0
    for k, v in lanes.items():
        v.sort()
        for a, b in zip(v, v[1:]):
            if a[1] > b[0] + 0.0015:
                print("overlap on", k, a, b); bad += 1
    print(bad)
elif what == "lanes":
    meta = {(e["pid"], e.get("tid")): e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M"}
    ok = all((e["pid"], 0) in meta and (e["pid"], e["tid"]) in meta for e in ev)
    print(1 if ok and all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev) else 0)
elif what == "pids":
    print(" ".join(str(p) for p in sorted({e["pid"] for e in ev if e["cat"] == sys.argv[3]})))
PY
}
build "$S" traced -j 2 --trace "$S/trace.json"
check "--trace: the build exits 0" test $? -eq 0
check "... the trace parses as JSON with traceEvents" \
    python3 -c 'import json, sys; assert isinstance(json.load(open(sys.argv[1]))["traceEvents"], list)' "$S/trace.json"
nh=$reached
check "one artifact event per input ($nsrc)" test "$(tcheck "$S/trace.json" count artifact)" -eq "$nsrc"
check "one load and one parse event per file ($((nsrc + nh)))" \
    sh -c "test $(tcheck "$S/trace.json" count load) -eq $((nsrc + nh)) && test $(tcheck "$S/trace.json" count parse) -eq $((nsrc + nh))"
check "one analysis event per file" test "$(tcheck "$S/trace.json" count analysis)" -eq $((nsrc + nh))
same_list "the artifact events name the inputs" "$(sort "$S/tree/sources.txt")" \
    "$(tcheck "$S/trace.json" names artifact)"
same_list "one job event: the link" "link prog" "$(tcheck "$S/trace.json" names job)"
check "loads on the I/O pool's lane, parses on the CPU pool's" \
    sh -c "test '$(tcheck "$S/trace.json" pids load)' = 2 && test '$(tcheck "$S/trace.json" pids parse)' = 1"
check "the coordinator's batch span" test "$(tcheck "$S/trace.json" count batch)" -ge 1
check "the plan and build phases" test "$(tcheck "$S/trace.json" count run)" -eq 2
check "no two events of one thread overlap" test "$(tcheck "$S/trace.json" overlap)" -eq 0
check "every lane and thread is named, no negative time" test "$(tcheck "$S/trace.json" lanes)" -eq 1
run --config "$S/b.ini" --clean >/dev/null 2>&1
build "$S" restored --trace "$S/trace2.json"
check "after --clean: every artifact restored from the cache" \
    test "$(stat_of "$S/restored.json" restored)" -eq "$nsrc"
check "... one restore event each, in the cache lane" \
    sh -c "test $(tcheck "$S/trace2.json" count restore) -eq $nsrc && test '$(tcheck "$S/trace2.json" pids restore)' = 4"
check "... still no overlap" test "$(tcheck "$S/trace2.json" overlap)" -eq 0
build "$S" noop --trace "$S/trace3.json"
check "nothing to do: still a valid trace, the plan phase only" \
    sh -c "test $(tcheck "$S/trace3.json" count run) -eq 1 && test $(tcheck "$S/trace3.json" count artifact) -eq 0"
build "$S" badtrace --trace "$S/no-such-dir/t.json"
check "an unwritable trace: exit 2, naming the file" \
    sh -c "test $? -eq 2 && grep -q '^vsched-run: --trace $S/no-such-dir/t.json: cannot write' '$S/badtrace.out'"
finish
