#!/bin/sh
# The `cmd` executor driving a non-C toolchain through the real vsched-run
# and the fs loader: examples/text/txtc, a text "compiler" (a shell script)
# with @include lines, @NAME@ words and a make depfile. Outputs are checked
# byte for byte, rebuilt sets with --report; names with spaces and shell
# metacharacters; an include only the depfile reports; a failing tool, a
# hung one, an interrupted run; templates wrong at configuration time; the
# shell form; vsched-plugin-test; conf/text.ini.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
T=$S/tree
mkdir -p "$T/pages" "$T/parts/sub"
cp "$top_srcdir/examples/text/txtc" "$S/txtc"
chmod +x "$S/txtc"

# ---- the tree ---------------------------------------------------------------------
# a.txt and "my page.txt" include the footer, which includes legal.txt
# (nested, through include_dirs); c.txt includes only the header; the
# signature is a .inc file, which the regex below leaves out: only txtc's
# depfile names it.
printf '@include "header.txt"\nA for @WHO@\n@include "footer.txt"\n' >"$T/pages/a.txt"
printf '@include "header.txt"\nmy page\n@include "footer.txt"\n@include "../parts/sub/sig.inc"\n' \
    >"$T/pages/my page.txt"
printf '@include "header.txt"\nC\n' >"$T/pages/c.txt"
ODD="pages/odd \$(touch PWNED) 'q';x.txt"
printf 'odd one\n' >"$T/$ODD"
printf '[head]\n' >"$T/parts/header.txt"
printf -- '--\n@include "legal.txt"\n' >"$T/parts/footer.txt"
printf '(c) us\n' >"$T/parts/legal.txt"
printf 'signed\n' >"$T/parts/sub/sig.inc"
find "$T" -type f -exec touch -d '-1 minute' {} +

cat >"$S/b.ini" <<EOF
[vsched]
cpu_threads = 2
state_dir = state

[loader]
plugin = fs
root = tree

[executor]
plugin = cmd
tool = ./txtc
artifact = {tool} {flags} -I{include_dirs} -o {out} -MF {depfile} {in}
dep_regex = ^@include "([^"]+\\.txt)"
include_dirs = parts
out_dir = out
out_suffix = .out
flags = -D WHO=world

[profile.loud]
flags = -D WHO=WORLD

[batch]
inputs = pages/*.txt
profiles = release loud
EOF

all_rows() { # every input, one line each, sorted (twice: two profiles)
    printf '%s\n' "pages/a.txt" "pages/a.txt" "pages/c.txt" "pages/c.txt" \
        "pages/my page.txt" "pages/my page.txt" "$ODD" "$ODD" | sort
}
# same_bytes NAME FILE TEXT: FILE holds exactly TEXT (printf format).
same_bytes() {
    printf "$3" >"$S/want"
    if cmp -s "$S/want" "$2"; then pass "$1"; else
        fail "$1"
        echo "  want:"; sed 's/^/    /' "$S/want"
        echo "  got:"; sed 's/^/    /' "$2" 2>&1
    fi
}

# ---- cold build -----------------------------------------------------------------------
build "$S" cold
rc=$?
cat "$S/cold.out"
check "cold build exits 0" test $rc -eq 0
same_list "cold build builds every page in both profiles" "$(all_rows)" \
    "$(rebuilt "$S/cold.json")"
same_bytes "a.txt: includes expanded, nested, through include_dirs" \
    "$S/out/release/pages/a.txt.out" '[head]\nA for world\n--\n(c) us\n'
same_bytes "the profile's flags reach the tool" \
    "$S/out/loud/pages/a.txt.out" '[head]\nA for WORLD\n--\n(c) us\n'
same_bytes "a name with a space is one argv word" \
    "$S/out/release/pages/my page.txt.out" '[head]\nmy page\n--\n(c) us\nsigned\n'
same_bytes "c.txt" "$S/out/release/pages/c.txt.out" '[head]\nC\n'
same_bytes "a name with shell metacharacters builds" \
    "$S/out/release/$ODD.out" 'odd one\n'
check "and no shell ever ran it" \
    sh -c "test ! -e '$T/PWNED' && test ! -e '$S/PWNED' && test ! -e PWNED"
check "no temporary output or depfile is left" \
    test -z "$(find "$S/out" -name '*.tmp.*')"

build "$S" noop
check "nothing changed: nothing to do" \
    test "$(cat "$S/noop.out")" = "vsched-run: nothing to do"

vsched_run --config "$S/b.ini" --deps >"$S/deps.out" 2>&1
check "dep_regex finds each page's includes at the Source stage (--deps)" \
    grep -qx "pages/a.txt: parts/header.txt parts/footer.txt" "$S/deps.out"
check "resolved beside the page first, then through include_dirs" \
    grep -qx "pages/my page.txt: parts/header.txt parts/footer.txt" "$S/deps.out"
check "a page without includes has none" \
    grep -qx "$ODD:" "$S/deps.out"

# ---- edits rebuild exactly the includers ----------------------------------------------
# edit FILE TEXT: new content, dated back (a file written within a
# timestamp tick of a build's start is not proven current afterwards:
# the next run would rebuild what read it once more)
edit() {
    printf "$2" >"$1"
    touch -d '-10 seconds' "$1"
}
edit "$T/parts/legal.txt" '(c) them\n'
build "$S" legal --explain
cat "$S/legal.out"
same_list "editing a nested include rebuilds the pages reaching it" \
    "$(printf '%s\n' "pages/a.txt" "pages/a.txt" "pages/my page.txt" "pages/my page.txt" | sort)" \
    "$(rebuilt "$S/legal.json")"
check "each says which dependency changed" \
    grep -q "explain: pages/a.txt \[release\]: dependency parts/legal.txt changed" "$S/legal.out"
same_bytes "the rebuilt output has the new text" \
    "$S/out/loud/pages/a.txt.out" '[head]\nA for WORLD\n--\n(c) them\n'

edit "$T/parts/sub/sig.inc" 'signed again\n'
build "$S" sig --explain
same_list "an include only the tool's depfile names still rebuilds its page" \
    "$(printf '%s\n' "pages/my page.txt" "pages/my page.txt")" \
    "$(rebuilt "$S/sig.json")"
same_bytes "with the new signature" \
    "$S/out/release/pages/my page.txt.out" '[head]\nmy page\n--\n(c) them\nsigned again\n'

printf '# touched\n' >>"$S/txtc"
touch -d '-10 seconds' "$S/txtc"
build "$S" tool
same_list "a changed tool rebuilds everything (the executor's identity)" \
    "$(all_rows)" "$(rebuilt "$S/tool.json")"

build "$S" flags --set 'profile.loud.flags=-D WHO=LOUD'
same_list "a profile's flags rebuild that profile only" \
    "$(printf '%s\n' "pages/a.txt" "pages/c.txt" "pages/my page.txt" "$ODD" | sort)" \
    "$(rebuilt "$S/flags.json")"
same_bytes "built with them" "$S/out/loud/pages/a.txt.out" \
    '[head]\nA for LOUD\n--\n(c) them\n'
check "in the loud profile only" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .profile] | unique | join(" ")' "$S/flags.json")" = loud

build "$S" back
check "back to the INI's flags: that profile again" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .profile] | unique | join(" ")' "$S/back.json")" = loud

build "$S" cmdline --set 'executor.artifact={tool} {flags} -D X=1 -I{include_dirs} -o {out} -MF {depfile} {in}'
same_list "a changed command rebuilds everything" "$(all_rows)" \
    "$(rebuilt "$S/cmdline.json")"


# ---- a failing tool ---------------------------------------------------------------------
printf 'fine\n@error broken on purpose\n' >"$T/pages/bad.txt"
build "$S" bad -k 0
rc=$?
cat "$S/bad.out"
check "a tool exiting 1 fails the build: exit 1" test $rc -eq 1
check "the file is named" grep -q "^FAILED: pages/bad.txt \[release\]" "$S/bad.out"
check "the tool's stderr is shown" \
    grep -q "tree/pages/bad.txt:2: error: broken on purpose" "$S/bad.out"
check "and its exit status" \
    grep -q "pages/bad.txt: error: '.*txtc' exited with status 1" "$S/bad.out"
check "and the command" grep -q "pages/bad.txt: note: command: .*txtc -D WHO=world -Iparts -o " "$S/bad.out"
check "the summary counts both profiles" grep -q ", 2 failed" "$S/bad.out"
check "no output for the failed file" test ! -e "$S/out/release/pages/bad.txt.out"
check "no temporary output left" test -z "$(find "$S/out" -name '*.tmp.*')"
rm "$T/pages/bad.txt"

# ---- a hung tool: timeout, and an interrupted run -----------------------------------------
cat >"$S/hang" <<EOF
#!/bin/sh
echo partial >"\$1"
sh -c 'trap "" TERM; sleep 30' &
echo \$! >"$S/helper.pid"
: >"$S/started"
trap '' TERM
sleep 30
EOF
chmod +x "$S/hang"
vsched_run --config "$S/b.ini" --set executor.tool=./hang \
    --set 'executor.artifact={tool} {out}' --set executor.timeout=1 \
    --profile release pages/c.txt >"$S/timeout.out" 2>&1
rc=$?
cat "$S/timeout.out"
check "a hung tool past timeout fails its file: exit 1" test $rc -eq 1
check "saying so" grep -q "hang' timed out after 1 s and was killed" "$S/timeout.out"
check "its partial output is gone" test -z "$(find "$S/out" -name '*.tmp.*')"

# gone HELPER: the helper of the hung tool is dead (gone, or a zombie
# waiting for a reaper that is not ours)
gone() {
    _i=0
    while [ $_i -lt 200 ]; do
        kill -0 "$1" 2>/dev/null || return 0
        [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
        sleep 0.01
        _i=$((_i + 1))
    done
    return 1
}
check "and so is the helper it started (the whole process group)" \
    gone "$(cat "$S/helper.pid")"

rm -f "$S/started" "$S/helper.pid"
timeout -s KILL 60 "$top_builddir/vsched-run" --config "$S/b.ini" \
    --set executor.tool=./hang --set 'executor.artifact={tool} {out}' \
    --profile release pages/c.txt >"$S/int.out" 2>&1 &
BG=$!
wait_for "$S/started" 20
VPID=$(pgrep -P "$BG" 2>/dev/null || echo "$BG")
kill -INT "$VPID" 2>/dev/null || kill -INT "$BG"
wait "$BG"
rc=$?
cat "$S/int.out"
check "an interrupted run exits 130" test $rc -eq 130
check "its tool's process group is killed" gone "$(cat "$S/helper.pid")"
check "its partial output is removed" test -z "$(find "$S/out" -name '*.tmp.*')"

# A run killed outright (SIGKILL: no chance to clean) leaves the partial
# output of the tool it ran; the next run's executor removes it when it
# first writes an output (its writer is dead), as it does a scan depfile
# a dead run left, and keeps a live process's temporary. (The cache is off
# for that run: a run that only restores writes nothing through the
# executor.)
rm -f "$S/started" "$S/helper.pid"
rm -rf "$S/out"
"$top_builddir/vsched-run" --config "$S/b.ini" --set executor.tool=./hang \
    --set 'executor.artifact={tool} {out}' \
    --profile release pages/c.txt >"$S/kill.out" 2>&1 &
BG=$!
wait_for "$S/started" 20
kill -KILL "$BG"
wait "$BG" 2>/dev/null
kill -KILL -"$(pgrep -f "$S/hang" | head -1)" 2>/dev/null
kill -KILL "$(cat "$S/helper.pid")" 2>/dev/null
left=$(find "$S/out" -name "c.txt.out.tmp.$BG.*")
check "a killed run leaves its tool's partial output" test -n "$left"
sh -c 'exit 0' &
dead=$!
wait $dead
: >"$S/out/.scan.tmp.$dead.00123456789abcdef.d"
sleep 60 &
live=$!
: >"$S/out/release/pages/x.txt.out.tmp.$live.00123456789abcdef"
vsched_run --config "$S/b.ini" --profile release pages/c.txt \
    --set cache.max_size=0 >"$S/next.out" 2>&1
rc=$?
cat "$S/next.out"
check "the next run succeeds" test $rc -eq 0
check "the next run removed the killed run's partial output" \
    test -z "$(find "$S/out" -name "*.tmp.$BG.*")"
check "and a dead run's scan depfile" test ! -e "$S/out/.scan.tmp.$dead.00123456789abcdef.d"
check "a live process's temporary is kept" \
    test -e "$S/out/release/pages/x.txt.out.tmp.$live.00123456789abcdef"
check "the output is the tool's" test -s "$S/out/release/pages/c.txt.out"
kill $live 2>/dev/null
wait $live 2>/dev/null
rm -f "$S/out/release/pages/x.txt.out.tmp.$live.00123456789abcdef"

# ---- templates wrong at configuration time ---------------------------------------------------
line=$(grep -n '^artifact' "$S/b.ini" | cut -d: -f1)
bad_config() { # NAME WANT SED
    sed "$3" "$S/b.ini" >"$S/bad.ini"
    vsched_run --config "$S/bad.ini" >"$S/cfg.out" 2>&1
    rc=$?
    cat "$S/cfg.out"
    check "$1: exit 2" test $rc -eq 2
    check "$1: FILE:LINE, the key and the mistake" grep -qF -- "$2" "$S/cfg.out"
}
bad_config "unknown placeholder" \
    "$S/bad.ini:$line: plugin 'cmd': cannot create executor: [executor] artifact: unknown placeholder '{nme}' at column 8 (known: {in}, {out}," \
    's/^artifact = {tool} {flags}/artifact = {tool} {nme}/'
bad_config "unbalanced brace" \
    "$S/bad.ini:$line: plugin 'cmd': cannot create executor: [executor] artifact: '{' at column 36 is not closed" \
    's/-o {out}/-o {out/'
bad_config "stray closing brace" \
    "$S/bad.ini:$line: plugin 'cmd': cannot create executor: [executor] artifact: '}' at column 13 has no '{'" \
    's/{tool} {flags}/{tool} flags}/'
rline=$(grep -n '^dep_regex' "$S/b.ini" | cut -d: -f1)
bad_config "a regex without a group" \
    "$S/bad.ini:$rline: plugin 'cmd': cannot create executor: [executor] dep_regex: '^@include' has no group" \
    's/^dep_regex = .*/dep_regex = ^@include/'
vsched_run --config "$S/b.ini" --set 'executor.scan=x {out}' >"$S/cfg.out" 2>&1
rc=$?
check "a scan using {out} (from --set): exit 2 naming --set and the key" \
    sh -c "test $rc -eq 2 && grep -qF -- \"--set: plugin 'cmd': cannot create executor: [executor] scan: placeholder '{out}' at column 3 has no value here\" '$S/cfg.out'"
vsched_run --config "$S/b.ini" --set executor.timeout=-1 >"$S/cfg.out" 2>&1
check "a bad key type is the host's schema error: exit 2" test $? -eq 2
check "naming the key" grep -q "timeout: -1 is out of range 0..604800" "$S/cfg.out"

# ---- the shell form ---------------------------------------------------------------------------------
vsched_run --config "$S/b.ini" --set executor.shell=true \
    --set 'executor.artifact=tr a-z A-Z <{in} | sed s/^/:/ >{out}' \
    --set executor.out_dir=shout --profile release >"$S/shell.out" 2>&1
check "shell = true runs the template with /bin/sh -c" test $? -eq 0
same_bytes "with each value quoted for it (a name with a space)" \
    "$S/shout/release/pages/my page.txt.out" \
    ':@INCLUDE "HEADER.TXT"\n:MY PAGE\n:@INCLUDE "FOOTER.TXT"\n:@INCLUDE "../PARTS/SUB/SIG.INC"\n'
same_bytes "(and one with shell metacharacters)" "$S/shout/release/$ODD.out" ':ODD ONE\n'
check "which never runs as code" sh -c "test ! -e '$T/PWNED' && test ! -e PWNED"

# ---- the plugin's own checks ----------------------------------------------------------------------------
vsched_run --describe-plugin cmd >"$S/desc.out" 2>&1
check "--describe-plugin cmd: exit 0, a built-in" \
    sh -c "grep -q '^origin: *built-in' '$S/desc.out'"
check "--describe-plugin cmd lists the template keys" \
    sh -c "grep -q '^  artifact  *string .*required' '$S/desc.out' && grep -q '^  flags  *list .*per-profile' '$S/desc.out'"
(cd "$S" && timeout 60 "$top_builddir/vsched-plugin-test" --config b.ini cmd \
    "pages/my page.txt" pages/a.txt) >"$S/vpt.out" 2>&1
rc=$?
cat "$S/vpt.out"
check "vsched-plugin-test cmd: every operation succeeds, no contract broken" \
    sh -c "test $rc -eq 0 && grep -q ' 0 failed operations, 0 contract violations' '$S/vpt.out'"

# ---- conf/text.ini builds examples/text ------------------------------------------------------------
mkdir "$S/ex"
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$S/ex/"
chmod -R u+w "$S/ex" # read-only under distcheck
vsched_run --config "$S/ex/conf/text.ini" >"$S/ex.out" 2>&1
rc=$?
cat "$S/ex.out"
check "conf/text.ini builds: exit 0" test $rc -eq 0
check "six pages (three in two profiles)" grep -q "6 built, 0 failed" "$S/ex.out"
same_bytes "conf/text.ini: index in the draft profile" \
    "$S/ex/build/text/draft/pages/index.txt.out" \
    '== example ==\nWelcome to example.\nThis page was built in draft mode.\n--\n(c) the example authors\n'
finish
