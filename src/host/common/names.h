/*
 * names -- what a profile or link name may be. Both become a file name
 * component of every executor's outputs (out_dir/PROFILE/..., the linked
 * program out_dir/PROFILE/LINK), so a name is checked once, up front,
 * before anything is compiled: not empty, not "." or "..", no '/', no
 * control character. (Checked by executors too: cc refuses them per
 * file; the host refuses them before the first compile.)
 */
#ifndef VSCHED_HOST_NAMES_H
#define VSCHED_HOST_NAMES_H

/* NULL when `name` is usable as a profile or link name, else what is
 * wrong with it (static text: "is empty", "contains '/'", ...). */
const char *vr_name_problem(const char *name);

#endif
