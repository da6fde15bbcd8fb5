#!/bin/sh
# The manual pages: valid roff (groff -ww, man --warnings), and in step
# with the code, both ways:
#   - every flag of `vsched-run --help` is in vsched-run.1's OPTIONS and
#     every flag there is in --help (same for vsched-plugin-test);
#   - the exit statuses of cli/cli.h and plugin_test/plugin_test.h are the
#     EXIT STATUS entries;
#   - every host key of src/host/config/schema.c and every key of each
#     shipped plugin (vsched-run --describe-plugin) is in vsched.ini.5 with
#     its type, and vsched.ini.5 documents no other key;
#   - vsched-plugin.7 describes every operation, descriptor field and
#     status code of <vsched/plugin.h>.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
doc="$top_srcdir/doc"
pages="vsched-run.1 vsched-plugin-test.1 vsched.ini.5 vsched-plugin.7"

# ---- roff -----------------------------------------------------------------
if command -v groff >/dev/null 2>&1; then
    for p in $pages; do
        groff -man -z -ww "$doc/$p" >"$SCRATCH/groff.out" 2>&1
        rc=$?
        cat "$SCRATCH/groff.out"
        check "groff -man -z -ww $p: exit 0, no warning" \
            sh -c "test $rc -eq 0 && test ! -s '$SCRATCH/groff.out'"
    done
else
    echo "note: groff not installed; roff checks skipped"
fi
if command -v man >/dev/null 2>&1 && man --help 2>&1 | grep -q -- --warnings; then
    for p in $pages; do
        MANWIDTH=80 LC_ALL=C man --warnings -l "$doc/$p" >/dev/null 2>"$SCRATCH/man.out"
        rc=$?
        cat "$SCRATCH/man.out"
        check "man --warnings $p: exit 0, no warning" \
            sh -c "test $rc -eq 0 && test ! -s '$SCRATCH/man.out'"
    done
fi

# section TITLE FILE: the lines of one .SH section of a man page.
section() {
    awk -v t=".SH $1" '$0 == t { on = 1; next } /^\.SH / { on = 0 } on' "$2"
}

# ---- flags: --help versus OPTIONS ---------------------------------------------
# Flags of a --help text: in the option lines of "options:", the leading
# words that are flags (argument names in capitals are skipped).
help_flags() {
    sed -n '/^options:/,/^$/p' "$1" | awk '/^  -/ {
        for (i = 1; i <= NF; i++) {
            w = $i; sub(/,$/, "", w)
            if (w ~ /^--?[A-Za-z][A-Za-z-]*$/) print w
            else if (w ~ /^[A-Z][A-Z0-9.=_:]*$/) continue
            else break
        }
    }' | sort -u
}
# Flags of a man page: the tags (the line after .TP) of its OPTIONS.
man_flags() {
    section OPTIONS "$1" |
        awk 'prev == ".TP" { print } { prev = $1 }' |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
        grep -oE '(^|[ "])--?[A-Za-z][A-Za-z-]*' | sed 's/^[ "]//' | sort -u
}
# compare_flags HELPFILE MANFILE: 0 when the two flag sets are equal; the
# differences are printed.
compare_flags() {
    help_flags "$1" >"$SCRATCH/h.flags"
    man_flags "$2" >"$SCRATCH/m.flags"
    only_help=$(comm -23 "$SCRATCH/h.flags" "$SCRATCH/m.flags")
    only_man=$(comm -13 "$SCRATCH/h.flags" "$SCRATCH/m.flags")
    [ -n "$only_help" ] && echo "  in --help, not in the man page:" $only_help
    [ -n "$only_man" ] && echo "  in the man page, not in --help:" $only_man
    [ -s "$SCRATCH/h.flags" ] && [ -z "$only_help" ] && [ -z "$only_man" ]
}

for prog in vsched-run vsched-plugin-test; do
    "$top_builddir/$prog" --help >"$SCRATCH/$prog.help" 2>&1
    check "$prog --help exits 0" test $? -eq 0
    check "$prog --help and $prog.1 list the same flags" \
        compare_flags "$SCRATCH/$prog.help" "$doc/$prog.1"
done
help_flags "$SCRATCH/vsched-run.help" >"$SCRATCH/rh"
check "vsched-run: short and long flags both extracted" \
    sh -c "grep -qx -- '-j' '$SCRATCH/rh' && grep -qx -- '--jobs' '$SCRATCH/rh' &&
           grep -qx -- '--describe-plugin' '$SCRATCH/rh' && grep -qx -- '--set' '$SCRATCH/rh'"
check "vsched-run: argument names are not taken for flags" \
    sh -c "! grep -q -e NAME -e FILE -e SECTION '$SCRATCH/rh'"

# The comparison fails when either side gains a flag the other lacks.
cp "$SCRATCH/vsched-run.help" "$SCRATCH/more.help"
sed -i 's/^  --stats /  --zz-new-flag          a flag only --help has\n  --stats /' "$SCRATCH/more.help"
not_compare_flags() { ! compare_flags "$@"; }
check "a flag added to --help only is caught" \
    not_compare_flags "$SCRATCH/more.help" "$doc/vsched-run.1"
awk '{ print } /^\.SH OPTIONS/ { print ".TP"; print ".B \\-\\-zz\\-man\\-only"; print "Only documented." }' \
    "$doc/vsched-run.1" >"$SCRATCH/more.1"
check "a flag added to the man page only is caught" \
    not_compare_flags "$SCRATCH/vsched-run.help" "$SCRATCH/more.1"

# ---- exit statuses ------------------------------------------------------------------
man_exits() {
    section "EXIT STATUS" "$1" |
        awk 'prev == ".TP" { print $2 } { prev = $1 }' | sort -n
}
grep -E '^#define VR_EXIT_[A-Z]+ [0-9]+' "$top_srcdir/src/host/cli/cli.h" |
    awk '{ print $3 }' | sort -n >"$SCRATCH/code.exits"
man_exits "$doc/vsched-run.1" >"$SCRATCH/man.exits"
check "vsched-run.1 EXIT STATUS = VR_EXIT_* of cli.h ($(echo $(cat "$SCRATCH/code.exits")))" \
    sh -c "test -s '$SCRATCH/code.exits' && cmp -s '$SCRATCH/code.exits' '$SCRATCH/man.exits'"
grep -E '^#define PT_EXIT_[A-Z]+ [0-9]+' "$top_srcdir/src/host/plugin_test/plugin_test.h" |
    awk '{ print $3 }' | sort -n >"$SCRATCH/code.exits"
man_exits "$doc/vsched-plugin-test.1" >"$SCRATCH/man.exits"
check "vsched-plugin-test.1 EXIT STATUS = PT_EXIT_* ($(echo $(cat "$SCRATCH/code.exits")))" \
    sh -c "test -s '$SCRATCH/code.exits' && cmp -s '$SCRATCH/code.exits' '$SCRATCH/man.exits'"

# ---- configuration keys ---------------------------------------------------------------
# "SECTION KEY TYPE" of vsched.ini.5: the tags of each .SS under HOST
# SECTIONS and PLUGIN KEYS, and the first word of the line after each tag.
sed -n '/^\.SH HOST SECTIONS/,/^\.SH EXAMPLES/p' "$doc/vsched.ini.5" | awk '
    /^\.SS / { s = $2; gsub(/["\[\]]/, "", s); sub(/\..*/, "", s); next }
    /^\.SH / { s = "" }
    tag { type = $1; sub(/,$/, "", type); print s, key, type; tag = 0 }
    prev == ".TP" && s != "" { key = $2; tag = 1 }
    { prev = $1 }' | sort >"$SCRATCH/man.keys"
# The host's key tables of schema.c, and the plugin key of [loader] and
# [executor].
awk '
    /^const vsched_key vr_schema_[a-z]+\[\] = \{/ {
        s = $3; sub(/^vr_schema_/, "", s); sub(/\[\]$/, "", s); next }
    /^};/ { s = "" }
    s != "" && /VR_INT\("/ { match($0, /"[a-z_]+"/); print s, substr($0, RSTART + 1, RLENGTH - 2), "int" }
    s != "" && /VR_KEY\("/ {
        match($0, /"[a-z_]+"/); k = substr($0, RSTART + 1, RLENGTH - 2)
        match($0, /VSCHED_KEY_[A-Z]+/); t = tolower(substr($0, RSTART + 11, RLENGTH - 11))
        print s, k, t }' "$top_srcdir/src/host/config/schema.c" >"$SCRATCH/code.keys"
check "schema.c parsed: [vsched] cpu_threads is an int" \
    grep -qx "vsched cpu_threads int" "$SCRATCH/code.keys"
echo "loader plugin string" >>"$SCRATCH/code.keys"
echo "executor plugin string" >>"$SCRATCH/code.keys"
for p in fs cc null cmd; do
    vsched_run --describe-plugin "$p" >"$SCRATCH/$p.desc" 2>&1
    check "--describe-plugin $p exits 0" test $? -eq 0
    sed -n '/^keys:/,$p' "$SCRATCH/$p.desc" | awk -v p="$p" '/^  [a-z]/ { print p, $1, $2 }' \
        >>"$SCRATCH/code.keys"
done
sort -o "$SCRATCH/code.keys" "$SCRATCH/code.keys"
missing=$(comm -23 "$SCRATCH/code.keys" "$SCRATCH/man.keys")
extra=$(comm -13 "$SCRATCH/code.keys" "$SCRATCH/man.keys")
[ -n "$missing" ] && printf 'not (or with another type) in vsched.ini.5:\n%s\n' "$missing"
[ -n "$extra" ] && printf 'in vsched.ini.5 but not in the code:\n%s\n' "$extra"
check "every host and plugin key is in vsched.ini.5 with its type ($(wc -l <"$SCRATCH/code.keys") keys)" \
    test -z "$missing"
check "vsched.ini.5 documents no key the code lacks" test -z "$extra"

# ---- the ABI page -------------------------------------------------------------------------
hdr="$top_srcdir/include/vsched/plugin.h"
# Tags of vsched-plugin.7, as words.
awk 'prev == ".TP" { print } { prev = $1 }' "$doc/vsched-plugin.7" |
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/([^)]*)//g' | tr ' ,"' '\n\n\n' |
    grep -E '^[A-Za-z_]+$' | sort -u >"$SCRATCH/man.tags"
grep -oE '\(\*[a-z_]+\)' "$hdr" | tr -d '(*)' | sort -u >"$SCRATCH/ops"
check "plugin.h parsed: $(wc -l <"$SCRATCH/ops") function pointers" \
    test "$(wc -l <"$SCRATCH/ops")" -ge 18
undoc=$(comm -23 "$SCRATCH/ops" "$SCRATCH/man.tags")
[ -n "$undoc" ] && echo "operations not described:" $undoc
check "vsched-plugin.7 describes every operation of plugin.h" test -z "$undoc"
# Fields of vsched_plugin: the last identifier of each declaration, with
# comments and parameter lists removed.
sed -n '/^typedef struct vsched_plugin {/,/^} vsched_plugin;/p' "$hdr" |
    sed -e 's|/\*.*\*/||' -e 's|/\*.*||' -e 's|^ *\*.*||' | tr '\n' ' ' |
    sed -e 's/^typedef struct vsched_plugin {//' -e 's/} vsched_plugin;.*//' \
        -e 's/)([^)]*)/)/g' | tr ';' '\n' | sed 's/[^a-z_]*$//' |
    grep -oE '[a-z_]+$' | sort -u >"$SCRATCH/fields"
check "plugin.h parsed: vsched_plugin has 14 fields" test "$(wc -l <"$SCRATCH/fields")" -eq 14
undoc=$(comm -23 "$SCRATCH/fields" "$SCRATCH/man.tags")
[ -n "$undoc" ] && echo "descriptor fields not described:" $undoc
check "vsched-plugin.7 describes every field of vsched_plugin" test -z "$undoc"
grep -oE '^ *X\([A-Z]+,' "$hdr" | sed -e 's/^ *X(/VSCHED_E/' -e 's/,$//' | sort -u >"$SCRATCH/codes"
check "plugin.h parsed: 19 status codes" test "$(wc -l <"$SCRATCH/codes")" -eq 19
undoc=$(comm -23 "$SCRATCH/codes" "$SCRATCH/man.tags")
[ -n "$undoc" ] && echo "status codes not described:" $undoc
check "vsched-plugin.7 describes every status code" test -z "$undoc"
for w in VSCHED_PLUGIN_DEFINE VSCHED_PLUGIN_ABI_MAJOR VSCHED_PLUGIN_THREAD_SAFE \
    VSCHED_PLUGIN_PATH pluginsdir snapshot_free ctx-\>alloc; do
    check "vsched-plugin.7 mentions $w" \
        sh -c "sed -e 's/\\\\-/-/g' -e 's/\\\\f[BIRP]//g' '$doc/vsched-plugin.7' | grep -q -- '$w'"
done
finish
