/*
 * strmap -- string-keyed index map; see strmap.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/strmap.h"
#include "common/util.h"

typedef struct vr_slot {
    char *key; /* NULL: empty */
    uint64_t hash;
    long value;
} vr_slot;

struct vr_strmap {
    vr_slot *slots;
    size_t cap, n; /* cap: power of two, > 2 n */
};

/* Contract: see strmap.h. */
vr_strmap *vr_strmap_new(size_t expected)
{
    vr_strmap *m = vr_xcalloc(1, sizeof *m);
    m->cap = 16;
    while (m->cap < 2 * expected + 2)
        m->cap *= 2;
    m->slots = vr_xcalloc(m->cap, sizeof *m->slots);
    return m;
}

/* Contract: see strmap.h. */
void vr_strmap_free(vr_strmap *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    free(m);
}

static uint64_t vr_strmap_hash(const char *key)
{
    return XXH3_64bits(key, strlen(key));
}

/* The slot of `key` (hash h), or the empty slot where it would go. Slots
 * keep their key's hash: a probe compares strings only on equal hashes,
 * and a growth rehashes no string. */
static size_t vr_strmap_find(const vr_strmap *m, const char *key, uint64_t h)
{
    size_t k = (size_t)h & (m->cap - 1);
    while (m->slots[k].key != NULL &&
           (m->slots[k].hash != h || strcmp(m->slots[k].key, key) != 0))
        k = (k + 1) & (m->cap - 1);
    return k;
}

/* Contract: see strmap.h. */
long vr_strmap_get(const vr_strmap *m, const char *key)
{
    size_t k = vr_strmap_find(m, key, vr_strmap_hash(key));
    return m->slots[k].key != NULL ? m->slots[k].value : -1;
}

static void vr_strmap_grow(vr_strmap *m)
{
    vr_slot *old = m->slots;
    size_t n = m->cap;
    m->cap *= 2;
    m->slots = vr_xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < n; i++) {
        if (old[i].key == NULL)
            continue;
        size_t k = (size_t)old[i].hash & (m->cap - 1);
        while (m->slots[k].key != NULL)
            k = (k + 1) & (m->cap - 1);
        m->slots[k] = old[i];
    }
    free(old);
}

/* Set `key` (hashed h) to `value`; a new key is stored as `own` (the
 * key itself, or its copy when own is NULL). Returns whether it was new. */
static int vr_strmap_set(vr_strmap *m, const char *key, uint64_t h, char *own,
                         long value)
{
    size_t k = vr_strmap_find(m, key, h);
    if (m->slots[k].key != NULL) {
        m->slots[k].value = value;
        return 0;
    }
    m->slots[k] = (vr_slot){own != NULL ? own : vr_xstrdup(key), h, value};
    if (2 * ++m->n + 2 > m->cap)
        vr_strmap_grow(m);
    return 1;
}

/* Contract: see strmap.h. */
void vr_strmap_put_owned(vr_strmap *m, char *key, long value)
{
    if (!vr_strmap_set(m, key, vr_strmap_hash(key), key, value))
        free(key);
}

/* Contract: see strmap.h. */
void vr_strmap_put(vr_strmap *m, const char *key, long value)
{
    vr_strmap_set(m, key, vr_strmap_hash(key), NULL, value);
}

/* Contract: see strmap.h. Built by hand: a run makes one per artifact
 * row, several times over, and vasprintf was a tenth of a no-op. */
char *vr_strmap_key(const char *a, const char *b, const char *c)
{
    if (b == NULL)
        b = "";
    size_t la = strlen(a), lb = strlen(b), lc = c != NULL ? strlen(c) : 0;
    char *k = vr_xmalloc(la + lb + lc + 3);
    char *p = k;
    memcpy(p, a, la);
    p += la;
    *p++ = '\x1f';
    memcpy(p, b, lb);
    p += lb;
    if (c != NULL) {
        *p++ = '\x1f';
        memcpy(p, c, lc);
        p += lc;
    }
    *p = '\0';
    return k;
}
