/* mkfix3.c - writes the version-3 learner fixture with the library as it was before self-imitation and the
 * per-decision offsets (main cd4221d): the default learner, small, on tiny.json */
#include "hsdag/hsdag.h"
#include "hsdag/io.h"
#include <stdio.h>
#include <stdlib.h>
static void wr(const char *p, const void *d, size_t n)
{
    FILE *f = fopen(p, "wb");
    fwrite(d, 1, n, f);
    fclose(f);
}
static void die(const char *w, hsdag_err *e)
{
    fprintf(stderr, "%s: %s\n", w, e->msg);
    exit(1);
}
int main(void)
{
    hsdag_err e = {0};
    hsdag_nn_set_threads(1);
    hsdag_graph *g;
    if (hsdag_load_file(&g, "tests/data/legacy/tiny.json", HSDAG_FMT_UNKNOWN, &e) < 0) die("load", &e);
    hsdag_devices *devs;
    if (hsdag_devices_preset(&devs, "cpu-gpu", g, &e) < 0) die("dev", &e);
    hsdag_sim_config sc = hsdag_sim_config_default();
    hsdag_sim *s;
    if (hsdag_sim_create(&s, g, devs, &sc, &e) < 0) die("sim", &e);
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.hidden = 8, cfg.embed = 4, cfg.steps = 1, cfg.samples = 4, cfg.seed = 7, cfg.episodes = 2;
    hsdag_learn *L;
    if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) die("learn", &e);
    if (hsdag_learn_train(L, hsdag_learn_sim_eval, s, NULL, NULL, &e) < 0) die("train", &e);
    hsdag_buf ck = {0};
    if (hsdag_learn_save(L, &ck, &e) < 0) die("save", &e);
    wr("/tmp/arch/fix3/learn_v3.bin", ck.data, ck.len);
    hsdag_learn_free(L);
    cfg.episodes = 3; /* the same run straight to 3 episodes: what a resumed run must reproduce */
    if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) die("learn", &e);
    if (hsdag_learn_train(L, hsdag_learn_sim_eval, s, NULL, NULL, &e) < 0) die("train", &e);
    int32_t n;
    const hsdag_learn_row *r = hsdag_learn_curve(L, &n);
    FILE *f = fopen("/tmp/arch/fix3/learn_v3.expect", "w");
    for (int32_t i = 0; i < n; i++)
        fprintf(f, "%d %a %a %a %a %d %a\n", (int)r[i].episode, r[i].mean_latency_s, r[i].best_latency_s,
                r[i].entropy, r[i].reward, (int)r[i].clusters, r[i].feasible_frac);
    fclose(f);
    return 0;
}
