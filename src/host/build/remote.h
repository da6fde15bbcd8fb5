/*
 * remote -- the resources of compiles sent to other machines.
 *
 * When the executor declares a `launcher` key (cc does) and its value
 * names distcc (a word whose file name is `distcc`: `distcc`, `ccache
 * distcc`, `/usr/bin/distcc`), every Artifact task holds one unit of the
 * job graph's `remote` resource while it runs. Its capacity is
 * [resource.remote] capacity when that section exists, else the sum of
 * the slots of the distcc host list the executor's children use (its
 * `distcc_hosts` key, else DISTCC_HOSTS, ~/.distcc/hosts or
 * /etc/distcc/hosts: plugins/cc/hosts.h). So -j may be set to the
 * remote slots, deeper than this machine's cores, while no more compiles
 * are in flight than the hosts take. What stays local is bounded
 * elsewhere: distcc's preprocessing by its --localslots_cpp (the cc
 * plugin sets it to the online CPUs), links by the `link` resource
 * (capacity 1 unless [resource.link] says otherwise).
 */
#ifndef VSCHED_HOST_REMOTE_H
#define VSCHED_HOST_REMOTE_H

#include <stdio.h>

#include <vsched/vsched.h>

#include "build/build.h"

/* Give Artifact tasks of `s` the `remote` resource when b's executor
 * launches compiles through distcc (see above); nothing otherwise.
 * Returns 0, or -1 after printing the reason to b->err (a host list that
 * does not say how many slots it has -- +zeroconf -- and no
 * [resource.remote] capacity; a list that cannot be read or parsed). */
int vr_remote_wire(vsched *s, const vr_build *b);

/* The --stats line of every resource of `s` that anything held or asked
 * for ("stats: resource NAME capacity=C peak=P in_use=U"), as one malloc'ed
 * text (possibly empty); call it before `s` is destroyed. */
char *vr_remote_resource_lines(vsched *s);

#endif
