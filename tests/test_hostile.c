/* test_hostile.c - library-level regressions for the inputs of issue 16 that broke the library: m-SCT's LP
 * buffer with isolated nodes, GLPK aborts on unscalable or tiny numbers, the graph builder's value ranges,
 * the placement problem's time ranges, the atomic writer's temporary file, the learner checkpoint's value ranges.
 * Not here: the generated hostile files through the CLI (tests/hostile/), per-format readers (test_<fmt>.c).
 * Entry points: main. */
#include "check.h"

#include "../src/place/place_int.h"
#include "hsdag/codec.h"
#include "hsdag/io.h"
#include "hsdag/learn.h"
#include "hsdag/place.h"

#include <dirent.h>
#include <glpk.h>
#include <sys/stat.h>
#include <unistd.h>

/* n nodes with measured costs, edges i -> i+1 for i < chain (the rest isolated). */
static hsdag_graph *measured(int32_t n, int32_t chain, double cpu_ms, double accel_ms, double edge_ms)
{
    hsdag_gb *b = hsdag_gb_create();
    for (int32_t i = 0; i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "v%d", (int)i);
        int32_t v = hsdag_gb_add_node(b, nm, "Measured");
        hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, i % 2 ? cpu_ms : accel_ms);
        hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, i % 2 ? accel_ms : cpu_ms);
        hsdag_gb_set_mem_bytes(b, v, 1);
    }
    for (int32_t i = 0; i + 1 < chain && i + 1 < n; i++) hsdag_gb_add_edge_ex(b, i, i + 1, 1, edge_ms);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "measured: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

static int run_method(const hsdag_graph *g, const char *preset, const char *method, hsdag_err *e)
{
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    int rc = hsdag_devices_preset(&d, preset, g, e);
    if (rc == 0) rc = hsdag_place_problem_create(&p, g, d, NULL, e);
    if (rc == 0) {
        int32_t *dev = calloc((size_t)g->n_nodes + 1, sizeof *dev);
        hsdag_place_opts o = hsdag_place_opts_default();
        o.time_limit_s = 2;
        hsdag_place_result r;
        rc = hsdag_place_run(p, method, &o, dev, &r, e);
        free(dev);
    }
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    return rc;
}

/* 17 and more isolated nodes overran m-SCT's nonzero estimate (heap-buffer-overflow, or an abort on the
 * assertion in a release build); every LP-based method must place them. */
static void test_msct_isolated(void)
{
    static const int32_t sizes[] = {1, 16, 17, 18, 40, 200};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (int32_t chain = 0; chain <= 3; chain += 3) {
            hsdag_graph *g = measured(sizes[i], chain, 1, 2, 0.1);
            CHECK(g != NULL);
            if (!g) continue;
            hsdag_err e = {0};
            CHECK(run_method(g, "tarnawski:2:1", "m-sct", &e) == 0);
            CHECK(run_method(g, "tarnawski:2:1", "m-etf", &e) == 0);
            CHECK(run_method(g, "tarnawski:2:1", "ilp", &e) == 0);
            hsdag_graph_free(g);
        }
    }
}

/* The builder refuses numbers no solver can scale, naming the node or edge, and keeps the limits. */
static void test_builder_ranges(void)
{
    static const double bad[] = {1e300, 1.7e308, INFINITY, -1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int field = 0; field < 5; field++) {
            hsdag_gb *b = hsdag_gb_create();
            int32_t u = hsdag_gb_add_node(b, "u", "Relu"), v = hsdag_gb_add_node(b, "v", "Relu");
            double edge_ms = NAN, edge_b = 1;
            if (field == 0) hsdag_gb_set_cost(b, u, HSDAG_COST_CPU, bad[i]);
            if (field == 1) hsdag_gb_set_flops(b, u, bad[i]);
            if (field == 2) hsdag_gb_set_mem_bytes(b, u, bad[i]);
            if (field == 3) hsdag_gb_set_param_bytes(b, u, bad[i]);
            if (field == 4) edge_ms = bad[i];
            hsdag_gb_add_edge_ex(b, u, v, edge_b, edge_ms);
            hsdag_graph *g = NULL;
            hsdag_err e = {0};
            CHECK(hsdag_gb_finish(b, &g, &e) == HSDAG_ELIMIT);
            CHECK(g == NULL && strchr(e.msg, '\n') == NULL);
            CHECK(strstr(e.msg, field == 4 ? "edge 'u' -> 'v'" : "node 'u'") != NULL);
            hsdag_gb_free(b);
        }
    }
    /* at the limits: accepted */
    hsdag_gb *b = hsdag_gb_create();
    int32_t u = hsdag_gb_add_node(b, "u", "Relu"), v = hsdag_gb_add_node(b, "v", "Relu");
    hsdag_gb_set_cost(b, u, HSDAG_COST_CPU, HSDAG_MAX_COST_MS);
    hsdag_gb_set_flops(b, u, HSDAG_MAX_FLOPS);
    hsdag_gb_set_mem_bytes(b, u, HSDAG_MAX_BYTES);
    hsdag_gb_add_edge_ex(b, u, v, HSDAG_MAX_BYTES / 2, HSDAG_MAX_COST_MS);
    hsdag_gb_add_edge_ex(b, u, v, HSDAG_MAX_BYTES / 2, 1); /* merged: the sum is at the limit */
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_gb_finish(b, &g, &e) == 0);
    hsdag_graph_free(g);
    /* a merged sum above the limit is refused */
    hsdag_gb_add_edge_ex(b, u, v, HSDAG_MAX_BYTES / 2, 1);
    CHECK(hsdag_gb_finish(b, &g, &e) == HSDAG_ELIMIT && strstr(e.msg, "bytes") != NULL);
    hsdag_gb_free(b);
}

/* hsdag JSON with 1e300 / 1.7e308 costs was accepted and aborted GLPK; now the reader refuses it. */
static void test_json_ranges(void)
{
    static const char *const vals[] = {"1e300", "1.7e308", "1e13"};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        char buf[600];
        snprintf(buf, sizeof buf,
                 "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{\"name\":\"a\",\"op\":\"Relu\","
                 "\"cost_ms\":{\"cpu\":%s,\"accel\":1}},{\"name\":\"b\",\"op\":\"Relu\"}],"
                 "\"edges\":[{\"src\":0,\"dst\":1,\"bytes\":1}]}",
                 vals[i]);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_load(&g, buf, strlen(buf), HSDAG_FMT_UNKNOWN, "big.json", &e) == HSDAG_ELIMIT);
        CHECK(g == NULL && strncmp(e.msg, "big.json: ", 10) == 0);
    }
}

/* Numbers inside the load limits but tiny next to large (1e-300 ms beside 1e12 ms) made GLPK's scaling
 * abort ("invalid scale factor"); a device set with a 1e3 FLOP/s device turns in-range FLOPs into 1e21 s. */
static void test_solver_ranges(void)
{
    hsdag_graph *g = measured(12, 12, 1e-300, HSDAG_MAX_COST_MS, 1e-300);
    CHECK(g != NULL);
    static const char *const methods[] = {"m-sct", "ilp", "m-etf", "heft", "local-search", "metis"};
    for (size_t i = 0; g && i < sizeof methods / sizeof *methods; i++) {
        hsdag_err e = {0};
        int rc = run_method(g, "tarnawski:2:1", methods[i], &e);
        CHECK(rc == 0);
        if (rc) fprintf(stderr, "  %s: %s\n", methods[i], e.msg);
    }
    hsdag_graph_free(g);

    hsdag_gb *b = hsdag_gb_create();
    int32_t u = hsdag_gb_add_node(b, "big", "MatMul"), v = hsdag_gb_add_node(b, "next", "Relu");
    hsdag_gb_set_flops(b, u, 1e24);
    hsdag_gb_add_edge(b, u, v, 1e18);
    g = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_gb_finish(b, &g, &e) == 0);
    hsdag_gb_free(b);
    const char *slow =
        "{\"name\":\"slow\",\"devices\":[{\"name\":\"CPU\",\"kind\":\"cpu\",\"peak_flops\":1e3,"
        "\"mem_bandwidth\":1e3},{\"name\":\"GPU\",\"kind\":\"gpu\",\"peak_flops\":1e3,"
        "\"mem_bandwidth\":1e3}],\"links\":[{\"from\":\"CPU\",\"to\":\"GPU\",\"symmetric\":true,"
        "\"latency_s\":0,\"bandwidth\":1}]}";
    hsdag_devices *d = NULL;
    CHECK(hsdag_devices_parse(&d, slow, strlen(slow), "slow.json", &e) == 0);
    hsdag_place_problem *p = NULL;
    if (g && d) {
        CHECK(hsdag_place_problem_create(&p, g, d, NULL, &e) == HSDAG_ELIMIT);
        CHECK(p == NULL && strstr(e.msg, "'big'") != NULL && strchr(e.msg, '\n') == NULL);
    }
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

/* GLPK's internal errors come back as HSDAG_ESOLVER (not abort), silently, and GLPK works afterwards. */
static int glpk_break(void *ctx, hsdag_err *e)
{
    (void)e;
    glp_prob *lp = glp_create_prob();
    *(int *)ctx = 1;
    glp_add_cols(lp, -1); /* glp_error: "glp_add_cols: ncs = -1; invalid number of columns" */
    *(int *)ctx = 2;      /* not reached */
    return 0;
}

static int glpk_small_lp(void *ctx, hsdag_err *e)
{
    (void)e;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, 1);
    glp_set_col_bnds(lp, 1, GLP_LO, 2.0, 0);
    glp_set_obj_coef(lp, 1, 1.0);
    int rc = place_glpk_prepare(lp, "t", e);
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    if (rc == 0 && glp_simplex(lp, &sp) == 0) *(double *)ctx = glp_get_obj_val(lp);
    glp_delete_prob(lp);
    return rc;
}

static int glpk_huge(void *ctx, hsdag_err *e)
{
    (void)ctx;
    glp_prob *lp = glp_create_prob();
    glp_add_cols(lp, 1);
    glp_set_obj_coef(lp, 1, 1e300);
    int rc = place_glpk_prepare(lp, "huge", e);
    glp_delete_prob(lp);
    return rc;
}

static void test_glpk_guard(void)
{
    for (int rep = 0; rep < 3; rep++) {
        int stage = 0;
        hsdag_err e = {0};
        CHECK(place_glpk_call(glpk_break, &stage, "test", &e) == HSDAG_ESOLVER);
        CHECK(stage == 1);
        CHECK(strncmp(e.msg, "test: GLPK failed internally (", 30) == 0);
        CHECK(strstr(e.msg, "glp_add_cols") != NULL && strchr(e.msg, 10) == NULL);
        double obj = -1;
        CHECK(place_glpk_call(glpk_small_lp, &obj, "test", &e) == 0);
        CHECK_NEAR(obj, 2.0, 1e-12);
    }
    hsdag_err e = {0};
    CHECK(place_glpk_call(glpk_huge, NULL, "huge", &e) == HSDAG_ELIMIT);
    CHECK(strstr(e.msg, "huge: objective coefficient") != NULL);
}

/* A symlink planted at the temporary name the writer used to take (path.tmp<pid>) is neither followed nor
 * replaced; the result has the umask's mode and no temporary file is left. */
static void test_atomic_symlink(void)
{
    char dir[] = "/tmp/hsdag-hostile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char out[300], victim[300], planted[340];
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(planted, sizeof planted, "%s.tmp%ld", out, (long)getpid());
    FILE *f = fopen(victim, "w");
    fputs("keep", f);
    fclose(f);
    CHECK(symlink(victim, planted) == 0);
    mode_t old = umask(027);
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_write_file_atomic(out, "new", 3, &e), 0);
    umask(old);
    char got[16] = {0};
    f = fopen(victim, "r");
    CHECK(f && fread(got, 1, sizeof got - 1, f) == 4 && strcmp(got, "keep") == 0);
    if (f) fclose(f);
    struct stat st;
    CHECK(lstat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0640 && st.st_size == 3);
    CHECK(lstat(planted, &st) == 0 && S_ISLNK(st.st_mode));
    int entries = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));)
        if (de->d_name[0] != '.') entries++;
    if (d) closedir(d);
    CHECK_EQ_INT(entries, 3); /* out.json, victim, the planted link: no temporary file */
    unlink(planted);
    unlink(victim);
    unlink(out);
    rmdir(dir);
}

/* ---- a learner checkpoint's state values are range-checked behind its checksum ---- */

/* Re-makes the checksum of the frame at img (magic, u32 version, u32 0, u64 length, u64 checksum, payload). */
static void refresh_frame(unsigned char *img)
{
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | img[16 + i];
    uint64_t h = hsdag_fnv1a64(hsdag_fnv1a64(HSDAG_FNV64_BASIS, img + 8, 16), img + 32, (size_t)n);
    for (int i = 0; i < 8; i++) img[24 + i] = (unsigned char)(h >> (8 * i));
}

/* A version-4 checkpoint (default learner: LOO baseline, log reward, moving variance, self-imitation) with one
 * state value replaced and its checksum re-made loads only while the value is one a run can produce. Offsets in
 * the frame: 32 header + 19 fingerprint words + episode i32 + evals i64 + 4 RNG words = 228 baseline, 236 the
 * baseline flag, 237 reference latency, 245 reward variance, 253 best latency, 261 best episode, 265 the best
 * placement (6 ops), 289 the self-imitation count, 293 its units, 297 the first one's reward. */
static void test_learn_ckpt_ranges(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = measured(6, 6, 2.0, 1.0, 0.5);
    hsdag_devices *d = NULL;
    hsdag_sim *sim = NULL;
    hsdag_learn *A = NULL, *B = NULL;
    hsdag_buf ck = {0};
    hsdag_sim_config sc = hsdag_sim_config_default();
    CHECK(g != NULL);
    if (!g) return;
    CHECK_EQ_INT(hsdag_devices_preset(&d, "cpu-gpu", g, &e), 0);
    CHECK_EQ_INT(hsdag_sim_create(&sim, g, d, &sc, &e), 0);
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.episodes = 2;
    cfg.steps = 2;
    cfg.hidden = 8;
    cfg.embed = 4;
    CHECK_EQ_INT(hsdag_learn_create(&A, g, d->n, &cfg, &e), 0);
    CHECK_EQ_INT(hsdag_learn_create(&B, g, d->n, &cfg, &e), 0);
    if (!A || !B || !sim) goto done;
    CHECK_EQ_INT(hsdag_learn_train(A, hsdag_learn_sim_eval, sim, NULL, NULL, &e), 0);
    CHECK_EQ_INT(hsdag_learn_save(A, &ck, &e), 0);
    CHECK(ck.len > 305 && ck.data[8] == 4);
    if (ck.len <= 305) goto done;
    int32_t n_sil = 0;
    memcpy(&n_sil, ck.data + 289, 4);
    CHECK(n_sil >= 1); /* so 297 is a self-imitation reward */
    CHECK_EQ_INT(hsdag_learn_load(B, ck.data, ck.len, &e), 0);
    struct {
        size_t at;
        double v;
        const char *field;
    } bad[] = {{228, NAN, "baseline"},
               {228, 0.5, "baseline"}, /* LOO: never set, so 0 */
               {237, -1.0, "reference latency"},
               {237, INFINITY, "reference latency"},
               {237, NAN, "reference latency"},
               {237, 1e300, "reference latency"},
               {245, -0.5, "reward variance"},
               {245, NAN, "reward variance"},
               {245, 1e300, "reward variance"},
               {253, 0.0, "best latency"},
               {253, -1e-3, "best latency"},
               {253, NAN, "best latency"},
               {297, NAN, "self-imitation reward"},
               {297, -1e300, "self-imitation reward"}};
    unsigned char *img = hsdag_malloc(ck.len);
    for (size_t i = 0; img && i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(img, ck.data, ck.len);
        memcpy(img + bad[i].at, &bad[i].v, 8);
        refresh_frame(img);
        e.msg[0] = 0;
        int rc = hsdag_learn_load(B, img, ck.len, &e);
        if (rc != HSDAG_EPARSE || !strstr(e.msg, bad[i].field))
            fprintf(stderr, "checkpoint with %s = %g at %zu: rc %d, \"%s\"\n", bad[i].field, bad[i].v,
                    bad[i].at, rc, e.msg);
        CHECK(rc == HSDAG_EPARSE && strstr(e.msg, bad[i].field) != NULL);
    }
    if (img) { /* the baseline flag is 0 or 1 */
        memcpy(img, ck.data, ck.len);
        img[236] = 7;
        refresh_frame(img);
        CHECK_EQ_INT(hsdag_learn_load(B, img, ck.len, &e), HSDAG_EPARSE);
        CHECK(strstr(e.msg, "baseline flag") != NULL);
    }
    hsdag_free(img);
    CHECK_EQ_INT(hsdag_learn_load(B, ck.data, ck.len, &e), 0); /* the unchanged file still loads */
done:
    hsdag_buf_free(&ck);
    hsdag_learn_free(A);
    hsdag_learn_free(B);
    hsdag_sim_free(sim);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

int main(void)
{
    test_msct_isolated();
    test_builder_ranges();
    test_json_ranges();
    test_solver_ranges();
    test_glpk_guard();
    test_atomic_symlink();
    test_learn_ckpt_ranges();
    return check_summary("test_hostile");
}
