/*
 * compdb -- --compdb: compile_commands.json (the JSON compilation
 * database clangd and clang tools read) on standard output, for every
 * Artifact command of the build, written without running it.
 *
 * One entry per (input, profile) the executor has a command for, in
 * profile-major input order: "directory", "file", "arguments" (the argv,
 * never a shell string) and "output", as the executor's ABI 1.1
 * command() operation gives them; the loader's classify() supplies each
 * input's kind. Files without a command (headers) have no entry. An
 * executor without command() cannot be described: exit 2 with a message
 * naming it. Nothing is built, no state is read or written.
 *
 * Main thread only; no scheduler runs (the plugins are called directly).
 */
#ifndef VSCHED_HOST_COMPDB_H
#define VSCHED_HOST_COMPDB_H

#include "build/build.h"

/* Returns VR_EXIT_OK, VR_EXIT_FAILED (a file's command could not be
 * made: said on b->err, the others still written) or VR_EXIT_USAGE. */
int vr_compdb_run(const vr_build *b);

#endif
