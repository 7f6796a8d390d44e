/* cluster_internal.h - structures shared by the files of the cluster module (not installed).
 * Not here: anything public (include/hsdag/cluster.h).
 * Entry points: cl_model, cl_place, cl_job_place, cl_job_lookahead, cl_degree_has_shape, cl_env_jobs,
 *   cl_pacml_run. */
#ifndef HSDAG_CLUSTER_INTERNAL_H
#define HSDAG_CLUSTER_INTERNAL_H

#include "hsdag/cluster.h"

#define HSDAG_CLUSTER_MAX_SERVERS 512

/* A job model in ddls ids: forward ops 1..n, backward twin of i is 2n-(i-1). */
typedef struct cl_model {
    hsdag_cluster_model pub;
    hsdag_graph *job; /* mirrored graph (owned) */
    char *name;
    int32_t n;              /* forward ops */
    double *comp, *mem;     /* [2n+1] by ddls id: compute (time units) and memory (bytes) */
    int32_t n_edges;        /* 2E+1 */
    int32_t *eu, *ev;       /* mirrored edges in ddls ids */
    int32_t *kahn;          /* forward ids in Kahn BFS order */
    int32_t *par_off, *par; /* forward parents of forward id i: par[par_off[i] .. par_off[i+1]) */
    int32_t need[HSDAG_CLUSTER_N_ACTIONS]; /* cl_job_need_mask per degree */
} cl_model;

/* A placement of every forward op (its backward twin shares its servers). */
typedef struct cl_place {
    int32_t *k;   /* [n+1] split degree by forward id */
    int32_t *srv; /* [(n+1) * HSDAG_CLUSTER_MAX_DEGREE] server of copy i */
    uint8_t used[HSDAG_CLUSTER_MAX_SERVERS];
    int32_t n_used;
} cl_place;

typedef struct cl_lookahead {
    double step_time, jct;
    int32_t n_ops, n_deps, n_split_ops;
} cl_lookahead;

/* First-fit placement with the dummy view busy[] (servers of other jobs). 0 ok, -1 no block. */
int cl_job_place(const cl_model *m, const hsdag_cluster_config *c, const uint8_t *busy, int32_t a,
                 cl_place *p);
/* Dependencies of the placed job's split graph (graph deps + backward sync pairs). */
int64_t cl_job_split_deps(const cl_model *m, const cl_place *p);
/* Splits, times and simulates one training step of the placed job: O((ops + deps) log) time, memory linear
 * in the split graph. 0, HSDAG_ENOMEM, or HSDAG_ELIMIT above HSDAG_CLUSTER_MAX_SPLIT_DEPS deps. */
int cl_job_lookahead(const cl_model *m, const hsdag_cluster_config *c, const cl_place *p, cl_lookahead *out);
int cl_degree_has_shape(int32_t nc, int32_t nr, int32_t ns, int32_t a);
/* P(beta < x) of a beta distribution. */
double cl_beta_below(const hsdag_beta_dist *d, double x);
/* Block sizes (bit k) that the placer must find by first fit (ops whose split no parent shares), or -1 if
 * some
 * op can never fit (memory). Independent of occupancy. */
int32_t cl_job_need_mask(const cl_model *m, const hsdag_cluster_config *c, int32_t a);
/* The lookahead heuristic's action for the waiting job (env.c). */
int cl_env_lookahead_action(const hsdag_cluster *env, int horizon_steps, int floor_degree);
/* The env's models as the PAC-ML learner sees them: hsdag_cluster_n_models entries (env.c). */
const hsdag_pacml_job *cl_env_jobs(const hsdag_cluster *env);
/* One greedy episode of the learned policy at path (a PPO or DQN policy file, or a directory holding
 * policy.bin or else beta_X.bin / beta_X_tuf.bin for the env's setting; NULL or "" = the shipped policy
 * for the env's beta): what hsdag_cluster_run does for "learned[:DIR]" (pacml_env.c). A policy trained for
 * another beta or time-unit setting than the env's is refused (HSDAG_EINVAL naming both). */
int cl_pacml_run(hsdag_cluster *env, const char *path, uint64_t seed, hsdag_cluster_metrics *m, hsdag_err *e);

#endif
