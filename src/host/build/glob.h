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
 * so, in the last segment, does a link that leads nowhere (a loop, a
 * dangling target), which then fails to build saying why rather than
 * vanish; directories, fifos, sockets and devices never match.
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
 * `root` that `pattern` matches, relative to root and sorted. Returns how
 * many were appended. *bad is set (heap, caller frees) to "cannot read
 * directory PATH: REASON" for the first directory the pattern had to read
 * and could not (other than absent), else NULL. */
size_t vr_glob_expand(const char *root, const char *pattern, char ***v,
                      size_t *n, char **bad);

#endif
