/* split_int.h - the one reader and writer of Tarnawski split lists inside src/io, shared by the split files
 *   (split.c, hsdag_split_*) and the placement files (placement.c, which maps groups onto a device set).
 * Not here: JSON parsing (jsonin.h) or any device set. Not installed.
 * Entry points: io_split_groups, io_split_write. */
#ifndef HSDAG_SRC_IO_SPLIT_INT_H
#define HSDAG_SRC_IO_SPLIT_INT_H

#include "jsonin.h"

#define IO_SPLIT_OPTIONAL_LISTS 1u /* a missing "cpus" or "fpgas" list counts as empty */

/* Reads the groups of a split (root: a parsed JSON object): group_of[v] = i for a node of fpgas[i],
 * n_fpgas + j for one of cpus[j]; ids are g->file_id. *n_cpus and *n_fpgas get the list lengths first
 * (even when the split is refused later). Every node must be listed exactly once. Errors (one line, what
 * first): a list that is not an array, a group without a "nodes" array, an id that is not an integer or
 * no node of g (HSDAG_EDANGLING), a node listed twice, a node in no group, two nodes of g with one id. */
int io_split_groups(int32_t *group_of, int32_t *n_cpus, int32_t *n_fpgas, json_object *root, unsigned flags,
                    const hsdag_graph *g, const char *what, hsdag_err *e);

/* Appends {"cpus": [...], "fpgas": [...]}: cpus[j] lists the nodes of group n_fpgas + j, fpgas[i] those of
 * group i, by file id in ascending order; names (optional, [n_fpgas + n_cpus]) add "device": names[group]
 * to every group. Returns 0, HSDAG_EINVAL (a group out of range) or HSDAG_ENOMEM, with a message. */
int io_split_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *group_of, int32_t n_fpgas,
                   int32_t n_cpus, const char *const *names, hsdag_err *e);

#endif
