/* split.h - Tarnawski et al. split files: which accelerator ("fpga") or CPU each node runs on.
 * Not here: evaluating a split (the simulator) or choosing one (the placers); graphs come from io.h; splits
 *   mapped onto a device set (placement.h, which reads and writes them through the same code).
 * Entry points: hsdag_split_read, hsdag_split_write.
 *
 * Usage:
 *   hsdag_err e = {0};
 *   int32_t *dev = hsdag_malloc(g->n_nodes * sizeof *dev), n_cpus, n_accels;
 *   if (hsdag_split_read(dev, &n_cpus, &n_accels, buf, len, "expert.json", g, &e) < 0) puts(e.msg);
 *   // dev[v] < n_accels: accelerator fpgas[dev[v]]; else CPU cpus[dev[v] - n_accels]
 *   hsdag_buf out = {0};
 *   hsdag_split_write(&out, g, dev, n_accels, n_cpus, &e);
 */
#ifndef HSDAG_SPLIT_H
#define HSDAG_SPLIT_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads {"cpus":[{"nodes":[ids]},...], "fpgas":[{"nodes":[ids]},...]} (other keys such as "load" and
 * "maxLoad" are ignored). Ids are the graph's file ids (g->file_id). Device numbering: accelerators
 * first, fpgas[i] -> device i; then CPUs, cpus[j] -> device n_accels + j. device_of_node has
 * g->n_nodes slots. Every node must appear exactly once: a missing node, a node listed twice and an id
 * that is no node of g are errors ("what: fpgas[2].nodes[5]: id 77 is not a node of the graph"). */
HSDAG_API int hsdag_split_read(int32_t *device_of_node, int32_t *n_cpus, int32_t *n_accels, const void *buf,
                               size_t len, const char *what, const hsdag_graph *g, hsdag_err *e);

/* Writes a split in the same shape (each group's nodes by file id, ascending; the layout of
 * hsdag_placement_write_split without its "device" names). Devices
 * 0..n_accels-1 are accelerators, n_accels..n_accels+n_cpus-1 CPUs; a node with any other device
 * gives HSDAG_EINVAL. Appends to out; 0 or a negative status with a message in e (HSDAG_ENOMEM if out
 * ran out of memory). */
HSDAG_API int hsdag_split_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *device_of_node,
                                int32_t n_accels, int32_t n_cpus, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
