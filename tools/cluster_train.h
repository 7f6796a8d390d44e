/* cluster_train.h - what the two trainers of 'hsdag cluster train' share (tools/ only): option number
 *   parsing with a usage error, and atomic writes into the run directory.
 * Not here: either trainer's options (cmd_cluster_train.c: PPO, cmd_cluster_train_dqn.c: DQN).
 * Entry points: ct_num, ct_int, ct_write, cmd_cluster_train_dqn.
 */
#ifndef HSDAG_TOOLS_CLUSTER_TRAIN_H
#define HSDAG_TOOLS_CLUSTER_TRAIN_H

#include "cli.h"

/* *v = the number s of option opt in [lo, hi], else a usage error (returns CLI_BADINPUT). */
int ct_num(const char *opt, const char *s, double lo, double hi, double *v);
int ct_int(const char *opt, const char *s, long lo, long hi, long *v);
/* Writes b to dir/name atomically. 0 or a status (message in e). */
int ct_write(const char *dir, const char *name, const hsdag_buf *b, hsdag_err *e);
/* 'hsdag cluster train --algo dqn ...' (argv[0] = "train"). */
int cmd_cluster_train_dqn(int argc, char **argv);

#endif
