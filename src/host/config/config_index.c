/*
 * config_index.c -- open-addressing hash index of vr_config (see
 * config_index.h).
 */
#include "config/config_index.h"

#include <stdlib.h>

#include "common/util.h"

/* Contract: see config_index.h. Pure; any string pointers, key may be
 * NULL. */
uint64_t vr__index_hash(const char *section, const char *key)
{
    uint64_t h = 14695981039346656037u;
    for (const unsigned char *p = (const unsigned char *)section; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    h = (h ^ 0xffu) * 1099511628211u;
    for (const unsigned char *p = (const unsigned char *)key; key && *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

/* Contract: see config_index.h. Probes from h's home slot until an empty
 * slot; match is called only for slots whose hash equals h. */
long vr__index_find(const vr__index *ix, uint64_t h, vr__index_match_fn *match,
                    const void *ctx)
{
    if (ix->cap == 0)
        return -1;
    for (size_t i = h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
        const vr__index_slot *s = &ix->slots[i];
        if (s->idx1 == 0)
            return -1;
        if (s->hash == h && match(ctx, s->idx1 - 1))
            return (long)(s->idx1 - 1);
    }
}

/* Make room for one more item (load factor at most 1/2). */
static void vr_index_reserve(vr__index *ix)
{
    if (2 * (ix->count + 1) <= ix->cap)
        return;
    size_t cap = ix->cap ? 2 * ix->cap : 16;
    vr__index_slot *slots = vr_xcalloc(cap, sizeof *slots);
    for (size_t i = 0; i < ix->cap; i++) {
        if (ix->slots[i].idx1 == 0)
            continue;
        size_t j = ix->slots[i].hash & (cap - 1);
        while (slots[j].idx1 != 0)
            j = (j + 1) & (cap - 1);
        slots[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
}

/* Contract: see config_index.h. The item goes to the first empty slot
 * from h's home slot, where vr__index_find will reach it. */
void vr__index_add(vr__index *ix, uint64_t h, size_t idx)
{
    vr_index_reserve(ix);
    size_t i = h & (ix->cap - 1);
    while (ix->slots[i].idx1 != 0)
        i = (i + 1) & (ix->cap - 1);
    ix->slots[i] = (vr__index_slot){.hash = h, .idx1 = idx + 1};
    ix->count++;
}

/* Contract: see config_index.h. */
void vr__index_free(vr__index *ix)
{
    free(ix->slots);
    *ix = (vr__index){0};
}
