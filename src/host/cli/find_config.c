/*
 * find_config -- -C, --config FILE, --config -, ./vsched.ini; see
 * find_config.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "cli/find_config.h"
#include "common/util.h"

/* Contract: see find_config.h. */
int vr_change_dirs(const vr_cli *cli)
{
    for (size_t i = 0; i < cli->n_dirs; i++) {
        if (chdir(cli->dirs[i]) != 0) {
            fprintf(stderr,
                    "vsched-run: -C %s: cannot change to that "
                    "directory: %s\n",
                    cli->dirs[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The whole of standard input (heap, NUL-terminated), or NULL with *err
 * set. A NUL byte in it is an error: INI text has none. */
static char *read_stdin(char **err)
{
    size_t n = 0, cap = 4096;
    char *buf = vr_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap)
            buf = vr_xrealloc(buf, cap *= 2);
        size_t r = fread(buf + n, 1, cap - n - 1, stdin);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(stdin)) {
        *err = vr_strfmt("<stdin>: cannot read the configuration from "
                         "standard input: %s",
                         strerror(errno));
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        *err = vr_strfmt("<stdin>: the configuration holds a NUL byte; "
                         "--config - reads INI text");
        free(buf);
        return NULL;
    }
    return buf;
}

/* Contract: see find_config.h. */
int vr_config_find(const vr_cli *cli, vr_config **cfg, char **err)
{
    *cfg = NULL;
    if (cli->config != NULL && strcmp(cli->config, "-") == 0) {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL) {
            *err = vr_strfmt("<stdin>: cannot name the current directory "
                             "for its relative paths: %s",
                             strerror(errno));
            return VSCHED_ECONFIG;
        }
        char *text = read_stdin(err);
        if (text == NULL)
            return VSCHED_ECONFIG;
        int rc = vr_config_load_string(cfg, text, "<stdin>", cwd, err);
        free(text);
        return rc;
    }
    if (cli->config != NULL)
        return vr_config_load(cfg, cli->config, err);
    if (access(VR_CONFIG_DEFAULT, F_OK) != 0) {
        char cwd[PATH_MAX];
        const char *here = getcwd(cwd, sizeof cwd) != NULL ? cwd : ".";
        *err = vr_strfmt(
            "no --config FILE given and no %s in %s: write one there (see "
            "vsched.ini(5); the example configuration installed with "
            "vsched is a start), name one with --config FILE, or run in "
            "its directory with -C DIR",
            VR_CONFIG_DEFAULT, here);
        return VSCHED_ECONFIG;
    }
    return vr_config_load(cfg, VR_CONFIG_DEFAULT, err);
}
