/*
 * graph -- --graph: the build's graph as Graphviz dot on standard output
 * (`vsched-run --graph | dot -Tsvg >graph.svg`), built nothing.
 *
 * Every file the build reaches -- the inputs, and every file their
 * Source stages name, transitively, found by Source-only batches through
 * the coordinator as --deps does -- is an ellipse; an Artifact stage per
 * (input, profile) the run would build (variant profiles of targets
 * included) a box fed by its file; a target's job (link, static, shared)
 * a double octagon fed by its objects' Artifacts and, in bold, by the
 * jobs of the libraries it links. A blocker (Artifact waits for its
 * Analysis) is a solid arrow from the blocker to the file, a dependency
 * that is no blocker a dashed one. A file whose Source stage failed is
 * red, with the reason in its tooltip. Names are escaped (escape.h) and
 * quoted for dot; node ids are numbers.
 *
 * Main thread only.
 */
#ifndef VSCHED_HOST_GRAPH_H
#define VSCHED_HOST_GRAPH_H

#include "build/build.h"

/* Returns VR_EXIT_OK, VR_EXIT_FAILED (some Source stage failed: the graph
 * is still written) or VR_EXIT_USAGE. */
int vr_graph_run(const vr_build *b);

#endif
