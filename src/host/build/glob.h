/*
 * glob -- source patterns under the loader root: `*`, `?` and `[...]`
 * within one path segment (fnmatch(3), a leading '.' matched only
 * explicitly), `**` as a whole segment for zero or more directories.
 * No braces: '{' and '}' are ordinary characters. Names are never seen by
 * a shell.
 *
 * A `**` walk does not enter directories whose name starts with '.' nor
 * follow symbolic links to directories (no loops); other segments follow
 * links as glob(3) does. Regular files match (through a link or not);
 * directories, fifos, sockets and devices never do. A file is named as
 * it is under the root, once, however the pattern reached it: a link to a
 * file is named as that file, a file below a link to a directory under
 * the root as the file there (the loader's realpath agrees).
 *
 * A pattern names sources under the root, as a FILE operand does: it is
 * relative, or absolute under the root (taken relative to it); it has no
 * "." or ".." segment; one ending in '/' matches nothing. A match that is
 * a symbolic link leading nowhere (a loop, a dangling target) or out of
 * the root, or a file reached through a link to a directory outside, is
 * refused (*bad) rather than built to fail, or vanish.
 *
 * An exclude pattern removes a name it matches, and every name under a
 * directory it matches (`exclude = src/tests` removes all below it).
 *
 * Stateless; thread-safe.
 */
#ifndef VSCHED_HOST_GLOB_H
#define VSCHED_HOST_GLOB_H

#include <stddef.h>

/* 1 when `s` has a wildcard character (`*`, `?`, `[`). */
int vr_glob_has_wildcard(const char *s);

/* 1 when `name` (relative, '/'-separated) matches `pattern`. */
int vr_glob_match(const char *pattern, const char *name);

/* 1 when `name` or one of its leading directories matches `pattern`. */
int vr_glob_excluded(const char *pattern, const char *name);

/* Append to *v (*n entries; heap array of heap strings) the names under
 * `root` that `pattern` matches, relative to root and sorted; a match
 * that would refuse the pattern (below) is skipped instead when one of
 * the `n_excl` exclude patterns `excl` names it (vr_glob_excluded; the
 * caller still applies them to what is returned). Returns how many were
 * appended. *bad is set (heap, caller frees) to what refuses
 * the pattern, else NULL: the first directory it had to read and could
 * not (other than absent: "cannot read directory PATH: REASON"), the
 * first match that is no source under the root (above), or the pattern
 * itself (outside the root, a "." or ".." segment); then nothing is
 * appended. */
size_t vr_glob_expand(const char *root, const char *pattern,
                      const char *const *excl, size_t n_excl, char ***v,
                      size_t *n, char **bad);

#endif
