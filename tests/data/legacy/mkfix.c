/* mkfix.c - writes legacy (v1) binary fixtures with the library as it was before the codec (main 87cce42) */
#include "hsdag/hsdag.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"
#include <stdio.h>
#include <string.h>
static void wr(const char *p, const void *d, size_t n) { FILE *f = fopen(p, "wb"); fwrite(d, 1, n, f); fclose(f); }
static void die(const char *w, hsdag_err *e) { fprintf(stderr, "%s: %s\n", w, e->msg); exit(1); }
int main(void)
{
    hsdag_err e = {0};
    hsdag_nn_set_threads(1);
    /* the tiny graph, as hsdag JSON */
    hsdag_gb *b = hsdag_gb_create();
    int32_t x = hsdag_gb_add_node(b, "x", "Parameter"), c1 = hsdag_gb_add_node(b, "conv1", "Conv"),
            r1 = hsdag_gb_add_node(b, "relu1", "Relu"), c2 = hsdag_gb_add_node(b, "conv2", "Conv"),
            ad = hsdag_gb_add_node(b, "add", "Add"), fc = hsdag_gb_add_node(b, "fc", "Gemm");
    int64_t d4[4] = {1, 64, 56, 56};
    int32_t all[6] = {x, c1, r1, c2, ad, fc};
    for (int i = 0; i < 6; i++) { hsdag_gb_add_output(b, all[i], HSDAG_DT_F32, 4, d4); hsdag_gb_set_flops(b, all[i], 1e8 * (i + 1)); }
    hsdag_gb_add_edge(b, x, c1, 802816); hsdag_gb_add_edge(b, c1, r1, 802816); hsdag_gb_add_edge(b, r1, c2, 802816);
    hsdag_gb_add_edge(b, c1, ad, 802816); hsdag_gb_add_edge(b, c2, ad, 802816); hsdag_gb_add_edge(b, ad, fc, 802816);
    hsdag_graph *g; if (hsdag_gb_finish(b, &g, &e) < 0) die("graph", &e);
    hsdag_gb_free(b);
    hsdag_buf js = {0}; hsdag_json_write(g, &js); wr("/tmp/arch/fix/tiny.json", js.data, js.len);
    /* re-read it, so the learner sees exactly what the test will load */
    hsdag_graph_free(g);
    if (hsdag_json_read(js.data, js.len, "tiny", &g, &e) < 0) die("json", &e);
    hsdag_devices *devs; if (hsdag_devices_preset("cpu-gpu", g, &devs, &e) < 0) die("dev", &e);
    hsdag_sim_config sc = hsdag_sim_config_default();
    hsdag_sim *s; if (hsdag_sim_create(&s, g, devs, &sc, &e) < 0) die("sim", &e);
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.hidden = 8; cfg.embed = 4; cfg.steps = 3; cfg.seed = 7; cfg.episodes = 2;
    hsdag_learn *L; if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) die("learn", &e);
    if (hsdag_learn_train(L, hsdag_learn_sim_eval, s, NULL, NULL, &e) < 0) die("train", &e);
    hsdag_buf ck = {0}; if (hsdag_learn_save(L, &ck, &e) < 0) die("save", &e);
    wr("/tmp/arch/fix/learn_v1.bin", ck.data, ck.len);
    /* the same run straight to 3 episodes: what a resumed run must reproduce */
    hsdag_learn_free(L);
    cfg.episodes = 3;
    if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) die("learn", &e);
    if (hsdag_learn_train(L, hsdag_learn_sim_eval, s, NULL, NULL, &e) < 0) die("train", &e);
    int32_t nr; const hsdag_learn_row *rows = hsdag_learn_curve(L, &nr);
    FILE *f = fopen("/tmp/arch/fix/learn_v1.expect", "w");
    for (int i = 0; i < nr; i++) fprintf(f, "%d %a %a %a %a %d\n", rows[i].episode, rows[i].mean_latency_s, rows[i].best_latency_s, rows[i].entropy, rows[i].reward, rows[i].clusters);
    fclose(f);
    hsdag_learn_free(L);
    /* a small NN parameter image */
    hsdag_nn_params *p; hsdag_nn_params_create(&p);
    hsdag_nn_linear l1; hsdag_nn_linear_add(p, &l1, "l1", 3, 2, 1, &e);
    hsdag_rng r; hsdag_rng_seed(&r, 5); hsdag_nn_params_alloc(p, &r, &e);
    float *gr = hsdag_nn_params_grad(p, -1); for (size_t i = 0; i < hsdag_nn_params_count(p); i++) gr[i] = 0.1f * (float)i;
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default(); hsdag_nn_adam_step(p, &ac, NULL);
    hsdag_buf nb = {0}; hsdag_nn_params_save(p, &nb, &e); wr("/tmp/arch/fix/nn_v1.bin", nb.data, nb.len);
    hsdag_nn_params_free(p);
    /* a PAC-ML run state (as 'hsdag cluster train' wrote it) after 1 iteration with a tiny net */
    hsdag_cluster_config cc = hsdag_cluster_config_default();
    cc.beta = 'C'; cc.horizon = 20000;
    hsdag_cluster *env; if (hsdag_cluster_create(&cc, NULL, NULL, 0, &env, &e) < 0) die("env", &e);
    hsdag_pacml_train_config tc = hsdag_pacml_train_config_default();
    tc.seed = 11; tc.iterations = 2; tc.episodes_per_iter = 1; tc.epochs = 1; tc.minibatch = 16; tc.eval_episodes = 1;
    tc.net.fc_hidden = 4; tc.net.msg_half = 2; tc.net.hidden1 = 3; tc.net.node_out = 2; tc.net.graph_out = 2;
    tc.net.mask_mode = HSDAG_PACML_MASK_PLACE;
    hsdag_pacml_trainer *t; if (hsdag_pacml_trainer_create(&t, env, &tc, &e) < 0) die("trainer", &e);
    hsdag_pacml_iter_stats st;
    if (hsdag_pacml_trainer_iterate(t, &st, &e) < 0) die("iter", &e);
    hsdag_buf rs = {0}; uint32_t sz = sizeof cc;
    hsdag_buf_append(&rs, "HSPACRUN", 8); hsdag_buf_append(&rs, (const char *)&sz, 4); hsdag_buf_append(&rs, (const char *)&cc, sizeof cc);
    if (hsdag_pacml_trainer_save(t, &rs, &e) < 0) die("tsave", &e);
    wr("/tmp/arch/fix/pacml_run_v1.bin", rs.data, rs.len);
    hsdag_buf pol = {0}; hsdag_pacml_trainer_save_best(t, &pol, &e); wr("/tmp/arch/fix/pacml_policy_v1.bin", pol.data, pol.len);
    if (hsdag_pacml_trainer_iterate(t, &st, &e) < 0) die("iter2", &e);
    f = fopen("/tmp/arch/fix/pacml_run_v1.expect", "w");
    fprintf(f, "%d %lld %a %a %a %a %a %a %a %a %a %a\n", st.iteration, (long long)st.steps, st.train_blocking, st.train_return, st.eval_blocking, st.entropy, st.value_loss, st.policy_loss, st.kl, st.kl_coeff, st.clip_frac, st.grad_norm);
    fclose(f);
    hsdag_pacml_trainer_free(t); hsdag_cluster_free(env);
    return 0;
}
