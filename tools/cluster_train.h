/* cluster_train.h - what the two trainers of 'hsdag cluster train' share (tools/ only): atomic writes into the
 *   run directory, and the DQN trainer's entry point.
 * Not here: the options (one table, tools/opt.c); either trainer (cmd_cluster_train.c: PPO,
 *   cmd_cluster_train_dqn.c: DQN).
 * Entry points: ct_write, cmd_cluster_train_dqn.
 */
#ifndef HSDAG_TOOLS_CLUSTER_TRAIN_H
#define HSDAG_TOOLS_CLUSTER_TRAIN_H

#include "cli.h"
#include "opt.h"

/* Writes b to dir/name atomically. 0 or a status (message in e). */
int ct_write(const char *dir, const char *name, const hsdag_buf *b, hsdag_err *e);
/* 'hsdag cluster train --algo dqn ...': a is parsed (cli_parse) with algo "dqn". */
int cmd_cluster_train_dqn(const cli_args *a);

#endif
