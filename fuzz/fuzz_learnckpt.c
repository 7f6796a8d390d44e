/* fuzz_learnckpt.c - libFuzzer target for HSDAG training checkpoints (hsdag_learn_load, what train --resume
 *   reads): a learner on a fixed 6-op graph and two devices; inputs are raw images or bit flips of a
 *   checkpoint made at start-up after one small episode (fuzz_mutate.h). Whatever loads must save back to
 *   the same bytes and train one more episode without failing.
 * Not here: the learner's numbers (tests/test_learn.c).
 * Entry points: LLVMFuzzerTestOneInput. */
#include "fuzz_mutate.h"
#include "hsdag/learn.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hsdag_graph *g;
static hsdag_devices *devs;
static hsdag_sim *sim;
static hsdag_learn_config cfg;
static hsdag_buf tmpl;

static int fz_setup(void)
{
    hsdag_err e = {0};
    hsdag_gb *b = hsdag_gb_create();
    const char *ops[] = {"MatMul", "Relu", "Conv", "Add", "MatMul", "Softmax"};
    for (int i = 0; i < 6; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "n%d", i);
        int32_t v = hsdag_gb_add_node(b, nm, ops[i]);
        hsdag_gb_set_flops(b, v, 1e8 * (i + 1));
    }
    hsdag_gb_add_edge(b, 0, 1, 4096);
    hsdag_gb_add_edge(b, 1, 2, 8192);
    hsdag_gb_add_edge(b, 1, 3, 8192);
    hsdag_gb_add_edge(b, 2, 4, 4096);
    hsdag_gb_add_edge(b, 3, 4, 4096);
    hsdag_gb_add_edge(b, 4, 5, 1024);
    int rc = hsdag_gb_finish(b, &g, &e);
    hsdag_gb_free(b);
    if (rc < 0 || hsdag_devices_preset(&devs, "cpu-gpu", g, &e) < 0) return -1;
    hsdag_sim_config sc = hsdag_sim_config_default();
    if (hsdag_sim_create(&sim, g, devs, &sc, &e) < 0) return -1;
    cfg = hsdag_learn_config_default();
    cfg.episodes = 1;
    cfg.steps = 3;
    cfg.hidden = 8;
    cfg.embed = 4;
    hsdag_learn *L = NULL;
    if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) return -1;
    rc = hsdag_learn_train(L, hsdag_learn_sim_eval, sim, NULL, NULL, &e);
    if (rc >= 0) rc = hsdag_learn_save(L, &tmpl, &e);
    hsdag_learn_free(L);
    return rc < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = -2;
    if (ready == -2) ready = fz_setup();
    HSDAG_ASSERT(ready == 0);
    size_t len = 0;
    unsigned char *img = fz_mutate(data, size, (const unsigned char *)tmpl.data, tmpl.len, &len);
    if (!img) return 0;
    hsdag_learn *L = NULL;
    hsdag_err e = {0};
    hsdag_learn_config more = cfg; /* a resumed run may ask for more episodes */
    more.episodes = 2;
    HSDAG_ASSERT(hsdag_learn_create(&L, g, devs->n, &more, &e) == 0);
    if (hsdag_learn_load(L, img, len, &e) == 0) {
        hsdag_buf b = {0};
        HSDAG_ASSERT(hsdag_learn_save(L, &b, &e) == 0);
        HSDAG_ASSERT(b.len == len && memcmp(b.data, img, len) == 0);
        hsdag_buf_free(&b);
        int rc = hsdag_learn_train(L, hsdag_learn_sim_eval, sim, NULL, NULL, &e);
        if (rc < 0) {
            fprintf(stderr, "fuzz_learnckpt: a loaded checkpoint does not train on: %s\n", e.msg);
            abort();
        }
    } else {
        HSDAG_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
    }
    hsdag_learn_free(L);
    free(img);
    return 0;
}
