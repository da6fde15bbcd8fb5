/*
 * config_index -- the open-addressing hash index behind vr_config lookups.
 * Internal to config.c; not installed, not for the rest of the host.
 *
 * The index maps a (section, key) name -- key NULL for a section itself --
 * to the position of an item in an array the caller owns (config.c's
 * entries or section names). It stores only positions and hashes, never
 * the names: to compare names it calls back into the caller, so the items
 * stay where they are and the index never owns a string.
 *
 * Linear probing in a power-of-two table kept at most half full, so a
 * lookup or an insertion costs O(1) on average and loading a file stays
 * linear in its size. Items are only ever added (config.c never removes
 * one), so there are no tombstones.
 *
 * Not thread-safe, like vr_config: built on one thread, then read-only.
 */
#ifndef VSCHED_HOST_CONFIG_INDEX_H
#define VSCHED_HOST_CONFIG_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* A hash slot: the item's position + 1 (0 = empty) and its hash. */
typedef struct vr__index_slot {
    uint64_t hash;
    size_t idx1;
} vr__index_slot;

/* An index. Zero-initialise ({ 0 }) for an empty one (no table yet);
 * release with vr__index_free. */
typedef struct vr__index {
    vr__index_slot *slots;
    size_t cap;   /* a power of two, or 0 */
    size_t count; /* items added */
} vr__index;

/* Whether item `idx` of the caller's array is the one looked for; `ctx`
 * is the caller's (it says which name is looked for). 1 or 0. */
typedef int vr__index_match_fn(const void *ctx, size_t idx);

/* FNV-1a hash of `section`, a 0xff separator, then `key` (NULL: none, for
 * a section itself). */
uint64_t vr__index_hash(const char *section, const char *key);

/* Position of the item with hash `h` for which match(ctx, position) is 1,
 * or -1 when there is none (or the index is empty). */
long vr__index_find(const vr__index *ix, uint64_t h, vr__index_match_fn *match,
                    const void *ctx);

/* Record item `idx` under hash `h`; the caller guarantees no equal item is
 * already indexed (look it up first). Grows the table as needed; aborts
 * on memory exhaustion like every vr_x* allocation. */
void vr__index_add(vr__index *ix, uint64_t h, size_t idx);

/* Free the table; ix is empty afterwards. */
void vr__index_free(vr__index *ix);

#endif
