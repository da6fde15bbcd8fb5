/*
 * hosts.h -- distcc host lists: where distcc finds one, and what it says.
 *
 * A host list is what distcc(1) reads from DISTCC_HOSTS, from
 * $DISTCC_DIR/hosts (default ~/.distcc/hosts) or from /etc/distcc/hosts,
 * in that order: whitespace-separated host specifications, '#' comments to
 * the end of a line.
 *
 *   localhost[/LIMIT]                       local compiles, 2 slots by default
 *   HOSTID[:PORT][/LIMIT][,OPT...]          a distccd over TCP, 4 by default
 *   HOSTID[/LIMIT][:PORT][,OPT...]          (the older order)
 *   [USER]@HOSTID[/LIMIT][:COMMAND][,OPT...] a distccd over SSH, 4 by default
 *   --randomize  --localslots=N  --localslots_cpp=N  +zeroconf
 *
 * HOSTID is a name, an IPv4 address or an IPv6 address in brackets; OPT is
 * lzo, cpp (pump mode) or auth[=NAME]. The parser is pure (no I/O, no
 * globals) and is used by the cc plugin (which sets the list for its
 * children) and by vsched-run (which sizes the `remote` resource from it).
 * Thread safety: every function is reentrant.
 */
#ifndef VSCHED_PLUGINS_CC_HOSTS_H
#define VSCHED_PLUGINS_CC_HOSTS_H

#include <stddef.h>

/* What a host list says. */
typedef struct cc_hosts {
    unsigned long slots; /* sum of every host's LIMIT (its default if none) */
    unsigned n_hosts;    /* host specifications (localhost included) */
    unsigned n_local;    /* of which `localhost` */
    int randomize;       /* --randomize seen */
    int zeroconf;        /* +zeroconf seen: slots unknown */
    int pump;            /* some host has the cpp option (pump mode) */
    long localslots;     /* --localslots=N, or -1 */
    long localslots_cpp; /* --localslots_cpp=N, or -1 */
} cc_hosts;

/* Where a host list came from. */
typedef struct cc_hosts_src {
    char *text;        /* the list (malloc), comments included */
    char origin[4200]; /* "DISTCC_HOSTS", or the file's path */
} cc_hosts_src;

/* Parse `text` into *h. Returns 0, or -1 with a message naming the
 * offending specification and what is wrong with it in why[cap]. */
int cc__hosts_parse(const char *text, cc_hosts *h, char *why, size_t cap);

/* The host list distcc would use when `given` (a distcc_hosts value; NULL
 * or empty when unset) is not set: DISTCC_HOSTS of `env` (an environ-style
 * array; NULL = the process's), then $DISTCC_DIR/hosts or $HOME/.distcc/
 * hosts, then /etc/distcc/hosts. `given` itself wins when set. Returns 1
 * with *src filled (free src->text), 0 when there is none, -1 when a file
 * exists but cannot be read (why[cap] says which). */
int cc__hosts_find(const char *given, char *const *env, cc_hosts_src *src,
                   char *why, size_t cap);

/* `text` without its comments, every specification separated by one
 * space (malloc), or NULL on exhaustion. */
char *cc__hosts_flatten(const char *text);

#endif
