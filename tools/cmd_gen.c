/* cmd_gen.c - 'hsdag gen transformer|random-dag': writes a generated graph as hsdag JSON.
 * Not here: the graphs themselves (src/graph/gen.c), the JSON writer (src/io/json.c) or the options (the
 * table in tools/opt.c).
 * Entry points: cmd_gen. */
#include "cli.h"
#include "hsdag/gen.h"
#include "hsdag/io.h"
#include "opt.h"

#include <string.h>

/* --target-ops: the most layers whose graph has at most target ops */
static int gen_fit_layers(hsdag_gen_transformer_config *t, long target, const char *cmd)
{
    t->layers = 1;
    int64_t one = hsdag_gen_transformer_ops(t);
    if (one < 0) return CLI_OK; /* the generator reports the bad config */
    t->layers = 2;
    int64_t per = hsdag_gen_transformer_ops(t) - one;
    if (target < one)
        return cli_usage_error(cmd, "--target-ops %ld: one block already has %lld ops", target,
                               (long long)one);
    int64_t l = 1 + (target - one) / per;
    t->layers = (int32_t)(l > HSDAG_MAX_NODES ? HSDAG_MAX_NODES : l);
    return CLI_OK;
}

int cmd_gen(int argc, char **argv)
{
    if (argc < 2) return cli_usage_error("gen", "missing the subcommand: transformer or random-dag");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        cli_group_usage(stdout, "gen");
        return CLI_OK;
    }
    cli_cmd id = !strcmp(argv[1], "transformer")  ? CMD_GEN_TRANSFORMER
                 : !strcmp(argv[1], "random-dag") ? CMD_GEN_RANDOM
                                                  : CMD_COUNT_;
    if (id == CMD_COUNT_)
        return cli_usage_error("gen", "unknown subcommand '%s' (transformer, random-dag)", argv[1]);
    cli_args a;
    cli_args_init(&a, id);
    int rc = cli_parse(&a, argc - 1, argv + 1);
    if (rc != CLI_CONTINUE) return rc;
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (id == CMD_GEN_RANDOM) {
        if (!cli_given(&a, nodes)) return cli_usage_error(a.name, "missing --nodes N");
        hsdag_gen_random_config r = hsdag_gen_random_config_default();
        r.nodes = (int32_t)a.nodes;
        r.degree = a.degree;
        r.window = (int32_t)a.window;
        r.seed = (uint64_t)a.seed;
        r.dtype = hsdag_dtype_parse(a.dtype);
        r.name = a.set_name;
        rc = hsdag_gen_random(&g, &r, &e);
    } else {
        hsdag_gen_transformer_config t = hsdag_gen_transformer_config_default();
        t.layers = (int32_t)a.layers;
        t.hidden = a.d_model;
        t.heads = (int32_t)a.heads;
        t.kv_heads = (int32_t)a.kv_heads;
        t.ffn = a.ffn;
        t.seq = a.seq;
        t.vocab = a.vocab;
        t.batch = a.sequences;
        t.decode = a.decode;
        t.tied = a.tied;
        t.bias = !a.no_bias;
        t.dtype = hsdag_dtype_parse(a.dtype);
        t.name = a.set_name;
        if (cli_given(&a, target_ops) && (rc = gen_fit_layers(&t, a.target_ops, a.name)) != CLI_OK) return rc;
        rc = hsdag_gen_transformer(&g, &t, &e);
    }
    if (rc < 0) return cli_fail(a.name, rc, &e);
    hsdag_buf b = {0};
    if (hsdag_json_write(&b, g) < 0) b.oom = 1;
    hsdag_graph_free(g);
    rc = cli_write_out(a.name, a.out ? a.out : "-", &b);
    hsdag_buf_free(&b);
    return rc;
}
