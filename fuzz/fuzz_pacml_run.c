/* fuzz_pacml_run.c - libFuzzer target for PAC-ML training runs (hsdag_cluster_train_load, what
 *   `cluster train --resume` reads): the cluster configuration record then the trainer state, in both file
 *   versions. Inputs are raw images, or bit flips of a run made at start-up (fuzz_mutate.h), in version 2
 *   (codec frames with checksums) or rewritten as version 1 (the raw configuration struct of earlier builds,
 *   no checksum: its fields reach hsdag_cluster_create as they are).
 * Not here: training itself (tests/test_pacml.c); a restored run is not stepped (an episode takes seconds).
 * Entry points: LLVMFuzzerTestOneInput. */
#include "fuzz_mutate.h"
#include "hsdag/cluster.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hsdag_buf tmpl_v2, tmpl_v1, tmpl_state;
static hsdag_cluster *env0; /* the start-up run's cluster, for state-only inputs */
static hsdag_pacml_env pe0;

static int fz_setup(void)
{
    hsdag_err e = {0};
    hsdag_cluster_config cc = hsdag_cluster_config_default();
    cc.horizon = 20000;
    cc.replication = 2; /* a small job pool: every accepted input builds the cluster twice */
    if (hsdag_cluster_create(&env0, &cc, NULL, NULL, 0, &e) < 0) return -1;
    hsdag_cluster_pacml_env(&pe0, env0);
    hsdag_pacml_env pe = pe0;
    hsdag_pacml_train_config tc = hsdag_pacml_train_config_default();
    tc.iterations = 1;
    tc.episodes_per_iter = 1;
    tc.epochs = 1;
    tc.eval_episodes = 1;
    tc.net.fc_hidden = 16;
    hsdag_pacml_trainer *t = NULL;
    hsdag_pacml_iter_stats st;
    hsdag_buf state = {0};
    int rc = hsdag_pacml_trainer_create(&t, &pe, &tc, &e);
    if (rc == 0) rc = hsdag_pacml_trainer_iterate(t, &st, &e);
    if (rc == 0) rc = hsdag_cluster_train_save(&tmpl_v2, &cc, t, &e);
    if (rc == 0) rc = hsdag_pacml_trainer_save(t, &tmpl_state, &e);
    if (rc == 0) hsdag_buf_append(&state, tmpl_state.data, tmpl_state.len);
    if (rc == 0) { /* version 1: magic, u32 version = sizeof the struct, the struct, the trainer state */
        uint32_t ver = (uint32_t)sizeof cc;
        unsigned char v[4] = {(unsigned char)ver, (unsigned char)(ver >> 8), (unsigned char)(ver >> 16),
                              (unsigned char)(ver >> 24)};
        hsdag_buf_append(&tmpl_v1, "HSPACRUN", 8);
        hsdag_buf_append(&tmpl_v1, (const char *)v, 4);
        hsdag_buf_append(&tmpl_v1, (const char *)&cc, sizeof cc);
        hsdag_buf_append(&tmpl_v1, state.data, state.len);
        rc = tmpl_v1.oom ? -1 : 0;
    }
    hsdag_buf_free(&state);
    hsdag_pacml_trainer_free(t);
    return rc < 0 ? -1 : 0;
}

/* The trainer state alone, restored on the start-up cluster (a whole run builds a cluster: seconds). */
static void fz_state_only(const unsigned char *img, size_t len)
{
    hsdag_pacml_trainer *t = NULL;
    hsdag_err e = {0};
    if (hsdag_pacml_trainer_restore(&t, &pe0, img, len, -1, &e) == 0) {
        hsdag_buf b = {0};
        HSDAG_ASSERT(hsdag_pacml_trainer_save(t, &b, &e) == 0);
        hsdag_pacml_trainer *t2 = NULL;
        HSDAG_ASSERT(hsdag_pacml_trainer_restore(&t2, &pe0, b.data, b.len, -1, &e) == 0);
        hsdag_pacml_trainer_free(t2);
        hsdag_buf_free(&b);
    } else {
        HSDAG_ASSERT(!t && e.msg[0] && !strchr(e.msg, '\n'));
    }
    hsdag_pacml_trainer_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = -2;
    if (ready == -2) ready = fz_setup();
    HSDAG_ASSERT(ready == 0);
    /* byte 0 (see fz_mutate): bit 7 template, bits 5-4 = 3: a whole run (bit 6: version 1), else the
     * trainer state alone */
    int whole = size > 0 && (data[0] & 0x30) == 0x30;
    const hsdag_buf *tm = !whole ? &tmpl_state : (data[0] & 0x40) ? &tmpl_v1 : &tmpl_v2;
    size_t len = 0;
    unsigned char *img = fz_mutate(data, size, (const unsigned char *)tm->data, tm->len, &len);
    if (!img) return 0;
    if (!whole) {
        fz_state_only(img, len);
        free(img);
        return 0;
    }
    hsdag_cluster *env = NULL;
    hsdag_pacml_trainer *t = NULL;
    hsdag_cluster_config c;
    hsdag_err e = {0};
    int rc = hsdag_cluster_train_load(&env, &t, &c, img, len, -1, "fuzz", &e);
    if (rc == 0) {
        HSDAG_ASSERT(env && t && hsdag_pacml_trainer_total(t) >= 0);
        /* a loaded run saves as version 2 with the same configuration record */
        hsdag_buf b = {0};
        HSDAG_ASSERT(hsdag_cluster_train_save(&b, &c, t, &e) == 0);
        hsdag_buf_free(&b);
    } else {
        HSDAG_ASSERT(!env && !t && e.msg[0] && !strchr(e.msg, '\n') && strncmp(e.msg, "fuzz", 4) == 0);
    }
    hsdag_pacml_trainer_free(t);
    hsdag_cluster_free(env);
    free(img);
    return 0;
}
