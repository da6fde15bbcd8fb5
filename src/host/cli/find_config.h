/*
 * find_config -- where vsched-run's configuration comes from: -C DIR
 * first (as make and ninja), then --config FILE, --config - (standard
 * input), or ./vsched.ini when no --config is given.
 *
 * Main thread only, before any other thread exists (chdir is process
 * wide).
 */
#ifndef VSCHED_HOST_FIND_CONFIG_H
#define VSCHED_HOST_FIND_CONFIG_H

#include "cli/cli.h"
#include "config/config.h"

/* The file looked for when no --config is given. */
#define VR_CONFIG_DEFAULT "vsched.ini"

/* Change to each -C DIR in turn (each relative to the one before).
 * Returns 0, or -1 after saying on stderr which directory could not be
 * entered and why. */
int vr_change_dirs(const vr_cli *cli);

/* Load the configuration the command line names: --config FILE, "-" (the
 * INI text from standard input, named "<stdin>" in messages, relative
 * paths against the current directory), or VR_CONFIG_DEFAULT in the
 * current directory. Returns 0 with *cfg set, or VSCHED_ECONFIG with *err
 * (caller frees) saying what was looked for, where, and how to start. */
int vr_config_find(const vr_cli *cli, vr_config **cfg, char **err);

#endif
