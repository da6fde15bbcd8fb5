/*
 * operands -- the command line's FILES, checked once, before anything
 * runs (before the state directory's lock is waited for), as make checks
 * its goals: each operand is a target's name, kept as given, or a source
 * the loader knows, taken to its canonical name (the loader's realpath:
 * `./a.c`, `sub/../a.c`, the absolute path and a symbolic link to a.c
 * are all a.c). What is wrong with one is a usage error, exit status 2:
 * an empty operand, a name outside the loader root, a file that does not
 * exist (with the target it is close to, if one is), a directory.
 *
 * Main thread only; calls the loader's realpath once per FILE operand.
 */
#ifndef VSCHED_HOST_OPERANDS_H
#define VSCHED_HOST_OPERANDS_H

#include <stddef.h>

#include "build/build.h"

/* b->cli->files resolved into *files (n = b->cli->n_files, the same
 * order; each string and the array owned by the caller, freed with
 * vr_build_inputs_free), and (*is_file)[i] set when operand i is a file
 * (its spelling is no target's name; the array the caller's, free()).
 * Returns 0, or VSCHED_ECONFIG with *err (caller frees) saying which
 * operand is wrong, why and what to do; *files and *is_file are then
 * NULL. Does not print. */
int vr_operands_resolve(const vr_build *b, char ***files,
                        unsigned char **is_file, char **err);

/* The loader's realpath of `name` (b->loader, on the calling thread, as
 * operands are resolved): 0 with *canon (heap), else its status
 * (VSCHED_ENOENT, VSCHED_EESCAPE outside its root, ...). *why is the
 * loader's first diagnostic (heap) or NULL, either way. */
int vr_loader_realpath(const vr_build *b, const char *name, char **canon,
                       char **why);

#endif
