/*
 * unit -- blocker cycles that build as one unit.
 *
 * C headers with include guards may include each other; a cycle among
 * blockers is then legal and must build. When linking an Analysis to a
 * blocker closes a cycle (upstream.c finds it as it forms), the Analyses
 * of the strongly connected component join one UNIT instead of failing:
 *
 *   - inside a unit no Analysis waits on another; the unit waits for what
 *     its members wait on outside it (their Sources, and blockers' Analyses
 *     not in the unit);
 *   - GATHER: when every member is free of outside work the unit is
 *     RELEASED: its hash is computed over the members (sorted by name: the
 *     name, the content hash, and for each blocker either the blocker's
 *     Analysis hash or, inside the unit, its name) and every member becomes
 *     READY. A member's Analysis receives the unit hash for each blocker
 *     inside the unit, so every member's result covers every member's
 *     content;
 *   - RUN: a member that finishes is HELD (not yet DONE); when the last
 *     one finishes, all become DONE together, so nothing downstream of the
 *     cycle runs before all of it is analysed;
 *   - a member that fails fails the others (EDEPFAIL naming it). A member
 *     superseded, removed or refused (its inputs changed under it), or a
 *     released member re-gated on a changed blocker, DISSOLVES the unit:
 *     every other member is doomed, and after the operation each doomed
 *     node is replaced by a fresh Analysis of its file (same generation,
 *     same waiters and dependents) gated from scratch -- which finds the
 *     cycle again, if it still exists, and forms a new unit.
 *
 * For the cycle search a unit is one vertex (upstream.c): one order
 * number, one traversal mark, the union of its members' edges. A node
 * belongs to at most one unit (`k.an.unit`, read through vsched__node_unit;
 * NULL when none); units are merged
 * by size when a new cycle joins two.
 *
 * Writers of an Analysis's k.an.unit, enumerated: vsched__unit_form (joins),
 * vsched__unit_leave (a member's terminal transition), dissolve (every
 * member). Everything here runs with the scheduler lock held.
 */
#ifndef VSCHED_LIB_UNIT_H
#define VSCHED_LIB_UNIT_H

#include <stdint.h>

#include "graph.h"

struct vsched;
struct vsched__pass;

typedef enum vsched__unit_state {
    VSCHED__UNIT_GATHER, /* members wait for outside work */
    VSCHED__UNIT_RUN,    /* released: members ready, running or held */
    VSCHED__UNIT_OVER    /* done, failed or dissolved */
} vsched__unit_state;

typedef struct vsched__unit {
    vsched__nodevec members; /* nodes that joined (references); those with
                                  unit == this are still members */
    struct vsched__unit *prev, *next; /* the graph's list of units */
    uint64_t seq;    /* serial of its release (tasks record it) */
    uint64_t hash;   /* the unit hash, from the release */
    int64_t ord;     /* topological order of the vertex */
    uint32_t mark;   /* traversal stamp of the vertex */
    uint32_t live;   /* members */
    uint32_t free;   /* members PENDING with no upstream left */
    uint32_t held;   /* members finished, waiting for the rest */
    uint32_t doomed; /* members awaiting replacement */
    uint32_t holds;  /* iterations over it in progress */
    uint8_t state;   /* vsched__unit_state */
} vsched__unit;

/* Make the vertices v[0..n) (PENDING Analyses, or members of GATHER
 * units) one unit, merging units they belong to; edges among them are
 * spent. Returns the unit. */
vsched__unit *vsched__unit_form(struct vsched *s, vsched__node *const *v,
                                size_t n);

/* n, a member, has an upstream again (its deps_remaining rose). */
static inline void vsched__unit_busy(vsched__node *n)
{
    if (n->unit_free) {
        n->unit_free = 0;
        vsched__node_unit(n)->free--;
    }
}

/* n, a PENDING member, waits for nothing outside its unit: count it, and
 * release the unit when it was the last. */
void vsched__unit_note_free(struct vsched *s, vsched__node *n);

/* n, a RUNNING member, finished: hold it; the last one makes every member
 * DONE (through vsched__node_done). */
void vsched__unit_hold(struct vsched *s, vsched__node *n,
                       struct vsched__pass *p);

/* n, a member, ends (any terminal transition): it leaves its unit. The
 * unit is returned with a hold (vsched__unit_unhold) when the caller has
 * to act on the rest -- fail them, or dissolve it -- else NULL. */
vsched__unit *vsched__unit_leave(struct vsched *s, vsched__node *n);
void vsched__unit_unhold(struct vsched *s, vsched__unit *u);

/* Every member leaves and is doomed (queued for replacement). */
void vsched__unit_dissolve(struct vsched *s, vsched__unit *u);

/* Replace the doomed nodes queued by dissolutions (after the operation
 * that dissolved them; each replacement may form or dissolve units). */
void vsched__units_drain(struct vsched *s, struct vsched__pass *p);

/* Units formed since creation (stats). */
uint64_t vsched__units_formed(const struct vsched *s);

/* Clear every unit's traversal mark (the stamp wrapped). */
void vsched__units_clear_marks(vsched__graph *g);
/* Free every unit's memory (teardown, before the nodes are freed; the
 * nodes are not touched). */
void vsched__units_fini(struct vsched *s);

#endif
