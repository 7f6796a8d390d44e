/* train_run.c - the state of a PAC-ML training run on the RAMP cluster (DIR/checkpoint.bin of `hsdag cluster
 *   train`): the cluster configuration field by field in a codec frame, then the PPO trainer's state.
 * Not here: the trainer's own fields (src/learn/pacml_ppo.c), file names and directories (the CLI).
 * Entry points: hsdag_cluster_train_save/load, hsdag_cluster_config_diff.
 */
#include "cluster_internal.h"
#include "hsdag/codec.h"

#include <string.h>

#define RUN_MAGIC "HSPACRUN"
#define RUN_VERSION 2u /* version 1 (before the codec): magic, u32 sizeof(config), the raw config struct */

static void put_config(hsdag_buf *b, const hsdag_cluster_config *c)
{
    hsdag_put_i32(b, c->n_cgs);
    hsdag_put_i32(b, c->n_racks);
    hsdag_put_i32(b, c->n_servers);
    hsdag_put_f64(b, c->worker_mem);
    hsdag_put_f64(b, c->node_bw);
    hsdag_put_f64(b, c->prop_latency);
    hsdag_put_f64(b, c->io_latency);
    hsdag_put_f64(b, c->interarrival);
    hsdag_put_f64(b, c->horizon);
    hsdag_put_f64(b, c->quantum);
    hsdag_put_i32(b, c->n_steps);
    hsdag_put_i32(b, c->replication);
    hsdag_put_u8(b, (uint8_t)c->beta);
    hsdag_put_u8(b, (uint8_t)(c->time_unit_fix != 0));
    hsdag_put_u64(b, c->beta_table_seed);
}

static void get_config(hsdag_rd *r, hsdag_cluster_config *c)
{
    memset(c, 0, sizeof *c);
    c->n_cgs = hsdag_get_i32(r);
    c->n_racks = hsdag_get_i32(r);
    c->n_servers = hsdag_get_i32(r);
    c->worker_mem = hsdag_get_f64(r);
    c->node_bw = hsdag_get_f64(r);
    c->prop_latency = hsdag_get_f64(r);
    c->io_latency = hsdag_get_f64(r);
    c->interarrival = hsdag_get_f64(r);
    c->horizon = hsdag_get_f64(r);
    c->quantum = hsdag_get_f64(r);
    c->n_steps = hsdag_get_i32(r);
    c->replication = hsdag_get_i32(r);
    c->beta = (char)hsdag_get_u8(r);
    c->time_unit_fix = hsdag_get_u8(r);
    c->beta_table_seed = hsdag_get_u64(r);
}

const char *hsdag_cluster_config_diff(const hsdag_cluster_config *a, const hsdag_cluster_config *b)
{
#define CF_DIFF(f, name) \
    if (memcmp(&a->f, &b->f, sizeof a->f)) return name
    CF_DIFF(n_cgs, "shape");
    CF_DIFF(n_racks, "shape");
    CF_DIFF(n_servers, "shape");
    CF_DIFF(worker_mem, "worker-mem");
    CF_DIFF(node_bw, "bandwidth");
    CF_DIFF(prop_latency, "prop-latency");
    CF_DIFF(io_latency, "io-latency");
    CF_DIFF(interarrival, "interarrival");
    CF_DIFF(horizon, "horizon");
    CF_DIFF(quantum, "quantum");
    CF_DIFF(n_steps, "steps");
    CF_DIFF(replication, "replication");
    CF_DIFF(beta, "beta");
    CF_DIFF(time_unit_fix, "time-unit-fix");
    CF_DIFF(beta_table_seed, "beta-table-seed");
#undef CF_DIFF
    return NULL;
}

int hsdag_cluster_train_save(hsdag_buf *out, const hsdag_cluster_config *c, const hsdag_pacml_trainer *t,
                             hsdag_err *e)
{
    size_t at = hsdag_frame_begin(out, RUN_MAGIC, RUN_VERSION);
    put_config(out, c);
    if (hsdag_frame_end(out, at) < 0) return hsdag_err_set(e, HSDAG_ENOMEM, "cluster train: out of memory");
    return hsdag_pacml_trainer_save(t, out, e);
}

int hsdag_cluster_train_load(hsdag_cluster **env, hsdag_pacml_trainer **t, hsdag_cluster_config *c,
                             const void *buf, size_t len, int32_t iterations, const char *what, hsdag_err *e)
{
    *env = NULL;
    *t = NULL;
    if (!what) what = "<buffer>";
    if (len < 12 || memcmp(buf, RUN_MAGIC, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not a checkpoint of 'hsdag cluster train' (bad magic)",
                             what);
    uint32_t ver = hsdag_frame_version(buf, len, RUN_MAGIC);
    size_t state_pos = 0;
    int rc;
    if (ver == (uint32_t)sizeof *c && ver != RUN_VERSION) { /* version 1: the raw struct of this build */
        if (len < 12 + sizeof *c)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated cluster configuration", what);
        memcpy(c, (const unsigned char *)buf + 12, sizeof *c);
        state_pos = 12 + sizeof *c;
    } else {
        hsdag_rd r;
        if ((rc = hsdag_frame_open(&r, &ver, &state_pos, buf, len, RUN_MAGIC, what, e)) < 0) return rc;
        if (ver != RUN_VERSION)
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: unsupported version %u", what, ver);
        get_config(&r, c);
        if (r.bad || hsdag_rd_left(&r))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: bad cluster configuration record", what);
    }
    if ((rc = hsdag_cluster_create(env, c, NULL, NULL, 0, e)) < 0) {
        hsdag_err_prefix(e, what);
        return rc == HSDAG_EINVAL ? HSDAG_EPARSE : rc;
    }
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, *env);
    rc = hsdag_pacml_trainer_restore(t, &pe, (const unsigned char *)buf + state_pos, len - state_pos,
                                     iterations, e);
    if (rc < 0) {
        hsdag_err_prefix(e, what);
        hsdag_cluster_free(*env);
        *env = NULL;
    }
    return rc;
}
