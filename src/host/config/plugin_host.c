/*
 * plugin_host.c -- finding, loading and checking plugins: libltdl, its
 * lock, the search path, open / check / close. Instances live in
 * plugin_instance.c, listing and describing in plugin_list.c; what the
 * three share is in plugin_host_int.h.
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
#include "config/plugin_host_int.h"

#include <ltdl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vsched/vsched.h>

#include "common/util.h"

#ifndef VSCHED_PLUGINSDIR
#define VSCHED_PLUGINSDIR "/usr/local/lib/vsched/plugins"
#endif

/* Size of an ABI 1.0 descriptor: every field up to `executor`. Fields a
 * later minor appends lie beyond it and are read only when `size` covers
 * them. */
#define VR_PLUGIN_SIZE_1_0                                                    \
    (offsetof(vsched_plugin, executor) + sizeof(const vsched_executor_ops *))

/*
 * Lock: vr_plugin_lock guards every libltdl call (libltdl keeps its handle
 * list, preload lists and lt_dlerror() string in unprotected globals), and
 * vr_host_refs / vr_host_preloaded. Rank: outermost. It is held only
 * inside this file (plugin_instance.c and plugin_list.c reach libltdl only
 * through the vr__ functions of plugin_host_int.h), around lt_* calls and
 * the two variables; never while calling into a plugin (entry, create,
 * destroy) and never while taking any other lock, so it cannot take part
 * in a lock-order cycle.
 */
static pthread_mutex_t vr_plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned vr_host_refs;                 /* vr_plugin_host_init calls */
static const lt_dlsymlist *vr_host_preloaded; /* built-ins, or NULL */

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

/* Contract: see plugin_host_int.h. Takes vr_plugin_lock. */
const lt_dlsymlist *vr__preloaded(void)
{
    pthread_mutex_lock(&vr_plugin_lock);
    const lt_dlsymlist *t = vr_host_preloaded;
    pthread_mutex_unlock(&vr_plugin_lock);
    return t;
}

/* ------------------------------------------------------------------------
 * Small helpers.
 */

/* Contract: see plugin_host_int.h. */
const char *vr__role_name(unsigned role)
{
    switch (role) {
    case VSCHED_ROLE_LOADER: return "loader";
    case VSCHED_ROLE_EXECUTOR: return "executor";
    default: return "unknown";
    }
}

/* Contract: see plugin_host_int.h. */
int vr__has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Contract: see plugin_host_int.h (heap string, caller frees). */
char *vr__module_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *name = vr_xstrdup(slash != NULL ? slash + 1 : path);
    static const char *const exts[] = {".la", ".so", ".a"};
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        if (vr__has_suffix(name, exts[i]) && strlen(name) > strlen(exts[i])) {
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

/* Contract: see plugin_host_int.h. Takes ownership of s in every case. */
void vr__strv_add_unique(vr__strv *sv, char *s)
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

/* Contract: see plugin_host_int.h. */
void vr__strv_free(vr__strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

/* Split `text` at any character of `seps` and add each non-empty word,
 * made absolute against `base` when base is not NULL. */
static void vr_strv_add_split(vr__strv *sv, const char *text, const char *seps,
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
        vr__strv_add_unique(sv, word);
        p += n;
    }
}

/* Contract: see plugin_host_int.h. The strings added are owned by dirs. */
void vr__search_dirs(vr__strv *dirs, const vr_config *cfg)
{
    if (cfg != NULL) {
        const char *pp = vr_config_get(cfg, "vsched", "plugin_path");
        if (pp != NULL)
            vr_strv_add_split(dirs, pp, " \t:", vr_config_dir(cfg));
    }
    const char *env = getenv("VSCHED_PLUGIN_PATH");
    if (env != NULL)
        vr_strv_add_split(dirs, env, ":", NULL);
    vr__strv_add_unique(dirs, vr_xstrdup(VSCHED_PLUGINSDIR));
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
    const char *r = vr__role_name(role);
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

/* Contract: see plugin_host.h. Reads abi_major and abi_minor first, and
 * `size` only once the major matches. */
int vr_plugin_check_abi(const char *label, const vsched_plugin *d,
                        unsigned host_major, unsigned host_minor, char **err)
{
    if (d->abi_major != host_major) {
        *err = vr_strfmt("plugin '%s' was built for plugin ABI %u.%u; this "
                         "vsched-run speaks ABI %u.%u (major versions must "
                         "match): rebuild the plugin against vsched %u.x "
                         "headers",
                         label, (unsigned)d->abi_major, (unsigned)d->abi_minor,
                         host_major, host_minor, host_major);
        return VSCHED_EABI;
    }
    if (d->abi_minor > host_minor) {
        *err = vr_strfmt("plugin '%s' needs plugin ABI %u.%u, newer than "
                         "this vsched-run's %u.%u: upgrade vsched-run, or "
                         "rebuild the plugin with "
                         "-DVSCHED_PLUGIN_TARGET_MINOR=%u",
                         label, (unsigned)d->abi_major, (unsigned)d->abi_minor,
                         host_major, host_minor, host_minor);
        return VSCHED_EABI;
    }
    if (d->size < VR_PLUGIN_SIZE_1_0) {
        *err = vr_strfmt("plugin '%s' has a %zu-byte descriptor, smaller "
                         "than the %zu bytes of ABI %u.0: rebuild the plugin "
                         "against vsched %u.x headers",
                         label, d->size, (size_t)VR_PLUGIN_SIZE_1_0,
                         host_major, host_major);
        return VSCHED_EABI;
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
    int vrc = vr_plugin_check_abi(label, d, VSCHED_PLUGIN_ABI_MAJOR,
                                  VSCHED_PLUGIN_ABI_MINOR, err);
    if (vrc != 0)
        return vrc;
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
    const lt_dlsymlist *s = vr__preloaded();
    if (s == NULL)
        return 0;
    char *prefix = vr_symbol_prefix(name);
    char *want = vr_strfmt("%s_LTX_%s", prefix, VSCHED_PLUGIN_ENTRY_SYMBOL);
    free(prefix);
    int found = 0, in_module = 0;
    for (; s->name != NULL && found <= 0; s++) {
        if (s->address == NULL) { /* an originator starts a module */
            char *mod = vr__module_name(s->name);
            in_module =
                strcmp(s->name, "@PROGRAM@") != 0 && strcmp(mod, name) == 0;
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

/* Contract: see plugin_host_int.h. Checks with access(2) only; loads
 * nothing. */
int vr__module_file(const char *base, char **file)
{
    if (vr__has_suffix(base, ".la") || vr__has_suffix(base, ".so")) {
        if (access(base, F_OK) != 0)
            return 0;
        *file = vr_xstrdup(base);
        return 1;
    }
    static const char *const exts[] = {".la", ".so"};
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

/* Contract: see plugin_host_int.h. Returns 1 when no such file exists,
 * else 0 or a negative status from loading and checking it. Takes
 * vr_plugin_lock around libltdl calls. */
int vr__open_file(vr_plugin **out, const char *base, char **err)
{
    char *file = NULL;
    if (!vr__module_file(base, &file))
        return 1;
    char *label = vr__module_name(base);

    pthread_mutex_lock(&vr_plugin_lock);
    lt_dlhandle h = lt_dlopenext(base);
    if (h == NULL) {
        const char *why = lt_dlerror();
        char *dl = vr__dl_reason(file);
        *err = vr_strfmt("cannot load plugin '%s' from %s: %s", label, file,
                         dl != NULL    ? dl
                         : why != NULL ? why
                                       : "unknown libltdl error");
        free(dl);
        pthread_mutex_unlock(&vr_plugin_lock);
        free(file);
        free(label);
        return VSCHED_EERR;
    }
    vsched_plugin_entry_fn entry =
        (vsched_plugin_entry_fn)lt_dlsym(h, VSCHED_PLUGIN_ENTRY_SYMBOL);
    const lt_dlinfo *info = lt_dlgetinfo(h);
    const char *loaded =
        info != NULL && info->filename ? info->filename : file;
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
        /* lt_dlsym looked for LABEL_LTX_vsched_plugin_entry, then the
         * plain name (plugin.h's rule); say both. */
        char *prefix = vr_symbol_prefix(label);
        *err = vr_strfmt("%s is not a vsched plugin: no symbol "
                         "%s_LTX_%s or %s (a module renamed after it was "
                         "built keeps its old name's symbol: rebuild it "
                         "with VSCHED_PLUGIN_DEFINE(%s))",
                         origin, prefix, VSCHED_PLUGIN_ENTRY_SYMBOL,
                         VSCHED_PLUGIN_ENTRY_SYMBOL, prefix);
        free(prefix);
        free(origin);
        free(label);
        return VSCHED_EABI;
    }
    return vr_plugin_make(out, h, entry, label, origin, err);
}

/* The "not found" message listing every place searched. */
static char *vr_not_found_message(const char *name, const vr__strv *dirs)
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
        /* A relative file name is relative to the INI's directory, like
         * every other path of the configuration: never to the current
         * directory (a trusted config run from /tmp must not load code
         * found there). */
        char *abs = name[0] != '/' && cfg != NULL
                        ? vr_path_join(vr_config_dir(cfg), name)
                        : vr_xstrdup(name);
        int rc = vr__open_file(out, abs, err);
        if (rc != 1) {
            free(abs);
            return rc;
        }
        char *where = strcmp(abs, name) != 0
                          ? vr_strfmt(" (looked for %s: a relative name is "
                                      "relative to the INI file's directory)",
                                      abs)
                          : vr_xstrdup("");
        if (vr__has_suffix(name, ".la") || vr__has_suffix(name, ".so"))
            *err = vr_strfmt("plugin file '%s' not found%s", name, where);
        else
            *err = vr_strfmt("plugin file '%s' not found (tried %s.la and "
                             "%s.so)",
                             name, abs, abs);
        free(where);
        free(abs);
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

    vr__strv dirs = {0};
    vr__search_dirs(&dirs, cfg);
    int rc = 1;
    for (size_t i = 0; i < dirs.n && rc == 1; i++) {
        char *base = vr_strfmt("%s/%s", dirs.v[i], name);
        rc = vr__open_file(out, base, err);
        free(base);
    }
    if (rc == 1) {
        *err = vr_not_found_message(name, &dirs);
        rc = VSCHED_ENOENT;
    }
    vr__strv_free(&dirs);
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

/* Contract: destroys any instance still alive (nothing leaks), then closes
 * the module and frees p. NULL is accepted. Takes vr_plugin_lock. */
void vr_plugin_close(vr_plugin *p)
{
    if (p == NULL)
        return;
    vr__destroy_instances(p);
    if (p->handle != NULL) {
        pthread_mutex_lock(&vr_plugin_lock);
        lt_dlclose(p->handle);
        pthread_mutex_unlock(&vr_plugin_lock);
    }
    free(p->label);
    free(p->origin);
    free(p);
}
