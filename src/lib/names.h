/*
 * names -- the one probe of libvsched's table keyed by a source name, the
 * MVCC directory (root.c, which is the file table too: files.h). It is
 * open addressing over pointers to entries that carry the name's hash
 * (XXH3 of its bytes, computed once) and the name itself, at offsets the
 * table gives.
 */
#ifndef VSCHED_LIB_NAMES_H
#define VSCHED_LIB_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The slot of `name` in slots[0..cap) (cap a power of two): where it is,
 * or the empty slot where it belongs. An entry's name is the array at
 * name_at, or (indirect) the string the pointer at name_at points to. */
static inline size_t vsched__name_slot(void *const *slots, size_t cap,
                                       const char *name, uint64_t hash,
                                       size_t hash_at, size_t name_at,
                                       int indirect)
{
    size_t mask = cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        const char *e = slots[i];
        if (e == NULL)
            return i;
        if (*(const uint64_t *)(e + hash_at) != hash)
            continue;
        const char *en =
            indirect ? *(const char *const *)(e + name_at) : e + name_at;
        if (en == name || strcmp(en, name) == 0)
            return i;
    }
}

/* For an entry type T with members `hash` and `name` (a char array). */
#define VSCHED__NAME_SLOT(T, slots, cap, name, hash)                          \
    vsched__name_slot((void *const *)(slots), (cap), (name), (hash),          \
                      offsetof(T, hash), offsetof(T, name), 0)

#endif
