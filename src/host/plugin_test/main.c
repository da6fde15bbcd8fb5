/*
 * vsched-plugin-test -- a testing aid for plugin authors: load ONE plugin
 * through the same plugin host as vsched-run (search path, ABI checks,
 * schema validation, create()) and call each of its operations on given
 * files, one thread, no scheduler, printing every result.
 *
 *   vsched-plugin-test [options] PLUGIN [FILE...]
 *
 * Output: one line per operation and file, "NAME: OP: ok DETAILS" or
 * "NAME: OP: failed VSCHED_EXXX (message)", the diagnostics the plugin
 * reported ("NAME: diag: SEVERITY FILE:LINE: MESSAGE"), and the contract
 * checks below ("NAME: contract: ..." for a rule of <vsched/plugin.h> that
 * was broken, "NAME: warning: ..." for something suspicious). The last line
 * counts files, failed operations and contract violations.
 *
 * Which operations run (see doc/vsched-plugin-test.1):
 *   - loader role: realpath, exists, classify, load;
 *   - executor role: source (twice: the content hash must be stable),
 *     extract_deps, analysis (twice: the hash must be a pure function of
 *     the inputs; each blocker is taken through source and analysis first,
 *     depth first, cycles reported), artifact for each profile (published
 *     like the host does: rename of tmp_path, or the bytes written to a
 *     temporary file and renamed), and job when --job is given.
 * The executor's bytes come from the plugin's own loader role when that is
 * tested too, else from the [loader] plugin of --config, else from the
 * built-in fs loader over --root (default ".").
 *
 * Contract checks: every buffer handed to the host must come from
 * ctx->alloc (the test context's allocator keeps the set of its live
 * blocks: a foreign pointer, a double free or a block still live at the
 * end is reported); statuses must be 0 or a VSCHED_E* code; classify must
 * NUL-terminate within the buffer; dependency names must be non-empty,
 * and canonical (a fixed point of the loader's realpath) or they name a
 * second file node; an artifact path must be absolute and a tmp_path must
 * exist beside it.
 *
 * Exit status: 0 every operation succeeded and no contract was broken; 1
 * an operation failed or a contract was broken; 2 usage, configuration,
 * or the plugin could not be loaded or created.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <ltdl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "config/config.h"
#include "config/plugin_host.h"

#define PT_EXIT_OK 0
#define PT_EXIT_FAILED 1
#define PT_EXIT_USAGE 2

/* ---- command line ------------------------------------------------------- */

typedef struct pt_opts {
    const char *config;     /* --config FILE, or NULL */
    const char **sets;      /* --set SECTION.KEY=VALUE, in order */
    size_t n_sets;
    const char **profiles;  /* --profile NAME */
    size_t n_profiles;
    const char *root;       /* --root DIR */
    unsigned roles;         /* --role: VSCHED_ROLE_* bits, 0 = all */
    int last_stage;         /* --stage: last vsched_stage to run */
    const char *job;        /* --job KIND:NAME */
    int cancelled;          /* --cancelled */
    int help, version;
    const char *plugin;
    char **files;
    size_t n_files;
} pt_opts;

enum {
    OPT_CONFIG = 256,
    OPT_SET,
    OPT_PROFILE,
    OPT_ROOT,
    OPT_ROLE,
    OPT_STAGE,
    OPT_JOB,
    OPT_CANCELLED,
    OPT_HELP,
    OPT_VERSION
};

static const struct option pt_long_opts[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"set", required_argument, NULL, OPT_SET},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"root", required_argument, NULL, OPT_ROOT},
    {"role", required_argument, NULL, OPT_ROLE},
    {"stage", required_argument, NULL, OPT_STAGE},
    {"job", required_argument, NULL, OPT_JOB},
    {"cancelled", no_argument, NULL, OPT_CANCELLED},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void pt_usage(FILE *out)
{
    fputs("usage: vsched-plugin-test [options] PLUGIN [FILE...]\n"
          "\n"
          "Load one plugin as vsched-run does (PLUGIN is a name searched\n"
          "like vsched-run's, or a path containing '/') and call each of\n"
          "its operations on FILES (source names relative to the loader\n"
          "root), printing the results.\n"
          "\n"
          "options:\n"
          "  --config FILE          INI file with the plugin's section\n"
          "                         ([executor] or [loader]), [profile.*]\n"
          "                         and [vsched] plugin_path\n"
          "  --set SECTION.KEY=VALUE  set a configuration key (repeatable)\n"
          "  --root DIR             loader root (default: [loader] root, or\n"
          "                         the built-in fs loader over .)\n"
          "  --role ROLE            test only ROLE: loader or executor\n"
          "  --stage STAGE          stop after STAGE: source, analysis or\n"
          "                         artifact (default artifact)\n"
          "  --profile NAME         artifact profile (repeatable; default\n"
          "                         [batch] profiles, else release)\n"
          "  --job KIND:NAME        also call job() with every artifact\n"
          "  --cancelled            is_cancelled() answers 1\n"
          "  --version              print the version and exit\n"
          "  --help                 print this help and exit\n"
          "\n"
          "exit status: 0 every operation succeeded, 1 an operation failed\n"
          "or a contract was broken, 2 usage, configuration or plugin error\n",
          out);
}

static void pt_push(const char ***v, size_t *n, const char *s)
{
    *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

static int pt_parse_role(const char *arg, unsigned *roles)
{
    if (strcmp(arg, "loader") == 0)
        *roles = VSCHED_ROLE_LOADER;
    else if (strcmp(arg, "executor") == 0)
        *roles = VSCHED_ROLE_EXECUTOR;
    else
        return -1;
    return 0;
}

static int pt_parse_stage(const char *arg, int *stage)
{
    for (int s = VSCHED_STAGE_SOURCE; s <= VSCHED_STAGE_ARTIFACT; s++)
        if (strcmp(arg, vsched_stage_name((vsched_stage)s)) == 0) {
            *stage = s;
            return 0;
        }
    return -1;
}

/* Returns 0, or -1 with *err set (heap). */
static int pt_parse(pt_opts *o, int argc, char **argv, char **err)
{
    memset(o, 0, sizeof *o);
    o->last_stage = VSCHED_STAGE_ARTIFACT;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", pt_long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG: o->config = optarg; break;
        case OPT_SET: pt_push(&o->sets, &o->n_sets, optarg); break;
        case OPT_PROFILE: pt_push(&o->profiles, &o->n_profiles, optarg); break;
        case OPT_ROOT: o->root = optarg; break;
        case OPT_JOB: o->job = optarg; break;
        case OPT_CANCELLED: o->cancelled = 1; break;
        case OPT_HELP: o->help = 1; break;
        case OPT_VERSION: o->version = 1; break;
        case OPT_ROLE:
            if (pt_parse_role(optarg, &o->roles) != 0) {
                *err = vr_strfmt("--role: expected loader or executor, got "
                                 "'%s'", optarg);
                return -1;
            }
            break;
        case OPT_STAGE:
            if (pt_parse_stage(optarg, &o->last_stage) != 0) {
                *err = vr_strfmt("--stage: expected source, analysis or "
                                 "artifact, got '%s'", optarg);
                return -1;
            }
            break;
        case ':':
            *err = vr_strfmt("option '%s' needs an argument",
                             argv[optind - 1]);
            return -1;
        default:
            *err = vr_strfmt("unknown option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (o->job != NULL) {
        const char *colon = strchr(o->job, ':');
        if (colon == NULL || colon == o->job || colon[1] == '\0') {
            *err = vr_strfmt("--job: expected KIND:NAME, got '%s'", o->job);
            return -1;
        }
    }
    if (optind < argc)
        o->plugin = argv[optind++];
    o->files = argv + optind;
    o->n_files = (size_t)(argc - optind);
    if (o->plugin == NULL && !o->help && !o->version) {
        *err = vr_xstrdup("no PLUGIN given");
        return -1;
    }
    return 0;
}

/* ---- the test run and its context --------------------------------------- */

/* One source file as far as the run took it. */
typedef struct pt_file {
    char *name;              /* canonical source name (heap) */
    int state;               /* 0 new, 1 in progress, 2 done */
    int status;              /* 0, or the status it failed with */
    int have_snapshot;
    void *snapshot;          /* executor-owned until snapshot_free */
    uint64_t content_hash;
    uint64_t analysis_hash;
    vsched_deps_out deps;    /* host-owned (test allocator) */
    char **artifacts;        /* published path per profile, or NULL */
} pt_file;

typedef struct pt_run {
    const pt_opts *opts;
    vsched_ctx ctx;          /* ctx.host points back here */
    const char *current;     /* name of the file being worked on */
    int quiet_diags;         /* repeated calls: do not print again */
    void **live_v;           /* ctx->alloc blocks not yet freed */
    size_t live, live_cap;
    void **dead_v;           /* ring of the last PT_DEAD_RING freed */
    size_t dead_next;
    size_t failed_ops;
    size_t violations;
    size_t warnings;

    const vsched_loader_ops *lops;
    void *linst;
    const vsched_executor_ops *xops;
    void *xinst;

    char **profiles;
    size_t n_profiles;
    pt_file *files;
    size_t n_files, cap_files;
} pt_run;

/* A line about the current file: "NAME: TEXT". */
static void pt_say(const pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
static void pt_say(const pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void pt_violation(pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
static void pt_violation(pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: contract: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    r->violations++;
}

static void pt_warning(pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
static void pt_warning(pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: warning: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    r->warnings++;
}

/* Print an operation's outcome; returns rc normalised (0 or negative). A
 * status outside the VSCHED_E* list is a contract violation. */
static int pt_outcome(pt_run *r, const char *op, int rc, const char *detail)
{
    if (rc == VSCHED_OK) {
        pt_say(r, "%s: ok%s%s", op, detail != NULL ? " " : "",
               detail != NULL ? detail : "");
        return 0;
    }
    if (rc > 0 || strcmp(vsched_errname(rc), "VSCHED_E?") == 0) {
        pt_violation(r, "%s returned %d, which is neither 0 nor a "
                        "VSCHED_E* status",
                     op, rc);
        rc = VSCHED_EERR;
    }
    pt_say(r, "%s: failed %s (%s)", op, vsched_errname(rc),
           vsched_strerror(rc));
    r->failed_ops++;
    return rc;
}

/* The test allocator: the run keeps the set of blocks ctx->alloc handed
 * out and not yet freed (and a ring of recently freed ones), so a buffer
 * the host receives can be checked to come from ctx->alloc without ever
 * reading memory outside it (the check is sanitizer-clean), and a block
 * still live at the end is a leak of host memory. */
#define PT_DEAD_RING 4096

/* Index of p in r->live_v, or -1. */
static long pt_live_find(const pt_run *r, const void *p)
{
    for (size_t i = r->live; i-- > 0;)
        if (r->live_v[i] == p)
            return (long)i;
    return -1;
}

static void pt_live_add(pt_run *r, void *p)
{
    if (r->live == r->live_cap) {
        r->live_cap = r->live_cap ? 2 * r->live_cap : 64;
        r->live_v = vr_xrealloc(r->live_v, r->live_cap * sizeof *r->live_v);
    }
    r->live_v[r->live++] = p;
    for (size_t i = 0; i < PT_DEAD_RING; i++) /* an address reused */
        if (r->dead_v[i] == p)
            r->dead_v[i] = NULL;
}

static void pt_live_remove(pt_run *r, size_t i)
{
    r->dead_v[r->dead_next++ % PT_DEAD_RING] = r->live_v[i];
    r->live_v[i] = r->live_v[--r->live];
}

/* Index of p when it is a live ctx->alloc block. Otherwise a violation
 * naming `what`, and -1 for a block freed already (it must not be freed
 * again) or -2 for a foreign pointer (which the host would free(): so does
 * the caller, as the host's allocator is malloc). */
static long pt_check_block(pt_run *r, const void *p, const char *what)
{
    long i = pt_live_find(r, p);
    if (i >= 0)
        return i;
    int dead = 0;
    for (size_t k = 0; k < PT_DEAD_RING && !dead; k++)
        dead = r->dead_v[k] == p;
    if (dead)
        pt_violation(r, "%s was already freed", what);
    else
        pt_violation(r, "%s was not allocated with ctx->alloc", what);
    return dead ? -1 : -2;
}

static void *pt_ctx_alloc(const vsched_ctx *ctx, size_t n)
{
    pt_run *r = ctx->host;
    void *p = malloc(n != 0 ? n : 1);
    if (p != NULL)
        pt_live_add(r, p);
    return p;
}

static void pt_ctx_free(const vsched_ctx *ctx, void *p)
{
    pt_run *r = ctx->host;
    if (p == NULL)
        return;
    long i = pt_check_block(r, p, "a pointer given to ctx->free");
    if (i >= 0)
        pt_live_remove(r, (size_t)i);
    if (i != -1)
        free(p);
}

static void *pt_ctx_realloc(const vsched_ctx *ctx, void *p, size_t n)
{
    pt_run *r = ctx->host;
    if (p == NULL)
        return pt_ctx_alloc(ctx, n);
    long i = pt_check_block(r, p, "a pointer given to ctx->realloc");
    if (i < 0)
        return NULL;
    void *np = realloc(p, n != 0 ? n : 1);
    if (np == NULL)
        return NULL;
    r->live_v[i] = np;
    return np;
}

/* Release a buffer the plugin handed to the host, as the host would. */
static void pt_release(pt_run *r, void *p, const char *what)
{
    if (p == NULL)
        return;
    long i = pt_check_block(r, p, what);
    if (i >= 0)
        pt_live_remove(r, (size_t)i);
    if (i != -1)
        free(p);
}

static int pt_ctx_is_cancelled(const vsched_ctx *ctx)
{
    const pt_run *r = ctx->host;
    return r->opts->cancelled;
}

static const char *pt_severity(vsched_severity sev)
{
    switch (sev) {
    case VSCHED_SEV_NOTE: return "note";
    case VSCHED_SEV_WARNING: return "warning";
    case VSCHED_SEV_ERROR: return "error";
    }
    return "?";
}

/* "NAME: diag: SEVERITY FILE:LINE: MESSAGE", continuation lines indented. */
static void pt_ctx_diag(const vsched_ctx *ctx, vsched_severity sev,
                        const char *file, unsigned line, const char *message)
{
    pt_run *r = ctx->host;
    if (message == NULL) {
        pt_violation(r, "diag() called with a NULL message");
        return;
    }
    if (r->quiet_diags)
        return;
    printf("%s: diag: %s ", r->current != NULL ? r->current : "-",
           pt_severity(sev));
    if (file != NULL && line != 0)
        printf("%s:%u: ", file, line);
    else if (file != NULL)
        printf("%s: ", file);
    for (const char *p = message; *p != '\0'; p++) {
        putchar(*p);
        if (*p == '\n' && p[1] != '\0')
            fputs("    ", stdout);
    }
    if (message[0] == '\0' || message[strlen(message) - 1] != '\n')
        putchar('\n');
}

/* ---- loader operations -------------------------------------------------- */

/* realpath of `name`: the canonical name (heap, via strdup) or NULL. */
static char *pt_realpath(pt_run *r, const char *name, int print)
{
    char *canon = NULL;
    int rc = r->lops->realpath(r->linst, &r->ctx, name, &canon);
    if (!print) {
        char *copy = rc == 0 && canon != NULL ? vr_xstrdup(canon) : NULL;
        pt_release(r, canon, "realpath's *canonical");
        return copy;
    }
    if (rc == 0 && canon == NULL) {
        pt_violation(r, "realpath returned 0 without setting *canonical");
        rc = VSCHED_EERR;
    }
    if (pt_outcome(r, "realpath", rc, rc == 0 ? canon : NULL) != 0) {
        pt_release(r, canon, "realpath's *canonical"); /* host frees it */
        return NULL;
    }
    char *copy = vr_xstrdup(canon);
    pt_release(r, canon, "realpath's *canonical");
    char *again = pt_realpath(r, copy, 0);
    if (again == NULL || strcmp(again, copy) != 0)
        pt_warning(r, "realpath is not idempotent: realpath(\"%s\") is %s%s%s",
                   copy, again != NULL ? "\"" : "",
                   again != NULL ? again : "an error",
                   again != NULL ? "\"" : "");
    free(again);
    return copy;
}

static void pt_exists(pt_run *r, const char *name)
{
    int rc = r->lops->exists(r->linst, &r->ctx, name);
    if (rc == 0 || rc == 1) {
        pt_say(r, "exists: ok %d", rc);
        return;
    }
    pt_outcome(r, "exists", rc, NULL);
}

/* classify into kind[cap]; 0 or a status. */
static int pt_classify(pt_run *r, const char *name, char *kind, size_t cap)
{
    memset(kind, 0x7f, cap);
    int rc = r->lops->classify(r->linst, &r->ctx, name, kind, cap);
    if (rc == 0 && memchr(kind, '\0', cap) == NULL) {
        pt_violation(r, "classify did not NUL-terminate within %zu bytes",
                     cap);
        rc = VSCHED_EERR;
    }
    if (rc != 0)
        kind[0] = '\0';
    return pt_outcome(r, "classify", rc, rc == 0 ? kind : NULL);
}

/* load: *bytes (heap copy via malloc) and *len, or a status. */
static int pt_load(pt_run *r, const char *name, char **bytes, size_t *len)
{
    char *b = NULL;
    size_t n = 0;
    int rc = r->lops->load(r->linst, &r->ctx, name, &b, &n);
    if (rc == 0 && b == NULL && n > 0) {
        pt_violation(r, "load returned %zu bytes but *bytes is NULL", n);
        rc = VSCHED_EERR;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "%zu bytes", n);
    rc = pt_outcome(r, "load", rc, detail);
    *bytes = NULL;
    *len = 0;
    if (rc == 0) {
        *bytes = vr_xmalloc(n + 1);
        if (n > 0)
            memcpy(*bytes, b, n);
        (*bytes)[n] = '\0';
        *len = n;
    }
    pt_release(r, b, "load's *bytes");
    return rc;
}

/* ---- executor operations ------------------------------------------------ */

static pt_file *pt_file_get(pt_run *r, const char *name)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (strcmp(r->files[i].name, name) == 0)
            return &r->files[i];
    if (r->n_files == r->cap_files) {
        r->cap_files = r->cap_files ? 2 * r->cap_files : 16;
        r->files = vr_xrealloc(r->files, r->cap_files * sizeof *r->files);
    }
    pt_file *f = &r->files[r->n_files++];
    memset(f, 0, sizeof *f);
    f->name = vr_xstrdup(name);
    f->artifacts = vr_xcalloc(r->n_profiles + 1, sizeof *f->artifacts);
    return f;
}

/* Check the names of a deps array: non-NULL, non-empty, canonical. */
static void pt_check_names(pt_run *r, char **v, size_t n, const char *what)
{
    if (n > 0 && v == NULL) {
        pt_violation(r, "extract_deps set %zu %s but a NULL array", n, what);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] == NULL || v[i][0] == '\0') {
            pt_violation(r, "extract_deps: %s[%zu] is %s", what, i,
                         v[i] == NULL ? "NULL" : "empty");
            continue;
        }
        pt_say(r, "%s: %s", strcmp(what, "deps") == 0 ? "dep" : "blocker",
               v[i]);
        char *canon = pt_realpath(r, v[i], 0);
        if (canon != NULL && strcmp(canon, v[i]) != 0)
            pt_warning(r, "%s '%s' is not canonical (the loader's realpath "
                          "says '%s'): the host would track two files",
                       strcmp(what, "deps") == 0 ? "dep" : "blocker", v[i],
                       canon);
        free(canon);
    }
}

/* Free a deps result as the host does: the arrays up to their counts. */
static void pt_deps_release(pt_run *r, vsched_deps_out *d)
{
    for (size_t k = 0; d->deps != NULL && k < d->n_deps; k++)
        pt_release(r, d->deps[k], "a deps name");
    for (size_t k = 0; d->blockers != NULL && k < d->n_blockers; k++)
        pt_release(r, d->blockers[k], "a blockers name");
    pt_release(r, d->deps, "the deps array");
    pt_release(r, d->blockers, "the blockers array");
    memset(d, 0, sizeof *d);
}

/* source (twice) + extract_deps of f, from `bytes`. */
static int pt_source(pt_run *r, pt_file *f, const char *kind,
                     const char *bytes, size_t len)
{
    vsched_source_out out = {0}, again = {0};
    int rc = r->xops->source(r->xinst, &r->ctx, f->name, kind, bytes, len,
                             &out);
    char detail[64];
    snprintf(detail, sizeof detail, "content_hash=0x%016llx",
             (unsigned long long)out.content_hash);
    if ((rc = pt_outcome(r, "source", rc, detail)) != 0)
        return rc;
    f->snapshot = out.snapshot;
    f->have_snapshot = 1;
    f->content_hash = out.content_hash;
    r->quiet_diags = 1;
    int rc2 = r->xops->source(r->xinst, &r->ctx, f->name, kind, bytes, len,
                              &again);
    r->quiet_diags = 0;
    if (rc2 != 0 || again.content_hash != out.content_hash)
        pt_violation(r, "source is not repeatable: a second call on the same "
                        "bytes gave %s",
                     rc2 != 0 ? vsched_errname(rc2) : "another content hash");
    if (rc2 == 0 && again.snapshot != NULL)
        r->xops->snapshot_free(r->xinst, again.snapshot);

    rc = r->xops->extract_deps(r->xinst, &r->ctx, f->name, f->snapshot,
                               &f->deps);
    snprintf(detail, sizeof detail, "%zu deps, %zu blockers",
             rc == 0 ? f->deps.n_deps : 0, rc == 0 ? f->deps.n_blockers : 0);
    if ((rc = pt_outcome(r, "extract_deps", rc, detail)) != 0) {
        pt_deps_release(r, &f->deps); /* the host frees what is set */
        return rc;
    }
    pt_check_names(r, f->deps.deps, f->deps.n_deps, "deps");
    pt_check_names(r, f->deps.blockers, f->deps.n_blockers, "blockers");
    return 0;
}

static int pt_prepare(pt_run *r, const char *name, int want_analysis);

/* Analysis hashes of f's blockers into a heap array (NULL when none), or
 * NULL with *rc set when a blocker fails. */
static uint64_t *pt_blocker_hashes(pt_run *r, pt_file *f, int *rc)
{
    size_t n = f->deps.n_blockers;
    uint64_t *h = vr_xcalloc(n + 1, sizeof *h);
    char *name = vr_xstrdup(f->name);
    *rc = 0;
    for (size_t i = 0; i < n && *rc == 0; i++) {
        const char *b = f->deps.blockers[i];
        if (b == NULL || b[0] == '\0')
            continue;
        int st = pt_prepare(r, b, 1);
        pt_file *bf = pt_file_get(r, b);
        f = pt_file_get(r, name); /* the array may have moved */
        r->current = f->name;     /* pt_prepare moved on to the blocker */
        if (st == 1) {
            pt_say(r, "analysis: failed VSCHED_ECYCLE (blocker cycle "
                      "through '%s')", b);
            *rc = VSCHED_ECYCLE;
        } else if (st != 0) {
            pt_say(r, "analysis: failed VSCHED_EDEPFAIL (blocker '%s' "
                      "failed)", b);
            *rc = VSCHED_EDEPFAIL;
        } else {
            h[i] = bf->analysis_hash;
            pt_say(r, "blocker_hash: %s 0x%016llx", b,
                   (unsigned long long)h[i]);
        }
    }
    free(name);
    if (*rc != 0) {
        r->failed_ops++;
        free(h);
        return NULL;
    }
    return h;
}

/* analysis (twice) of f. */
static int pt_analysis(pt_run *r, const char *name)
{
    int rc;
    uint64_t *bh = pt_blocker_hashes(r, pt_file_get(r, name), &rc);
    if (rc != 0)
        return rc;
    pt_file *f = pt_file_get(r, name);
    vsched_analysis_in in = {f->name, f->snapshot, f->content_hash, bh,
                             f->deps.n_blockers};
    uint64_t hash = 0, again = 0;
    rc = r->xops->analysis(r->xinst, &r->ctx, &in, &hash);
    char detail[64];
    snprintf(detail, sizeof detail, "analysis_hash=0x%016llx",
             (unsigned long long)hash);
    if ((rc = pt_outcome(r, "analysis", rc, detail)) == 0) {
        f->analysis_hash = hash;
        r->quiet_diags = 1;
        int rc2 = r->xops->analysis(r->xinst, &r->ctx, &in, &again);
        r->quiet_diags = 0;
        if (rc2 != 0 || again != hash)
            pt_violation(r, "analysis is not a pure function of its inputs: "
                            "a second call gave %s",
                         rc2 != 0 ? vsched_errname(rc2) : "another hash");
    }
    free(bh);
    return rc;
}

/* Take `name` (canonical) through load, source, extract_deps and, when
 * asked, analysis. Returns 0, 1 when it is already in progress (a blocker
 * cycle), or the status it failed with. Each file is worked once. */
static int pt_prepare(pt_run *r, const char *name, int want_analysis)
{
    pt_file *f = pt_file_get(r, name);
    if (f->state == 1)
        return 1;
    if (f->state == 2)
        return f->status;
    f->state = 1;
    r->current = f->name;
    char kind[32];
    char *bytes = NULL;
    size_t len = 0;
    pt_exists(r, name);
    int rc = pt_classify(r, name, kind, sizeof kind);
    if (rc == 0)
        rc = pt_load(r, name, &bytes, &len);
    if (rc == 0 && r->xops != NULL)
        rc = pt_source(r, f, kind, bytes, len);
    free(bytes);
    if (rc == 0 && r->xops != NULL && want_analysis)
        rc = pt_analysis(r, name);
    f = pt_file_get(r, name);
    f->state = 2;
    f->status = rc;
    return rc;
}

/* dirname of an absolute path (heap). */
static char *pt_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    return vr_strfmt("%.*s", (int)n, path);
}

/* Write `bytes` to a temporary file beside `path` and rename it there, as
 * the host does. Returns 0 or errno. */
static int pt_write_bytes(const char *path, const char *bytes, size_t len)
{
    char *tmp = vr_strfmt("%s.tmp.%ld.XXXXXX", path, (long)getpid());
    int fd = mkstemp(tmp);
    int err = fd < 0 ? errno : 0;
    for (size_t off = 0; err == 0 && off < len;) {
        ssize_t w = write(fd, bytes + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            err = w < 0 ? errno : EIO;
        else
            off += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err != 0 && fd >= 0)
        unlink(tmp);
    free(tmp);
    return err;
}

/* Check and publish an artifact or job output. Returns the published path
 * (heap) or NULL; *how says what was done. */
static char *pt_publish(pt_run *r, const char *op, vsched_artifact_out *out,
                        int *rc)
{
    *rc = 0;
    if (out->path == NULL) {
        if (out->tmp_path != NULL) {
            pt_violation(r, "%s set tmp_path but no path", op);
            unlink(out->tmp_path);
        } else if (out->bytes != NULL) {
            pt_warning(r, "%s returned bytes but no path: they are dropped",
                       op);
        }
        return NULL;
    }
    if (out->path[0] != '/') {
        pt_violation(r, "%s: path '%s' is not absolute", op, out->path);
        *rc = VSCHED_EERR;
        return NULL;
    }
    if (out->tmp_path != NULL) {
        char *d1 = pt_dirname(out->path), *d2 = pt_dirname(out->tmp_path);
        int same = strcmp(d1, d2) == 0;
        free(d1);
        free(d2);
        if (!same)
            pt_violation(r, "%s: tmp_path '%s' is not in the directory of "
                            "path '%s' (the rename would not be atomic)",
                         op, out->tmp_path, out->path);
        if (access(out->tmp_path, F_OK) != 0) {
            pt_violation(r, "%s: tmp_path '%s' does not exist", op,
                         out->tmp_path);
            *rc = VSCHED_EERR;
            return NULL;
        }
        if (rename(out->tmp_path, out->path) != 0)
            *rc = errno;
    } else {
        *rc = pt_write_bytes(out->path, out->bytes != NULL ? out->bytes : "",
                             out->len);
    }
    if (*rc != 0) {
        pt_say(r, "%s: cannot publish %s: %s", op, out->path, strerror(*rc));
        *rc = VSCHED_EIO;
        return NULL;
    }
    return vr_xstrdup(out->path);
}

/* The files an artifact says it read (ABI 1.1): named like deps, then
 * released as the host does. */
static void pt_out_deps(pt_run *r, vsched_artifact_out *out, const char *op)
{
    if (out->n_deps > 0 && out->deps == NULL)
        pt_violation(r, "%s set %zu deps but a NULL array", op, out->n_deps);
    for (size_t i = 0; out->deps != NULL && i < out->n_deps; i++) {
        const char *d = out->deps[i];
        if (d == NULL || d[0] == '\0' || d[0] == '/') {
            pt_violation(r, "%s: deps[%zu] is %s", op, i,
                         d == NULL ? "NULL" : d[0] == '\0' ? "empty"
                                                           : "absolute");
        } else {
            pt_say(r, "%s read: %s", op, d);
            char *canon = pt_realpath(r, d, 0);
            if (canon != NULL && strcmp(canon, d) != 0)
                pt_warning(r, "%s: '%s' is not canonical (the loader's "
                              "realpath says '%s')",
                           op, d, canon);
            free(canon);
        }
        pt_release(r, out->deps[i], "an artifact deps name");
    }
    pt_release(r, out->deps, "the artifact deps array");
    out->deps = NULL;
    out->n_deps = 0;
}

static void pt_out_release(pt_run *r, vsched_artifact_out *out,
                           const char *op)
{
    char what[64];
    pt_out_deps(r, out, op);
    snprintf(what, sizeof what, "%s's out->path", op);
    pt_release(r, out->path, what);
    snprintf(what, sizeof what, "%s's out->tmp_path", op);
    pt_release(r, out->tmp_path, what);
    snprintf(what, sizeof what, "%s's out->bytes", op);
    pt_release(r, out->bytes, what);
}

/* artifact of f for profile p, published. */
static void pt_artifact(pt_run *r, pt_file *f, size_t p)
{
    const char *profile = r->profiles[p];
    char op[128];
    snprintf(op, sizeof op, "artifact[%s]", profile);
    vsched_artifact_in in = {f->name, profile, f->snapshot, f->analysis_hash};
    vsched_artifact_out out = {0};
    int rc = r->xops->artifact(r->xinst, &r->ctx, &in, &out);
    if (rc != 0) {
        if (out.tmp_path != NULL)
            unlink(out.tmp_path);
        pt_outcome(r, op, rc, NULL);
        pt_out_release(r, &out, op);
        return;
    }
    int prc;
    char *path = pt_publish(r, op, &out, &prc);
    char *detail = vr_strfmt("%s (%s) artifact_hash=0x%016llx",
                             path != NULL ? path : "no file",
                             out.path == NULL ? "nothing written"
                             : out.tmp_path != NULL ? "via tmp_path"
                                                    : "from bytes",
                             (unsigned long long)out.artifact_hash);
    pt_outcome(r, op, prc, prc == 0 ? detail : NULL);
    free(detail);
    f->artifacts[p] = path;
    pt_out_release(r, &out, op);
}

/* job KIND:NAME for each profile, with the published artifacts. */
static void pt_job(pt_run *r)
{
    const char *spec = r->opts->job;
    const char *colon = strchr(spec, ':');
    char *kind = vr_strfmt("%.*s", (int)(colon - spec), spec);
    r->current = "job";
    for (size_t p = 0; p < r->n_profiles; p++) {
        const char **inputs = vr_xcalloc(r->n_files + 1, sizeof *inputs);
        size_t n = 0;
        for (size_t i = 0; i < r->n_files; i++)
            if (r->files[i].artifacts[p] != NULL)
                inputs[n++] = r->files[i].artifacts[p];
        char op[256];
        snprintf(op, sizeof op, "job[%s %s %s]", kind, colon + 1,
                 r->profiles[p]);
        if (r->xops->job == NULL ||
            r->xops->size < offsetof(vsched_executor_ops, job) +
                                sizeof r->xops->job) {
            pt_say(r, "%s: not provided (the optional operation is NULL)", op);
            free(inputs);
            continue;
        }
        vsched_job_in in = {kind, colon + 1, r->profiles[p], inputs, n};
        vsched_artifact_out out = {0};
        int rc = r->xops->job(r->xinst, &r->ctx, &in, &out);
        if (rc == 0) {
            char *path = pt_publish(r, op, &out, &rc);
            char *detail = vr_strfmt("%zu inputs, %s", n,
                                     path != NULL ? path : "no file");
            pt_outcome(r, op, rc, rc == 0 ? detail : NULL);
            free(detail);
            free(path);
        } else {
            if (out.tmp_path != NULL)
                unlink(out.tmp_path);
            pt_outcome(r, op, rc, NULL);
        }
        pt_out_release(r, &out, op);
        free(inputs);
    }
    free(kind);
}

/* identity (ABI 1.1, optional) of each profile, twice: it must be stable
 * within a run, since the host folds it into every artifact key. */
static void pt_identity(pt_run *r)
{
    if (r->xops == NULL ||
        !VR_OPS_COVERS(r->xops, vsched_executor_ops, identity) ||
        r->xops->identity == NULL)
        return;
    r->current = "identity";
    for (size_t p = 0; p < r->n_profiles; p++) {
        char op[128];
        snprintf(op, sizeof op, "identity[%s]", r->profiles[p]);
        uint64_t a = 0, b = 0;
        int rc = r->xops->identity(r->xinst, &r->ctx, r->profiles[p], &a);
        if (rc == 0)
            rc = r->xops->identity(r->xinst, &r->ctx, r->profiles[p], &b);
        char *detail = vr_strfmt("0x%016llx", (unsigned long long)a);
        pt_outcome(r, op, rc, rc == 0 ? detail : NULL);
        free(detail);
        if (rc == 0 && a != b)
            pt_violation(r, "%s is not stable: 0x%016llx, then 0x%016llx", op,
                         (unsigned long long)a, (unsigned long long)b);
    }
}

/* Everything for one named FILE. */
static void pt_one(pt_run *r, const char *given)
{
    r->current = given;
    char *canon = pt_realpath(r, given, 1);
    if (canon == NULL)
        return;
    int want_analysis = r->xops != NULL &&
                        r->opts->last_stage >= VSCHED_STAGE_ANALYSIS;
    int rc = pt_prepare(r, canon, want_analysis);
    pt_file *f = pt_file_get(r, canon);
    r->current = f->name;
    if (rc == 0 && r->xops != NULL &&
        r->opts->last_stage >= VSCHED_STAGE_ARTIFACT)
        for (size_t p = 0; p < r->n_profiles; p++)
            pt_artifact(r, pt_file_get(r, canon), p);
    free(canon);
}

static void pt_run_free(pt_run *r)
{
    for (size_t i = 0; i < r->n_files; i++) {
        pt_file *f = &r->files[i];
        r->current = f->name;
        if (f->have_snapshot && f->snapshot != NULL)
            r->xops->snapshot_free(r->xinst, f->snapshot);
        pt_deps_release(r, &f->deps);
        for (size_t p = 0; p < r->n_profiles; p++)
            free(f->artifacts[p]);
        free(f->artifacts);
        free(f->name);
    }
    free(r->files);
    r->current = NULL;
    for (size_t p = 0; p < r->n_profiles; p++)
        free(r->profiles[p]);
    free(r->profiles);
}

/* ---- setup -------------------------------------------------------------- */

/* What the run holds open. */
typedef struct pt_plugins {
    vr_plugin *plugin, *loader_plugin; /* loader_plugin may equal plugin */
    void *loader_inst, *executor_inst;
} pt_plugins;

static int pt_fail_setup(char *err)
{
    fprintf(stderr, "vsched-plugin-test: %s\n", err != NULL ? err : "error");
    free(err);
    return PT_EXIT_USAGE;
}

/* The configuration: --config or an empty one, then --set, then --root. */
static int pt_config(const pt_opts *o, vr_config **cfg, char **err)
{
    int rc;
    if (o->config != NULL) {
        rc = vr_config_load(cfg, o->config, err);
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL)
            strcpy(cwd, "/");
        rc = vr_config_load_string(cfg, "", "(no --config)", cwd, err);
    }
    for (size_t i = 0; rc == 0 && i < o->n_sets; i++)
        rc = vr_config_set(*cfg, o->sets[i], err);
    return rc;
}

/* --root sets [loader] root. When the tested plugin is not its own
 * loader (`self` 0) and the configuration names none, [loader] becomes the
 * built-in fs over --root, or over "." without one. */
static int pt_loader_config(const pt_opts *o, vr_config *cfg, int self,
                            char **err)
{
    int rc = 0, dflt = 0;
    if (!self && vr_config_get(cfg, "loader", "plugin") == NULL) {
        rc = vr_config_set(cfg, "loader.plugin=fs", err);
        dflt = vr_config_get(cfg, "loader", "root") == NULL;
    }
    if (rc == 0 && (o->root != NULL || dflt)) {
        char *abs = realpath(o->root != NULL ? o->root : ".", NULL);
        if (abs == NULL) {
            *err = vr_strfmt("--root %s: %s", o->root, strerror(errno));
            return VSCHED_EINVAL;
        }
        char *set = vr_strfmt("loader.root=%s", abs);
        rc = vr_config_set(cfg, set, err);
        free(set);
        free(abs);
    }
    return rc;
}

/* Profiles: --profile, else [batch] profiles, else release. */
static void pt_profiles(pt_run *r, const vr_config *cfg)
{
    const pt_opts *o = r->opts;
    for (size_t i = 0; i < o->n_profiles; i++) {
        r->profiles = vr_xrealloc(r->profiles,
                                  (r->n_profiles + 1) * sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup(o->profiles[i]);
    }
    if (r->n_profiles > 0)
        return;
    const char *list = vr_config_get(cfg, "batch", "profiles");
    char *copy = vr_xstrdup(list != NULL ? list : "");
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        r->profiles = vr_xrealloc(r->profiles,
                                  (r->n_profiles + 1) * sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup(w);
    }
    free(copy);
    if (r->n_profiles == 0) {
        r->profiles = vr_xmalloc(sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup("release");
    }
}

static const char *pt_roles_text(unsigned roles)
{
    if ((roles & VSCHED_ROLE_LOADER) && (roles & VSCHED_ROLE_EXECUTOR))
        return "loader, executor";
    return (roles & VSCHED_ROLE_LOADER) ? "loader" : "executor";
}

static void pt_describe(const char *what, const vr_plugin *p, unsigned roles)
{
    const vsched_plugin *d = vr_plugin_descriptor(p);
    printf("%s: %s %s, ABI %u.%u, %s, %s (%s)\n", what, d->name,
           d->version != NULL ? d->version : "-", (unsigned)d->abi_major,
           (unsigned)d->abi_minor, pt_roles_text(roles),
           (d->flags & VSCHED_PLUGIN_THREAD_SAFE) ? "thread-safe"
                                                  : "not thread-safe",
           vr_plugin_origin(p));
}

/* Open the plugin (and the loader feeding an executor), create the
 * instances. Returns 0 or an exit status with the message printed. */
static int pt_open(const pt_opts *o, vr_config *cfg, pt_plugins *pl,
                   pt_run *r)
{
    char *err = NULL;
    if (vr_plugin_open(&pl->plugin, o->plugin, cfg, &err) != 0)
        return pt_fail_setup(err);
    const vsched_plugin *d = vr_plugin_descriptor(pl->plugin);
    unsigned roles = o->roles != 0 ? o->roles : d->roles;
    if ((d->roles & roles) != roles)
        return pt_fail_setup(vr_strfmt("plugin '%s' does not provide role "
                                       "%s",
                                       d->name, pt_roles_text(roles)));
    pt_describe("plugin", pl->plugin, roles);
    int self = (roles & VSCHED_ROLE_LOADER) != 0;
    if (pt_loader_config(o, cfg, self, &err) != 0)
        return pt_fail_setup(err);
    if (self) {
        pl->loader_plugin = pl->plugin;
    } else {
        const char *name = vr_config_get(cfg, "loader", "plugin");
        if (vr_plugin_open(&pl->loader_plugin, name, cfg, &err) != 0)
            return pt_fail_setup(err);
        pt_describe("loader", pl->loader_plugin, VSCHED_ROLE_LOADER);
    }
    if (vr_plugin_instantiate(pl->loader_plugin, VSCHED_ROLE_LOADER, cfg,
                              "loader", &pl->loader_inst, &err) != 0)
        return pt_fail_setup(err);
    r->lops = vr_plugin_descriptor(pl->loader_plugin)->loader;
    r->linst = pl->loader_inst;
    if (roles & VSCHED_ROLE_EXECUTOR) {
        if (vr_plugin_instantiate(pl->plugin, VSCHED_ROLE_EXECUTOR, cfg,
                                  "executor", &pl->executor_inst, &err) != 0)
            return pt_fail_setup(err);
        r->xops = d->executor;
        r->xinst = pl->executor_inst;
    }
    return 0;
}

static void pt_close(pt_plugins *pl)
{
    if (pl->executor_inst != NULL)
        vr_plugin_destroy_instance(pl->plugin, pl->executor_inst);
    if (pl->loader_inst != NULL)
        vr_plugin_destroy_instance(pl->loader_plugin, pl->loader_inst);
    if (pl->loader_plugin != pl->plugin)
        vr_plugin_close(pl->loader_plugin);
    vr_plugin_close(pl->plugin);
}

static int pt_main(const pt_opts *o)
{
    char *err = NULL;
    vr_config *cfg = NULL;
    if (pt_config(o, &cfg, &err) != 0) {
        vr_config_free(cfg);
        return pt_fail_setup(err);
    }
    pt_run r = {.opts = o};
    r.dead_v = vr_xcalloc(PT_DEAD_RING, sizeof *r.dead_v);
    r.ctx = (vsched_ctx){
        .size = sizeof(vsched_ctx),
        .is_cancelled = pt_ctx_is_cancelled,
        .diag = pt_ctx_diag,
        .alloc = pt_ctx_alloc,
        .realloc = pt_ctx_realloc,
        .free = pt_ctx_free,
        .host = &r,
    };
    pt_plugins pl = {0};
    int status = pt_open(o, cfg, &pl, &r);
    if (status == 0) {
        pt_profiles(&r, cfg);
        pt_identity(&r);
        for (size_t i = 0; i < o->n_files; i++)
            pt_one(&r, o->files[i]);
        if (o->job != NULL && r.xops != NULL &&
            o->last_stage >= VSCHED_STAGE_ARTIFACT)
            pt_job(&r);
        pt_run_free(&r);
        if (r.live != 0)
            pt_violation(&r, "%zu ctx->alloc blocks were never handed to "
                             "the host nor freed (a leak of host memory)",
                         r.live);
        printf("vsched-plugin-test: %zu files, %zu failed operations, %zu "
               "contract violations, %zu warnings\n",
               o->n_files, r.failed_ops, r.violations, r.warnings);
        status = r.failed_ops + r.violations > 0 ? PT_EXIT_FAILED
                                                 : PT_EXIT_OK;
    } else {
        pt_run_free(&r);
    }
    pt_close(&pl);
    vr_config_free(cfg);
    for (size_t i = 0; i < r.live; i++)
        free(r.live_v[i]);
    free(r.live_v);
    free(r.dead_v);
    return status;
}

int main(int argc, char **argv)
{
    pt_opts o;
    char *err = NULL;
    int status;
    if (pt_parse(&o, argc, argv, &err) != 0) {
        fprintf(stderr, "vsched-plugin-test: %s; try 'vsched-plugin-test "
                        "--help'\n",
                err);
        free(err);
        status = PT_EXIT_USAGE;
    } else if (o.help) {
        pt_usage(stdout);
        status = PT_EXIT_OK;
    } else if (o.version) {
        printf("vsched-plugin-test %s (plugin ABI %d.%d)\n",
               VSCHED_VERSION_STRING, VSCHED_PLUGIN_ABI_MAJOR,
               VSCHED_PLUGIN_ABI_MINOR);
        status = PT_EXIT_OK;
    } else if (vr_plugin_host_init(lt_preloaded_symbols) != 0) {
        fprintf(stderr, "vsched-plugin-test: cannot initialise libltdl\n");
        status = PT_EXIT_USAGE;
    } else {
        setvbuf(stdout, NULL, _IOLBF, 0);
        status = pt_main(&o);
        vr_plugin_host_exit();
    }
    free(o.sets);
    free(o.profiles);
    return status;
}
