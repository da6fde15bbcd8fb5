/*
 * strmap -- string-keyed index map; see strmap.h.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/strmap.h"
#include "common/util.h"

typedef struct vr_slot {
    char *key; /* NULL: empty */
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

static size_t vr_strmap_find(const vr_strmap *m, const char *key)
{
    size_t k = (size_t)XXH3_64bits(key, strlen(key)) & (m->cap - 1);
    while (m->slots[k].key != NULL && strcmp(m->slots[k].key, key) != 0)
        k = (k + 1) & (m->cap - 1);
    return k;
}

/* Contract: see strmap.h. */
long vr_strmap_get(const vr_strmap *m, const char *key)
{
    size_t k = vr_strmap_find(m, key);
    return m->slots[k].key != NULL ? m->slots[k].value : -1;
}

static void vr_strmap_grow(vr_strmap *m)
{
    vr_slot *old = m->slots;
    size_t n = m->cap;
    m->cap *= 2;
    m->slots = vr_xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < n; i++)
        if (old[i].key != NULL)
            m->slots[vr_strmap_find(m, old[i].key)] = old[i];
    free(old);
}

/* Contract: see strmap.h. */
void vr_strmap_put(vr_strmap *m, const char *key, long value)
{
    size_t k = vr_strmap_find(m, key);
    if (m->slots[k].key != NULL) {
        m->slots[k].value = value;
        return;
    }
    m->slots[k].key = vr_xstrdup(key);
    m->slots[k].value = value;
    if (2 * ++m->n + 2 > m->cap)
        vr_strmap_grow(m);
}

/* Contract: see strmap.h. */
char *vr_strmap_key(const char *a, const char *b, const char *c)
{
    if (c != NULL)
        return vr_strfmt("%s\x1f%s\x1f%s", a, b != NULL ? b : "", c);
    return vr_strfmt("%s\x1f%s", a, b != NULL ? b : "");
}
