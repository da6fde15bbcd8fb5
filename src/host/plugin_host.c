/*
 * plugin_host.c -- finding, loading, checking and instantiating plugins.
 *
 * How a NAME is found (vr_plugin_open):
 *
 *   - NAME containing '/': a file, opened as it is through lt_dlopenext
 *     (NAME.la, then NAME.so; NAME itself when it already ends in one).
 *   - a built-in: the modules linked into the program with libtool's
 *     -dlpreopen. Their symbols are in the program's lt_preloaded_symbols
 *     table, given to vr_plugin_host_init(). The table lists each module as
 *     an "originator" entry (address NULL) named after the file libtool
 *     linked: "fs.a" when static archives are built, "fs.so" in a
 *     shared-only build (ours: LT_INIT([disable-static])). libltdl's
 *     preopen loader only matches "NAME.a", so lt_dlopen cannot find a
 *     shared-only built-in through the table (it would only find the .so
 *     through LD_LIBRARY_PATH or by soname, which depends on how the
 *     program was started). The host therefore reads the entry point of a
 *     built-in straight from the table: the symbol
 *     NAME_LTX_vsched_plugin_entry listed after the originator "NAME.so",
 *     "NAME.a" or "NAME.la". That works the same from the build tree and
 *     installed, with no search path.
 *   - each directory of [vsched] plugin_path, $VSCHED_PLUGIN_PATH and
 *     VSCHED_PLUGINSDIR: DIR/NAME through lt_dlopenext. The host checks
 *     itself which file exists first, so "not found here" (try the next
 *     directory) and "found but cannot be loaded" (stop, report libltdl's
 *     reason) are told apart without parsing libltdl's messages.
 *
 * A descriptor is checked once, at open; later code trusts it. Fields are
 * read only when the descriptor's (or ops table's) `size` covers them.
 */
#include "plugin_host.h"

#include <dirent.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vsched/vsched.h>

#include "schema.h"
#include "util.h"

#ifndef VSCHED_PLUGINSDIR
#define VSCHED_PLUGINSDIR "/usr/local/lib/vsched/plugins"
#endif

/* Size of an ABI 1.0 descriptor: every field up to `executor`. Fields a
 * later minor appends lie beyond it and are read only when `size` covers
 * them. */
#define VR_PLUGIN_SIZE_1_0                                                    \
    (offsetof(vsched_plugin, executor) + sizeof(const vsched_executor_ops *))

/* Non-zero when ops table `ops` of type `type` is large enough to hold
 * `field`. */
#define VR_OPS_COVERS(ops, type, field)                                       \
    ((ops)->size >= offsetof(type, field) + sizeof((ops)->field))

/*
 * Lock: vr_plugin_lock guards every libltdl call (libltdl keeps its handle
 * list, preload lists and lt_dlerror() string in unprotected globals), and
 * vr_host_refs / vr_host_preloaded. Rank: outermost. It is held only
 * inside this module, around lt_* calls and the two variables; never while
 * calling into a plugin (entry, create, destroy) and never while taking any
 * other lock, so it cannot take part in a lock-order cycle.
 */
static pthread_mutex_t vr_plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned vr_host_refs;                  /* vr_plugin_host_init calls */
static const lt_dlsymlist *vr_host_preloaded;  /* built-ins, or NULL */

/* One value of a vsched_config, owned by the instance record. */
typedef struct vr_kv {
    char *section;
    char *key;
    char *value; /* NULL: unset and without default */
} vr_kv;

/* What the host keeps per instance: the configuration handed to create(),
 * a snapshot of every value (so the plugin may read it until destroy,
 * whatever happens to the vr_config), with defaults filled in and PATH
 * values made absolute. */
typedef struct vr_instance {
    void *inst;
    vsched_config cfg;
    char *section;
    char *config_dir;
    vr_kv *kv;
    size_t n_kv, cap_kv;
    struct vr_instance *next;
} vr_instance;

/* An open plugin. Not thread-safe: opened, instantiated, destroyed and
 * closed from one thread; the descriptor is read-only and may be read by
 * any thread while the plugin is open. */
struct vr_plugin {
    lt_dlhandle handle;         /* NULL for a built-in */
    const vsched_plugin *desc;  /* checked */
    char *label;                /* module name, used in every message */
    char *origin;               /* "built-in" or the loaded file */
    vr_instance *instances;     /* live instances */
};

/* ------------------------------------------------------------------------
 * Host context.
 */

static int vr_ctx_is_cancelled(const vsched_ctx *ctx)
{
    return 0;
}

static void vr_ctx_diag(const vsched_ctx *ctx, vsched_severity sev,
                        const char *file, unsigned line, const char *message)
{
    if (file != NULL && line != 0)
        fprintf(stderr, "plugin: %s:%u: %s\n", file, line, message);
    else if (file != NULL)
        fprintf(stderr, "plugin: %s: %s\n", file, message);
    else
        fprintf(stderr, "plugin: %s\n", message);
}

static void *vr_ctx_alloc(const vsched_ctx *ctx, size_t size)
{
    return malloc(size);
}

static void *vr_ctx_realloc(const vsched_ctx *ctx, void *ptr, size_t size)
{
    return realloc(ptr, size);
}

static void vr_ctx_free(const vsched_ctx *ctx, void *ptr)
{
    free(ptr);
}

static const vsched_ctx vr_host_ctx = {
    .size = sizeof(vsched_ctx),
    .is_cancelled = vr_ctx_is_cancelled,
    .diag = vr_ctx_diag,
    .alloc = vr_ctx_alloc,
    .realloc = vr_ctx_realloc,
    .free = vr_ctx_free,
    .host = NULL,
};

/* Contract: a process-wide context whose alloc/realloc/free are malloc,
 * realloc and free, is_cancelled always 0, and diag writes
 * "plugin: FILE:LINE: MESSAGE" to stderr. Static storage; thread-safe. */
const vsched_ctx *vr_plugin_host_ctx(void)
{
    return &vr_host_ctx;
}

/* ------------------------------------------------------------------------
 * Initialisation.
 */

/* Contract: see plugin_host.h. Reference-counted: every successful call is
 * paired with one vr_plugin_host_exit(); libltdl is initialised by the
 * first. The preloaded table must stay valid until the last exit (it is
 * the program's static lt_preloaded_symbols). Takes vr_plugin_lock. */
int vr_plugin_host_init(const void *preloaded)
{
    const lt_dlsymlist *table = preloaded;
    int rc = 0;
    pthread_mutex_lock(&vr_plugin_lock);
    if (vr_host_refs == 0) {
        if (table != NULL)
            lt_dlpreload_default(table);
        if (lt_dlinit() != 0)
            rc = VSCHED_EERR;
        else
            vr_host_preloaded = table;
    } else if (table != NULL && vr_host_preloaded == NULL) {
        if (lt_dlpreload(table) != 0)
            rc = VSCHED_EERR;
        else
            vr_host_preloaded = table;
    }
    if (rc == 0)
        vr_host_refs++;
    pthread_mutex_unlock(&vr_plugin_lock);
    return rc;
}

/* Contract: undoes one vr_plugin_host_init(); the last call releases
 * libltdl (every plugin must be closed by then). Takes vr_plugin_lock. */
void vr_plugin_host_exit(void)
{
    pthread_mutex_lock(&vr_plugin_lock);
    if (vr_host_refs > 0 && --vr_host_refs == 0) {
        lt_dlexit();
        vr_host_preloaded = NULL;
    }
    pthread_mutex_unlock(&vr_plugin_lock);
}

/* The preloaded table given to vr_plugin_host_init, or NULL. */
static const lt_dlsymlist *vr_preloaded(void)
{
    pthread_mutex_lock(&vr_plugin_lock);
    const lt_dlsymlist *t = vr_host_preloaded;
    pthread_mutex_unlock(&vr_plugin_lock);
    return t;
}

/* ------------------------------------------------------------------------
 * Small helpers.
 */

static const char *vr_role_name(unsigned role)
{
    switch (role) {
    case VSCHED_ROLE_LOADER:
        return "loader";
    case VSCHED_ROLE_EXECUTOR:
        return "executor";
    default:
        return "unknown";
    }
}

/* "loader", "executor", "loader, executor" or "none". Static storage. */
static const char *vr_roles_text(unsigned roles)
{
    unsigned both = VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR;
    if ((roles & both) == both)
        return "loader, executor";
    if (roles & VSCHED_ROLE_LOADER)
        return "loader";
    if (roles & VSCHED_ROLE_EXECUTOR)
        return "executor";
    return "none";
}

static int vr_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Module name of a file or originator name: the base name without a
 * ".la", ".so" or ".a" extension. Heap string. */
static char *vr_module_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *name = vr_xstrdup(slash != NULL ? slash + 1 : path);
    static const char *const exts[] = { ".la", ".so", ".a" };
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        if (vr_has_suffix(name, exts[i]) && strlen(name) > strlen(exts[i])) {
            name[strlen(name) - strlen(exts[i])] = '\0';
            break;
        }
    }
    return name;
}

/* `name` with every character outside [A-Za-z0-9_] replaced by '_', as
 * libtool spells a module's symbol prefix. Heap string. */
static char *vr_symbol_prefix(const char *name)
{
    char *s = vr_xstrdup(name);
    for (char *c = s; *c != '\0'; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                 (*c >= '0' && *c <= '9') || *c == '_';
        if (!ok)
            *c = '_';
    }
    return s;
}

/* A growable list of heap strings. */
typedef struct vr_strv {
    char **v;
    size_t n, cap;
} vr_strv;

/* Append s (taking ownership) unless an equal string is present; then s is
 * freed. */
static void vr_strv_add_unique(vr_strv *sv, char *s)
{
    for (size_t i = 0; i < sv->n; i++) {
        if (strcmp(sv->v[i], s) == 0) {
            free(s);
            return;
        }
    }
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? 2 * sv->cap : 8;
        sv->v = vr_xrealloc(sv->v, sv->cap * sizeof *sv->v);
    }
    sv->v[sv->n++] = s;
}

static void vr_strv_free(vr_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

/* Split `text` at any character of `seps` and add each non-empty word,
 * made absolute against `base` when base is not NULL. */
static void vr_strv_add_split(vr_strv *sv, const char *text, const char *seps,
                              const char *base)
{
    const char *p = text;
    while (*p != '\0') {
        p += strspn(p, seps);
        size_t n = strcspn(p, seps);
        if (n == 0)
            break;
        char *word = vr_xmalloc(n + 1);
        memcpy(word, p, n);
        word[n] = '\0';
        if (base != NULL) {
            char *abs = vr_path_join(base, word);
            if (abs != NULL) {
                free(word);
                word = abs;
            }
        }
        vr_strv_add_unique(sv, word);
        p += n;
    }
}

/* The directories searched after the built-ins, in order, without
 * duplicates. */
static void vr_search_dirs(vr_strv *dirs, const vr_config *cfg)
{
    if (cfg != NULL) {
        const char *pp = vr_config_get(cfg, "vsched", "plugin_path");
        if (pp != NULL)
            vr_strv_add_split(dirs, pp, " \t:", vr_config_dir(cfg));
    }
    const char *env = getenv("VSCHED_PLUGIN_PATH");
    if (env != NULL)
        vr_strv_add_split(dirs, env, ":", NULL);
    vr_strv_add_unique(dirs, vr_xstrdup(VSCHED_PLUGINSDIR));
}

/* ------------------------------------------------------------------------
 * Descriptor checks.
 */

/* Check the required operations of `role` in ops table `ops`. Returns the
 * missing operation's name, "" when the table is missing or empty, or NULL
 * when everything required is there. */
static const char *vr_missing_loader_op(const vsched_loader_ops *ops)
{
    if (ops == NULL || ops->size == 0)
        return "";
    if (!VR_OPS_COVERS(ops, vsched_loader_ops, load) || ops->load == NULL)
        return "load";
    if (!VR_OPS_COVERS(ops, vsched_loader_ops, exists) || ops->exists == NULL)
        return "exists";
    if (!VR_OPS_COVERS(ops, vsched_loader_ops, classify) ||
        ops->classify == NULL)
        return "classify";
    if (!VR_OPS_COVERS(ops, vsched_loader_ops, realpath) ||
        ops->realpath == NULL)
        return "realpath";
    return NULL;
}

static const char *vr_missing_executor_op(const vsched_executor_ops *ops)
{
    if (ops == NULL || ops->size == 0)
        return "";
    if (!VR_OPS_COVERS(ops, vsched_executor_ops, source) ||
        ops->source == NULL)
        return "source";
    if (!VR_OPS_COVERS(ops, vsched_executor_ops, extract_deps) ||
        ops->extract_deps == NULL)
        return "extract_deps";
    if (!VR_OPS_COVERS(ops, vsched_executor_ops, analysis) ||
        ops->analysis == NULL)
        return "analysis";
    if (!VR_OPS_COVERS(ops, vsched_executor_ops, artifact) ||
        ops->artifact == NULL)
        return "artifact";
    if (!VR_OPS_COVERS(ops, vsched_executor_ops, snapshot_free) ||
        ops->snapshot_free == NULL)
        return "snapshot_free";
    return NULL;
}

/* Error for a declared role whose operations are incomplete, or 0. */
static int vr_check_role(const char *label, unsigned role, const char *missing,
                         char **err)
{
    if (missing == NULL)
        return 0;
    const char *r = vr_role_name(role);
    if (missing[0] == '\0')
        *err = vr_strfmt("plugin '%s' declares role %s but has no %s "
                         "operations table (or its size is 0)",
                         label, r, r);
    else
        *err = vr_strfmt("plugin '%s' declares role %s but its operation "
                         "'%s' is missing",
                         label, r, missing);
    return VSCHED_EABI;
}

/* The schema must be readable: a table when keys are declared, each key
 * named. */
static int vr_check_schema(const char *label, const vsched_plugin *d,
                           char **err)
{
    if (d->n_schema > 0 && d->schema == NULL) {
        *err = vr_strfmt("plugin '%s' declares %zu configuration keys but "
                         "no schema table",
                         label, d->n_schema);
        return VSCHED_EABI;
    }
    for (size_t i = 0; i < d->n_schema; i++) {
        if (d->schema[i].name == NULL || d->schema[i].name[0] == '\0') {
            *err = vr_strfmt("plugin '%s' has an unnamed configuration key "
                             "(schema entry %zu)",
                             label, i);
            return VSCHED_EABI;
        }
    }
    return 0;
}

/* Every check of a descriptor, in the order of <vsched/plugin.h>. `where`
 * names the module for "not a plugin" messages. Returns 0 or VSCHED_EABI
 * with *err set. */
static int vr_check_descriptor(const char *label, const char *where,
                               const vsched_plugin *d, char **err)
{
    if (d == NULL) {
        *err = vr_strfmt("%s is not a vsched plugin: vsched_plugin_entry() "
                         "returned NULL",
                         where);
        return VSCHED_EABI;
    }
    /* Only abi_major and abi_minor are trusted before the major matches. */
    if (d->abi_major != VSCHED_PLUGIN_ABI_MAJOR) {
        *err = vr_strfmt("plugin '%s' was built for plugin ABI %u.%u; this "
                         "vsched-run speaks ABI %d.%d (major versions must "
                         "match): rebuild the plugin against vsched %d.x "
                         "headers",
                         label, (unsigned)d->abi_major,
                         (unsigned)d->abi_minor, VSCHED_PLUGIN_ABI_MAJOR,
                         VSCHED_PLUGIN_ABI_MINOR, VSCHED_PLUGIN_ABI_MAJOR);
        return VSCHED_EABI;
    }
    if (d->abi_minor > VSCHED_PLUGIN_ABI_MINOR) {
        *err = vr_strfmt("plugin '%s' needs plugin ABI %u.%u, newer than "
                         "this vsched-run's %d.%d: upgrade vsched-run",
                         label, (unsigned)d->abi_major,
                         (unsigned)d->abi_minor, VSCHED_PLUGIN_ABI_MAJOR,
                         VSCHED_PLUGIN_ABI_MINOR);
        return VSCHED_EABI;
    }
    if (d->size < VR_PLUGIN_SIZE_1_0) {
        *err = vr_strfmt("plugin '%s' has a %zu-byte descriptor, smaller "
                         "than the %zu bytes of ABI %d.0: rebuild the plugin "
                         "against vsched %d.x headers",
                         label, d->size, (size_t)VR_PLUGIN_SIZE_1_0,
                         VSCHED_PLUGIN_ABI_MAJOR, VSCHED_PLUGIN_ABI_MAJOR);
        return VSCHED_EABI;
    }
    if (d->name == NULL || d->name[0] == '\0') {
        *err = vr_strfmt("plugin '%s' has no name in its descriptor", label);
        return VSCHED_EABI;
    }
    if ((d->roles & (VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR)) == 0) {
        *err = vr_strfmt("plugin '%s' declares no role (neither loader nor "
                         "executor)",
                         label);
        return VSCHED_EABI;
    }
    if (d->create == NULL || d->destroy == NULL) {
        *err = vr_strfmt("plugin '%s' is missing its operation '%s'", label,
                         d->create == NULL ? "create" : "destroy");
        return VSCHED_EABI;
    }
    int rc = 0;
    if (d->roles & VSCHED_ROLE_LOADER)
        rc = vr_check_role(label, VSCHED_ROLE_LOADER,
                           vr_missing_loader_op(d->loader), err);
    if (rc == 0 && (d->roles & VSCHED_ROLE_EXECUTOR))
        rc = vr_check_role(label, VSCHED_ROLE_EXECUTOR,
                           vr_missing_executor_op(d->executor), err);
    if (rc == 0)
        rc = vr_check_schema(label, d, err);
    return rc;
}

/* Call the entry point (outside the lock: it is plugin code), check the
 * descriptor, and make the vr_plugin. Takes ownership of `handle`,
 * `label` and `origin` in every case (closing the handle on failure). */
static int vr_plugin_make(vr_plugin **out, lt_dlhandle handle,
                          vsched_plugin_entry_fn entry, char *label,
                          char *origin, char **err)
{
    const vsched_plugin *d = entry();
    char *where = handle != NULL ? vr_xstrdup(origin)
                                 : vr_strfmt("built-in module '%s'", label);
    int rc = vr_check_descriptor(label, where, d, err);
    free(where);
    if (rc != 0) {
        if (handle != NULL) {
            pthread_mutex_lock(&vr_plugin_lock);
            lt_dlclose(handle);
            pthread_mutex_unlock(&vr_plugin_lock);
        }
        free(label);
        free(origin);
        return rc;
    }
    vr_plugin *p = vr_xcalloc(1, sizeof *p);
    p->handle = handle;
    p->desc = d;
    p->label = label;
    p->origin = origin;
    *out = p;
    return 0;
}

/* ------------------------------------------------------------------------
 * Opening.
 */

/* Look `name` up among the preloaded modules. Returns 0 when no module
 * has that name; 1 with *entry set to its entry point (the
 * NAME_LTX_vsched_plugin_entry symbol, or a plain vsched_plugin_entry);
 * -1 when the module is there but lists no entry symbol. */
static int vr_builtin_entry(const char *name, vsched_plugin_entry_fn *entry)
{
    const lt_dlsymlist *s = vr_preloaded();
    if (s == NULL)
        return 0;
    char *prefix = vr_symbol_prefix(name);
    char *want = vr_strfmt("%s_LTX_%s", prefix, VSCHED_PLUGIN_ENTRY_SYMBOL);
    free(prefix);
    int found = 0, in_module = 0;
    for (; s->name != NULL && found <= 0; s++) {
        if (s->address == NULL) { /* an originator starts a module */
            char *mod = vr_module_name(s->name);
            in_module = strcmp(s->name, "@PROGRAM@") != 0 &&
                        strcmp(mod, name) == 0;
            if (in_module)
                found = -1;
            free(mod);
        } else if (in_module &&
                   (strcmp(s->name, want) == 0 ||
                    strcmp(s->name, VSCHED_PLUGIN_ENTRY_SYMBOL) == 0)) {
            /* libtool stores every preloaded symbol as a void *. */
            *entry = (vsched_plugin_entry_fn)s->address;
            found = 1;
        }
    }
    free(want);
    return found;
}

/* Whether the lt_dlopenext of `base` finds a file: sets *file to the path
 * it will load (NAME.la before NAME.so, or NAME as is when it ends in
 * .la/.so) and returns 1, or returns 0. */
static int vr_module_file(const char *base, char **file)
{
    if (vr_has_suffix(base, ".la") || vr_has_suffix(base, ".so")) {
        if (access(base, F_OK) != 0)
            return 0;
        *file = vr_xstrdup(base);
        return 1;
    }
    static const char *const exts[] = { ".la", ".so" };
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        char *f = vr_strfmt("%s%s", base, exts[i]);
        if (access(f, F_OK) == 0) {
            *file = f;
            return 1;
        }
        free(f);
    }
    return 0;
}

/* Open the module file(s) `base` (a path; see vr_module_file). Returns 1
 * when no such file exists, else 0 or a negative status from loading and
 * checking it. */
static int vr_open_file(vr_plugin **out, const char *base, char **err)
{
    char *file = NULL;
    if (!vr_module_file(base, &file))
        return 1;
    char *label = vr_module_name(base);

    pthread_mutex_lock(&vr_plugin_lock);
    lt_dlhandle h = lt_dlopenext(base);
    if (h == NULL) {
        const char *why = lt_dlerror();
        *err = vr_strfmt("cannot load plugin '%s' from %s: %s", label, file,
                         why != NULL ? why : "unknown libltdl error");
        pthread_mutex_unlock(&vr_plugin_lock);
        free(file);
        free(label);
        return VSCHED_EERR;
    }
    vsched_plugin_entry_fn entry =
        (vsched_plugin_entry_fn)lt_dlsym(h, VSCHED_PLUGIN_ENTRY_SYMBOL);
    const lt_dlinfo *info = lt_dlgetinfo(h);
    const char *loaded = info != NULL && info->filename ? info->filename
                                                        : file;
    char *origin = realpath(loaded, NULL);
    if (origin == NULL)
        origin = vr_xstrdup(loaded);
    if (entry == NULL) {
        (void)lt_dlerror(); /* consume "symbol not found" */
        lt_dlclose(h);
    }
    pthread_mutex_unlock(&vr_plugin_lock);
    free(file);

    if (entry == NULL) {
        *err = vr_strfmt("%s is not a vsched plugin: no symbol %s", origin,
                         VSCHED_PLUGIN_ENTRY_SYMBOL);
        free(origin);
        free(label);
        return VSCHED_EABI;
    }
    return vr_plugin_make(out, h, entry, label, origin, err);
}

/* The "not found" message listing every place searched. */
static char *vr_not_found_message(const char *name, const vr_strv *dirs)
{
    size_t len = 0;
    for (size_t i = 0; i < dirs->n; i++)
        len += strlen(dirs->v[i]) + 2;
    char *list = vr_xmalloc(len + sizeof "built-in");
    strcpy(list, "built-in");
    for (size_t i = 0; i < dirs->n; i++) {
        strcat(list, ", ");
        strcat(list, dirs->v[i]);
    }
    char *msg = vr_strfmt("plugin '%s' not found (searched: %s); set [vsched] "
                          "plugin_path or VSCHED_PLUGIN_PATH",
                          name, list);
    free(list);
    return msg;
}

/* Contract: see plugin_host.h. On success *out is the open, checked
 * plugin (close with vr_plugin_close). Errors, each with *err set (caller
 * frees): VSCHED_ENOENT not found anywhere (the message lists where it
 * looked); VSCHED_EERR the file exists but libltdl cannot load it;
 * VSCHED_EABI not a plugin, ABI mismatch, descriptor too small, a required
 * field or operation missing; VSCHED_EINVAL empty name or host not
 * initialised. Takes vr_plugin_lock around libltdl calls. */
int vr_plugin_open(vr_plugin **out, const char *name, const vr_config *cfg,
                   char **err)
{
    *out = NULL;
    *err = NULL;
    if (name == NULL || name[0] == '\0') {
        *err = vr_xstrdup("plugin name is empty");
        return VSCHED_EINVAL;
    }
    pthread_mutex_lock(&vr_plugin_lock);
    unsigned refs = vr_host_refs;
    pthread_mutex_unlock(&vr_plugin_lock);
    if (refs == 0) {
        *err = vr_strfmt("cannot open plugin '%s': the plugin host is not "
                         "initialised (vr_plugin_host_init)",
                         name);
        return VSCHED_EINVAL;
    }

    if (strchr(name, '/') != NULL) {
        int rc = vr_open_file(out, name, err);
        if (rc != 1)
            return rc;
        if (vr_has_suffix(name, ".la") || vr_has_suffix(name, ".so"))
            *err = vr_strfmt("plugin file '%s' not found", name);
        else
            *err = vr_strfmt("plugin file '%s' not found (tried %s.la and "
                             "%s.so)",
                             name, name, name);
        return VSCHED_ENOENT;
    }

    vsched_plugin_entry_fn entry = NULL;
    int builtin = vr_builtin_entry(name, &entry);
    if (builtin > 0)
        return vr_plugin_make(out, NULL, entry, vr_xstrdup(name),
                              vr_xstrdup("built-in"), err);
    if (builtin < 0) {
        *err = vr_strfmt("built-in module '%s' is not a vsched plugin: no "
                         "symbol %s in the preloaded symbols (link it with "
                         "VSCHED_PLUGIN_DEFINE(%s))",
                         name, VSCHED_PLUGIN_ENTRY_SYMBOL, name);
        return VSCHED_EABI;
    }

    vr_strv dirs = { 0 };
    vr_search_dirs(&dirs, cfg);
    int rc = 1;
    for (size_t i = 0; i < dirs.n && rc == 1; i++) {
        char *base = vr_strfmt("%s/%s", dirs.v[i], name);
        rc = vr_open_file(out, base, err);
        free(base);
    }
    if (rc == 1) {
        *err = vr_not_found_message(name, &dirs);
        rc = VSCHED_ENOENT;
    }
    vr_strv_free(&dirs);
    return rc;
}

/* Contract: the checked descriptor; valid until vr_plugin_close. */
const vsched_plugin *vr_plugin_descriptor(const vr_plugin *p)
{
    return p->desc;
}

/* Contract: "built-in", or the absolute path of the loaded shared object;
 * owned by p. */
const char *vr_plugin_origin(const vr_plugin *p)
{
    return p->origin;
}

/* ------------------------------------------------------------------------
 * Instances and their configuration.
 */

static void vr_instance_put(vr_instance *w, const char *section,
                            const char *key, char *value)
{
    if (w->n_kv == w->cap_kv) {
        w->cap_kv = w->cap_kv ? 2 * w->cap_kv : 16;
        w->kv = vr_xrealloc(w->kv, w->cap_kv * sizeof *w->kv);
    }
    vr_kv *kv = &w->kv[w->n_kv++];
    kv->section = vr_xstrdup(section);
    kv->key = vr_xstrdup(key);
    kv->value = value;
}

static const vr_kv *vr_instance_find(const vr_instance *w,
                                     const char *section, const char *key)
{
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].section, section) == 0 &&
            strcmp(w->kv[i].key, key) == 0)
            return &w->kv[i];
    return NULL;
}

static void vr_instance_free(vr_instance *w)
{
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].section);
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    free(w->section);
    free(w->config_dir);
    free(w);
}

/* vsched_config.get: every value was resolved when the instance was made. */
static const char *vr_config_cb_get(const vsched_config *cfg,
                                    const char *section, const char *key)
{
    const vr_instance *w = cfg->host;
    if (section == NULL || key == NULL)
        return NULL;
    const vr_kv *kv = vr_instance_find(w, section, key);
    return kv != NULL ? kv->value : NULL;
}

/* A heap copy of `value`, made absolute against `dir` when the key is a
 * PATH (an empty value stays empty: "unset"). */
static char *vr_resolve(const vsched_key *k, const char *value,
                        const char *dir)
{
    if (value == NULL)
        return NULL;
    if (k != NULL && k->type == VSCHED_KEY_PATH && value[0] != '\0') {
        char *abs = vr_path_join(dir, value);
        if (abs != NULL)
            return abs;
    }
    return vr_xstrdup(value);
}

static const vsched_key *vr_schema_key(const vsched_plugin *d,
                                       const char *key)
{
    for (size_t i = 0; i < d->n_schema; i++)
        if (strcmp(d->schema[i].name, key) == 0)
            return &d->schema[i];
    return NULL;
}

static int vr_is_profile_section(const char *section)
{
    return strncmp(section, "profile.", strlen("profile.")) == 0;
}

/* Snapshot cfg for one instance: the plugin's own section with schema
 * defaults filled in, PATH keys of it and of [profile.*] made absolute,
 * then every other value as configured. */
static vr_instance *vr_instance_new(const vsched_plugin *d,
                                    const vr_config *cfg, const char *section)
{
    vr_instance *w = vr_xcalloc(1, sizeof *w);
    const char *dir = vr_config_dir(cfg);
    w->section = vr_xstrdup(section);
    w->config_dir = vr_xstrdup(dir != NULL ? dir : "/");

    for (size_t i = 0; i < d->n_schema; i++) {
        const vsched_key *k = &d->schema[i];
        const char *v = vr_config_get(cfg, section, k->name);
        vr_instance_put(w, section, k->name,
                        vr_resolve(k, v != NULL ? v : k->dflt, w->config_dir));
    }
    size_t n = 0;
    const vr_config_entry *e = vr_config_entries(cfg, &n);
    for (size_t i = 0; i < n; i++) {
        if (vr_instance_find(w, e[i].section, e[i].key) != NULL)
            continue;
        const vsched_key *k = vr_is_profile_section(e[i].section)
                                  ? vr_schema_key(d, e[i].key)
                                  : NULL;
        const char *v = vr_config_get(cfg, e[i].section, e[i].key);
        vr_instance_put(w, e[i].section, e[i].key,
                        vr_resolve(k, v != NULL ? v : e[i].value,
                                   w->config_dir));
    }

    w->cfg.size = sizeof(vsched_config);
    w->cfg.section = w->section;
    w->cfg.get = vr_config_cb_get;
    w->cfg.config_dir = w->config_dir;
    w->cfg.host = w;
    return w;
}

/* Schema validation of the plugin's section, and for an executor of every
 * [profile.*] section (per-profile keys only). */
static int vr_validate(const vr_plugin *p, unsigned role, const vr_config *cfg,
                       const char *section, char **err)
{
    const vsched_plugin *d = p->desc;
    static const char *const ignore[] = { "plugin", NULL };
    int rc = vr_schema_validate(cfg, section, d->schema, d->n_schema, ignore,
                                0, err);
    if (rc != 0 || role != VSCHED_ROLE_EXECUTOR)
        return rc;
    size_t n = 0;
    const char *const *sections = vr_config_sections(cfg, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (vr_is_profile_section(sections[i]))
            rc = vr_schema_validate(cfg, sections[i], d->schema, d->n_schema,
                                    NULL, 1, err);
    return rc;
}

/* Contract: see plugin_host.h. cfg must not be NULL; the instance does not
 * borrow it (the values the plugin reads are copied and live until
 * vr_plugin_destroy_instance). Errors, *err set (caller frees):
 * VSCHED_EINVAL role not provided ("plugin 'fs' does not provide role
 * executor"); VSCHED_ECONFIG schema ("FILE:LINE: ..."), create() not
 * called; VSCHED_EERR create() failed ("plugin 'cc': cannot create
 * executor: <plugin message>"). Calls create() on the calling thread. */
int vr_plugin_instantiate(vr_plugin *p, unsigned role, const vr_config *cfg,
                          const char *section, void **inst, char **err)
{
    *inst = NULL;
    *err = NULL;
    const vsched_plugin *d = p->desc;
    if ((role != VSCHED_ROLE_LOADER && role != VSCHED_ROLE_EXECUTOR) ||
        (d->roles & role) == 0) {
        *err = vr_strfmt("plugin '%s' does not provide role %s", p->label,
                         vr_role_name(role));
        return VSCHED_EINVAL;
    }
    int rc = vr_validate(p, role, cfg, section, err);
    if (rc != 0)
        return rc;

    vr_instance *w = vr_instance_new(d, cfg, section);
    char *errmsg = NULL;
    void *made = NULL;
    const vsched_ctx *ctx = vr_plugin_host_ctx();
    rc = d->create(ctx, &w->cfg, &made, &errmsg);
    if (rc != 0) {
        *err = vr_strfmt("plugin '%s': cannot create %s: %s", p->label,
                         vr_role_name(role),
                         errmsg != NULL && errmsg[0] != '\0'
                             ? errmsg
                             : vsched_strerror(rc < 0 ? rc : VSCHED_EERR));
        ctx->free(ctx, errmsg);
        vr_instance_free(w);
        return VSCHED_EERR;
    }
    ctx->free(ctx, errmsg); /* a message with success is ignored */
    w->inst = made;
    w->next = p->instances;
    p->instances = w;
    *inst = made;
    return 0;
}

/* Contract: calls the plugin's destroy() on an instance made by
 * vr_plugin_instantiate and frees the configuration it was given. An
 * instance not (or no longer) known to p is ignored, so a double destroy
 * is harmless. */
void vr_plugin_destroy_instance(vr_plugin *p, void *inst)
{
    for (vr_instance **wp = &p->instances; *wp != NULL; wp = &(*wp)->next) {
        vr_instance *w = *wp;
        if (w->inst == inst) {
            *wp = w->next;
            p->desc->destroy(inst);
            vr_instance_free(w);
            return;
        }
    }
}

/* Contract: destroys any instance still alive (nothing leaks), then closes
 * the module and frees p. NULL is accepted. Takes vr_plugin_lock. */
void vr_plugin_close(vr_plugin *p)
{
    if (p == NULL)
        return;
    while (p->instances != NULL)
        vr_plugin_destroy_instance(p, p->instances->inst);
    if (p->handle != NULL) {
        pthread_mutex_lock(&vr_plugin_lock);
        lt_dlclose(p->handle);
        pthread_mutex_unlock(&vr_plugin_lock);
    }
    free(p->label);
    free(p->origin);
    free(p);
}

/* ------------------------------------------------------------------------
 * Listing and describing.
 */

static void vr_list_line(FILE *out, const vr_plugin *p)
{
    const vsched_plugin *d = p->desc;
    fprintf(out, "%-14s %-10s %-17s %s  %s\n", d->name,
            d->version != NULL ? d->version : "-", vr_roles_text(d->roles),
            p->origin, d->description != NULL ? d->description : "");
}

/* Module names (".la"/".so" files) in `dir`, sorted, without duplicates. */
static void vr_dir_modules(vr_strv *mods, const char *dir)
{
    DIR *dp = opendir(dir);
    if (dp == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (vr_has_suffix(de->d_name, ".la") ||
            vr_has_suffix(de->d_name, ".so"))
            vr_strv_add_unique(mods, vr_module_name(de->d_name));
    }
    closedir(dp);
    for (size_t i = 1; i < mods->n; i++) /* insertion sort: few entries */
        for (size_t j = i; j > 0 && strcmp(mods->v[j - 1], mods->v[j]) > 0;
             j--) {
            char *t = mods->v[j];
            mods->v[j] = mods->v[j - 1];
            mods->v[j - 1] = t;
        }
}

/* Contract: see plugin_host.h. A name found twice is listed where the
 * search finds it first (later ones are shadowed). A module that cannot be
 * used is listed as "NAME  -  -  FILE  unusable: REASON". Returns 0, or
 * VSCHED_EIO when writing to `out` failed. */
int vr_plugin_list(FILE *out, const vr_config *cfg)
{
    vr_strv seen = { 0 };
    for (const lt_dlsymlist *s = vr_preloaded(); s != NULL && s->name;
         s++) {
        if (s->address != NULL || strcmp(s->name, "@PROGRAM@") == 0)
            continue;
        char *mod = vr_module_name(s->name);
        vr_plugin *p = NULL;
        char *err = NULL;
        if (vr_plugin_open(&p, mod, NULL, &err) == 0) {
            vr_list_line(out, p);
            vr_plugin_close(p);
        } else {
            fprintf(out, "%-14s %-10s %-17s %s  unusable: %s\n", mod, "-",
                    "-", "built-in", err);
        }
        free(err);
        vr_strv_add_unique(&seen, mod);
    }
    vr_strv dirs = { 0 };
    vr_search_dirs(&dirs, cfg);
    for (size_t i = 0; i < dirs.n; i++) {
        vr_strv mods = { 0 };
        vr_dir_modules(&mods, dirs.v[i]);
        for (size_t j = 0; j < mods.n; j++) {
            size_t before = seen.n;
            vr_strv_add_unique(&seen, vr_xstrdup(mods.v[j]));
            if (seen.n == before)
                continue; /* shadowed */
            char *base = vr_strfmt("%s/%s", dirs.v[i], mods.v[j]);
            vr_plugin *p = NULL;
            char *err = NULL;
            int rc = vr_open_file(&p, base, &err);
            if (rc == 0) {
                vr_list_line(out, p);
                vr_plugin_close(p);
            } else if (rc < 0) {
                char *file = NULL;
                if (!vr_module_file(base, &file))
                    file = vr_xstrdup(base);
                fprintf(out, "%-14s %-10s %-17s %s  unusable: %s\n",
                        mods.v[j], "-", "-", file, err);
                free(file);
            }
            free(err);
            free(base);
        }
        vr_strv_free(&mods);
    }
    vr_strv_free(&dirs);
    vr_strv_free(&seen);
    return ferror(out) ? VSCHED_EIO : 0;
}

static const char *vr_type_name(vsched_key_type t)
{
    switch (t) {
    case VSCHED_KEY_STRING:
        return "string";
    case VSCHED_KEY_INT:
        return "int";
    case VSCHED_KEY_BOOL:
        return "bool";
    case VSCHED_KEY_PATH:
        return "path";
    case VSCHED_KEY_LIST:
        return "list";
    }
    return "?";
}

/* One schema key: "  NAME  TYPE  default: V  [range: A..B]  [required]
 * [per-profile]  -- HELP". */
static void vr_describe_key(FILE *out, const vsched_key *k)
{
    fprintf(out, "  %-16s %-6s", k->name, vr_type_name(k->type));
    if (k->dflt == NULL)
        fputs("  default: none", out);
    else if (k->dflt[0] == '\0')
        fputs("  default: \"\"", out);
    else
        fprintf(out, "  default: %s", k->dflt);
    if (k->type == VSCHED_KEY_INT)
        fprintf(out, "  range: %lld..%lld", k->min, k->max);
    if (k->flags & VSCHED_KEY_REQUIRED)
        fputs("  required", out);
    if (k->flags & VSCHED_KEY_PER_PROFILE)
        fputs("  per-profile", out);
    fprintf(out, "  -- %s\n", k->help != NULL ? k->help : "");
}

/* Contract: see plugin_host.h. Opens `name` as vr_plugin_open does and
 * prints: name, version, origin, description, roles, thread-safety, then
 * one line per key (name, type, default, range for INT, required /
 * per-profile, help). Returns 0, an error of vr_plugin_open (*err set), or
 * VSCHED_EIO when writing failed. */
int vr_plugin_describe(FILE *out, const char *name, const vr_config *cfg,
                       char **err)
{
    vr_plugin *p = NULL;
    int rc = vr_plugin_open(&p, name, cfg, err);
    if (rc != 0)
        return rc;
    const vsched_plugin *d = p->desc;
    fprintf(out, "name:          %s\n", d->name);
    fprintf(out, "version:       %s\n", d->version != NULL ? d->version : "-");
    fprintf(out, "origin:        %s\n", p->origin);
    fprintf(out, "description:   %s\n",
            d->description != NULL ? d->description : "");
    fprintf(out, "roles:         %s\n", vr_roles_text(d->roles));
    fprintf(out, "thread-safety: %s\n",
            (d->flags & VSCHED_PLUGIN_THREAD_SAFE)
                ? "thread-safe (an instance may be called from several "
                  "threads at once)"
                : "not thread-safe (the host serialises calls into an "
                  "instance)");
    fprintf(out, "keys:%s\n", d->n_schema == 0 ? " none" : "");
    for (size_t i = 0; i < d->n_schema; i++)
        vr_describe_key(out, &d->schema[i]);
    vr_plugin_close(p);
    if (ferror(out)) {
        *err = vr_strfmt("cannot write the description of plugin '%s'", name);
        return VSCHED_EIO;
    }
    return 0;
}
