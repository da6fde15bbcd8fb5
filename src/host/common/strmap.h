/*
 * strmap -- a map from strings to indices (open addressing, XXH3), for the
 * host's lookups by name: records by (source, profile), captures, inputs.
 *
 * Not thread-safe: the owner serialises access.
 */
#ifndef VSCHED_HOST_STRMAP_H
#define VSCHED_HOST_STRMAP_H

#include <stddef.h>

typedef struct vr_strmap vr_strmap;

vr_strmap *vr_strmap_new(size_t expected);
void vr_strmap_free(vr_strmap *m);
/* The value of `key`, or -1. */
long vr_strmap_get(const vr_strmap *m, const char *key);
/* Set `key` (copied) to `value` (>= 0), replacing an older value. */
void vr_strmap_put(vr_strmap *m, const char *key, long value);
/* The same with a heap key the map takes (and frees when it was there). */
void vr_strmap_put_owned(vr_strmap *m, char *key, long value);
/* "a\x1fb" and "a\x1fb\x1fc": a composite key (heap). b, c may be NULL. */
char *vr_strmap_key(const char *a, const char *b, const char *c);

#endif
