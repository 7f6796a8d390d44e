/* cmd_gen.c - 'hsdag gen transformer|random-dag': writes a generated graph as hsdag JSON.
 * Not here: the graphs themselves (src/graph/gen.c) or the JSON writer (src/io/json.c).
 * Entry points: cmd_gen. */
#include "cli.h"
#include "hsdag/gen.h"
#include "hsdag/io.h"

#include <getopt.h>
#include <string.h>

static void help(void)
{
    printf("usage: hsdag gen transformer [options]\n"
           "       hsdag gen random-dag --nodes N [options]\n\n"
           "Writes a generated computation graph as hsdag JSON (docs/formats.md, \"Generated graphs\").\n\n"
           "transformer: a GPT-style decoder, op by op as torch.onnx.export writes it, with FLOPs, weight\n"
           "bytes, tensor bytes and the KV cache as resident memory.\n"
           "  --layers L        decoder blocks (default 12)\n"
           "  --hidden D        model width (default 768)\n"
           "  --heads H         attention heads (default 12; must divide D)\n"
           "  --kv-heads K      key/value heads, GQA (default H; must divide H)\n"
           "  --ffn F           MLP width (default 4 D)\n"
           "  --seq S           prompt tokens (prefill) or tokens in the KV cache (decode) (default 512)\n"
           "  --vocab V         vocabulary (default 50257)\n"
           "  --batch B         sequences (default 1)\n"
           "  --decode          one decode step (one new token per sequence) instead of the prefill\n"
           "  --tied            the LM head reads the token-embedding table\n"
           "  --no-bias         projections without bias (Llama style)\n"
           "  --target-ops N    set --layers to the most blocks that keep the graph at or under N ops\n\n"
           "random-dag: a seeded random DAG (inputs from the W nodes before, about DEG per node).\n"
           "  --nodes N         nodes (required)\n"
           "  --degree DEG      mean in-degree (default 2)\n"
           "  --window W        how far back inputs reach (default 64)\n"
           "  --seed S          RNG seed (default 0)\n\n"
           "both:\n"
           "  --dtype T         element type (default f16 for transformer, f32 for random-dag)\n"
           "  --name NAME       graph name (default derived from the options)\n"
           "  --out FILE        output file (default -: standard output)\n"
           "  -h, --help        this help\n");
}

enum {
    GO_LAYERS = 256,
    GO_HIDDEN,
    GO_HEADS,
    GO_KV,
    GO_FFN,
    GO_SEQ,
    GO_VOCAB,
    GO_BATCH,
    GO_DECODE,
    GO_TIED,
    GO_NOBIAS,
    GO_TARGET,
    GO_NODES,
    GO_DEGREE,
    GO_WINDOW,
    GO_SEED,
    GO_DTYPE,
    GO_NAME,
    GO_OUT
};

typedef struct gen_opts {
    hsdag_gen_transformer_config t;
    hsdag_gen_random_config r;
    long target;
    const char *out;
} gen_opts;

/* One option into o; returns CLI_OK or a usage error. Options GO_LAYERS..GO_TARGET are the transformer's,
 * GO_NODES..GO_SEED the random DAG's, the rest both's. */
static int gen_option(gen_opts *o, int ch, const char *arg, int random)
{
    long x = 0;
    double d = 0;
    if (ch < GO_DTYPE && (ch >= GO_NODES) != random)
        return cli_usage_error("gen", "this option is not one of %s's",
                               random ? "random-dag" : "transformer");
    switch (ch) {
    case GO_DTYPE:
        o->t.dtype = o->r.dtype = hsdag_dtype_parse(arg);
        if (o->t.dtype == HSDAG_DT_UNKNOWN) return cli_usage_error("gen", "--dtype '%s': unknown type", arg);
        return CLI_OK;
    case GO_NAME:
        o->t.name = o->r.name = arg;
        return CLI_OK;
    case GO_OUT:
        o->out = arg;
        return CLI_OK;
    case GO_DECODE:
        o->t.decode = 1;
        return CLI_OK;
    case GO_TIED:
        o->t.tied = 1;
        return CLI_OK;
    case GO_NOBIAS:
        o->t.bias = 0;
        return CLI_OK;
    case GO_DEGREE:
        if (cli_parse_double(arg, 1, 16, &d) < 0)
            return cli_usage_error("gen", "--degree '%s': want a number in [1, 16]", arg);
        o->r.degree = d;
        return CLI_OK;
    default:
        break;
    }
    /* integer options; counts that end up as int32 are capped at the node limit */
    int small = ch == GO_LAYERS || ch == GO_HEADS || ch == GO_KV || ch == GO_NODES || ch == GO_WINDOW;
    if (cli_parse_int(arg, (ch == GO_KV || ch == GO_FFN || ch == GO_SEED) ? 0 : 1,
                      small ? HSDAG_MAX_NODES : 1L << 40, &x) < 0)
        return cli_usage_error("gen", "option value '%s': want an integer in [%d, %ld]", arg,
                               (ch == GO_KV || ch == GO_FFN || ch == GO_SEED) ? 0 : 1,
                               small ? (long)HSDAG_MAX_NODES : 1L << 40);
    if (ch == GO_LAYERS) o->t.layers = (int32_t)x;
    if (ch == GO_HIDDEN) o->t.hidden = x;
    if (ch == GO_HEADS) o->t.heads = (int32_t)x;
    if (ch == GO_KV) o->t.kv_heads = (int32_t)x;
    if (ch == GO_FFN) o->t.ffn = x;
    if (ch == GO_SEQ) o->t.seq = x;
    if (ch == GO_VOCAB) o->t.vocab = x;
    if (ch == GO_BATCH) o->t.batch = x;
    if (ch == GO_TARGET) o->target = x;
    if (ch == GO_NODES) o->r.nodes = (int32_t)x;
    if (ch == GO_WINDOW) o->r.window = (int32_t)x;
    if (ch == GO_SEED) o->r.seed = (uint64_t)x;
    return CLI_OK;
}

/* --target-ops: the most layers whose graph has at most target ops */
static int gen_fit_layers(gen_opts *o)
{
    o->t.layers = 1;
    int64_t one = hsdag_gen_transformer_ops(&o->t);
    if (one < 0) return 0; /* the generator reports the bad config */
    o->t.layers = 2;
    int64_t per = hsdag_gen_transformer_ops(&o->t) - one;
    if (o->target < one)
        return cli_usage_error("gen", "--target-ops %ld: one block already has %lld ops", o->target,
                               (long long)one);
    int64_t l = 1 + (o->target - one) / per;
    if (l > HSDAG_MAX_NODES) l = HSDAG_MAX_NODES;
    o->t.layers = (int32_t)l;
    return 0;
}

int cmd_gen(int argc, char **argv)
{
    static const struct option lo[] = {{"layers", required_argument, 0, GO_LAYERS},
                                       {"hidden", required_argument, 0, GO_HIDDEN},
                                       {"heads", required_argument, 0, GO_HEADS},
                                       {"kv-heads", required_argument, 0, GO_KV},
                                       {"ffn", required_argument, 0, GO_FFN},
                                       {"seq", required_argument, 0, GO_SEQ},
                                       {"vocab", required_argument, 0, GO_VOCAB},
                                       {"batch", required_argument, 0, GO_BATCH},
                                       {"decode", no_argument, 0, GO_DECODE},
                                       {"tied", no_argument, 0, GO_TIED},
                                       {"no-bias", no_argument, 0, GO_NOBIAS},
                                       {"target-ops", required_argument, 0, GO_TARGET},
                                       {"nodes", required_argument, 0, GO_NODES},
                                       {"degree", required_argument, 0, GO_DEGREE},
                                       {"window", required_argument, 0, GO_WINDOW},
                                       {"seed", required_argument, 0, GO_SEED},
                                       {"dtype", required_argument, 0, GO_DTYPE},
                                       {"name", required_argument, 0, GO_NAME},
                                       {"out", required_argument, 0, GO_OUT},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        help();
        return CLI_OK;
    }
    if (argc < 2 || (strcmp(argv[1], "transformer") != 0 && strcmp(argv[1], "random-dag") != 0))
        return cli_usage_error("gen", "want 'transformer' or 'random-dag' (see hsdag gen --help)");
    int random = strcmp(argv[1], "random-dag") == 0, ch;
    gen_opts o = {
        .t = hsdag_gen_transformer_config_default(), .r = hsdag_gen_random_config_default(), .out = "-"};
    o.r.nodes = 0;
    opterr = 0;
    optind = 2;
    while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        if (ch == 'h') {
            help();
            return CLI_OK;
        }
        if (ch == ':') return cli_usage_error("gen", "option '%s' needs a value", argv[optind - 1]);
        if (ch == '?') return cli_usage_error("gen", "unknown option '%s'", argv[optind - 1]);
        int rc = gen_option(&o, ch, optarg, random);
        if (rc != CLI_OK) return rc;
    }
    if (optind != argc) return cli_usage_error("gen", "unexpected argument '%s'", argv[optind]);
    if (random && o.r.nodes < 1) return cli_usage_error("gen", "random-dag needs --nodes N");
    if (!random && o.target > 0 && gen_fit_layers(&o) != 0) return CLI_BADINPUT;
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = random ? hsdag_gen_random(&g, &o.r, &e) : hsdag_gen_transformer(&g, &o.t, &e);
    if (rc < 0) return cli_fail("gen", rc, &e);
    hsdag_buf b = {0};
    if (hsdag_json_write(&b, g) < 0) b.oom = 1;
    hsdag_graph_free(g);
    rc = cli_write_out("gen", o.out, &b);
    hsdag_buf_free(&b);
    return rc;
}
