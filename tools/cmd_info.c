/* cmd_info.c - 'hsdag info' (graph summary as a table or JSON) and 'hsdag convert' (to hsdag JSON
 * or Graphviz DOT). Not here: parsing or statistics (the library's io and graph modules).
 * Entry points: cmd_info, cmd_convert. */
#include "cli.h"
#include "hsdag/io.h"

#include <getopt.h>
#include <string.h>

static const char *fmt_names[] = {"auto",      "onnx",       "openvino-ir", "pipedream",
                                  "tarnawski", "hsdag-json", "dot"};

static int parse_format(const char *s, hsdag_format *f)
{
    for (int i = 0; i < (int)(sizeof fmt_names / sizeof fmt_names[0]); i++)
        if (strcmp(s, fmt_names[i]) == 0) {
            *f = (hsdag_format)i; /* order matches hsdag_format: UNKNOWN(auto), ONNX, OVXML, ... */
            return 0;
        }
    if (strcmp(s, "xml") == 0 || strcmp(s, "ir") == 0) return *f = HSDAG_FMT_OVXML, 0;
    if (strcmp(s, "json") == 0) return *f = HSDAG_FMT_JSON, 0;
    return -1;
}

/* Loads path (format f, or detected) and optionally mirrors a PipeDream graph into its job graph. */
static int load_graph(const char *cmd, const char *path, hsdag_format f, int mirror, hsdag_graph **g)
{
    hsdag_err e = {0};
    int rc = hsdag_load_file(g, path, f, &e);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    if (mirror) {
        hsdag_graph *m = NULL;
        rc = hsdag_pipedream_mirror(&m, *g, &e);
        hsdag_graph_free(*g);
        *g = m;
        if (rc < 0) {
            hsdag_err_prefix(&e, path);
            return cli_fail(cmd, rc, &e);
        }
    }
    return CLI_OK;
}

/* Copies s for the table with control characters as '?': op names come from the file and must not
 * drive the terminal (escape sequences) or break the table's lines. */
static const char *printable(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    out[i] = 0;
    return out;
}

static void human(char *out, size_t n, double v, const char *unit)
{
    const char *pre[] = {"", "K", "M", "G", "T", "P"};
    int k = 0;
    while (v >= 1000 && k < 5) v /= 1000, k++;
    snprintf(out, n, k ? "%.2f %s%s" : "%.0f %s%s", v, pre[k], unit);
}

static void info_usage(FILE *f)
{
    fprintf(f,
            "usage: hsdag info FILE [options]\n\n"
            "Summarises a computation graph: format, node and edge counts (as in the file), op-type\n"
            "histogram, total FLOPs, parameter and activation bytes, depth (nodes on the longest path),\n"
            "maximum width (nodes sharing one longest-path level) and the number of unknown ops.\n\n"
            "options:\n"
            "  --json            print JSON (keys: format, nodes, edges, graph_nodes, graph_edges,\n"
            "                    flops, param_bytes, activation_bytes, depth, max_width, unknown_ops,\n"
            "                    bookkeeping_ops, sources, sinks, ops{op: count}, ...)\n"
            "  --format F        skip detection: onnx, openvino-ir, pipedream, tarnawski, hsdag-json, dot\n"
            "  --mirror          PipeDream only: summarise the PAC-ML job graph (forward + mirrored\n"
            "                    backward, 2n nodes and 2E+1 edges)\n"
            "  --top N           op types shown in the table (default 12; JSON lists all)\n"
            "  -h, --help        this help\n");
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'},   {"format", required_argument, 0, 'f'},
        {"mirror", no_argument, 0, 'm'}, {"top", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},   {0, 0, 0, 0}};
    int json = 0, mirror = 0, c;
    long top = 12;
    hsdag_format fmt = HSDAG_FMT_UNKNOWN;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hjf:mt:", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'm':
            mirror = 1;
            break;
        case 'f':
            if (parse_format(optarg, &fmt) < 0) return cli_usage_error("info", "unknown format '%s'", optarg);
            break;
        case 't':
            if (cli_parse_int(optarg, 0, 1000000, &top) < 0)
                return cli_usage_error("info", "bad --top '%s'", optarg);
            break;
        case 'h':
            info_usage(stdout);
            return CLI_OK;
        default:
            return cli_usage_error("info", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cli_usage_error("info", "expected exactly one FILE");
    const char *path = argv[optind];
    hsdag_graph *g = NULL;
    int rc = load_graph("info", path, fmt, mirror, &g);
    if (rc != CLI_OK) return rc;
    hsdag_graph_stats st;
    hsdag_err e = {0};
    if ((rc = hsdag_graph_stats_compute(g, &st, &e)) < 0) {
        hsdag_graph_free(g);
        return cli_fail("info", rc, &e);
    }
    long long nodes = mirror || g->meta.file_nodes < 0 ? g->n_nodes : g->meta.file_nodes;
    long long edges = mirror || g->meta.file_edges < 0 ? g->n_edges : g->meta.file_edges;
    hsdag_buf b = {0};
    if (json) {
        hsdag_buf_printf(&b, "{\"file\": ");
        hsdag_buf_json_str(&b, path);
        hsdag_buf_printf(&b,
                         ", \"format\": \"%s\", \"nodes\": %lld, \"edges\": %lld, \"graph_nodes\": %d, "
                         "\"graph_edges\": %d, \"flops\": ",
                         hsdag_format_name(g->meta.format), nodes, edges, g->n_nodes, g->n_edges);
        hsdag_buf_double(&b, st.total_flops);
        hsdag_buf_printf(&b, ", \"param_bytes\": ");
        hsdag_buf_double(&b, st.param_bytes);
        hsdag_buf_printf(&b, ", \"activation_bytes\": ");
        hsdag_buf_double(&b, st.activation_bytes);
        hsdag_buf_printf(
            &b,
            ", \"depth\": %d, \"max_width\": %d, \"unknown_ops\": %d, \"bookkeeping_ops\": %d, "
            "\"unshaped_ops\": %d, \"sources\": %d, \"sinks\": %d, \"op_types\": %d, \"mirrored\": %s",
            st.depth, st.max_width, st.unknown_ops, st.bookkeeping_ops, st.unshaped_ops, st.sources, st.sinks,
            st.n_op_types, mirror ? "true" : "false");
        if (g->meta.ir_version >= 0) hsdag_buf_printf(&b, ", \"ir_version\": %d", g->meta.ir_version);
        if (g->meta.opset >= 0) hsdag_buf_printf(&b, ", \"opset\": %d", g->meta.opset);
        if (g->meta.max_accels >= 0)
            hsdag_buf_printf(&b, ", \"max_accels\": %d, \"max_cpus\": %d", g->meta.max_accels,
                             g->meta.max_cpus);
        hsdag_buf_printf(&b, ", \"ops\": {");
        for (int32_t i = 0; i < st.n_op_types; i++) {
            hsdag_buf_printf(&b, i ? ", " : "");
            hsdag_buf_json_str(&b, st.ops[i].op);
            hsdag_buf_printf(&b, ": %d", st.ops[i].count);
        }
        hsdag_buf_printf(&b, "}}\n");
    } else {
        char f1[32], f2[32], f3[32];
        human(f1, sizeof f1, st.total_flops, "FLOP");
        human(f2, sizeof f2, st.param_bytes, "B");
        human(f3, sizeof f3, st.activation_bytes, "B");
        char shown[1024];
        hsdag_buf_printf(&b, "file          %s\nformat        %s%s\n", printable(shown, sizeof shown, path),
                         hsdag_format_name(g->meta.format), mirror ? " (mirrored job graph)" : "");
        hsdag_buf_printf(&b, "nodes         %lld", nodes);
        if (nodes != g->n_nodes) hsdag_buf_printf(&b, " (%d in the graph)", g->n_nodes);
        hsdag_buf_printf(&b, "\nedges         %lld", edges);
        if (edges != g->n_edges) hsdag_buf_printf(&b, " (%d distinct node pairs)", g->n_edges);
        hsdag_buf_printf(&b, "\nflops         %s\nparams        %s\nactivations   %s\n", f1, f2, f3);
        hsdag_buf_printf(&b, "depth         %d\nmax width     %d\nsources       %d\nsinks         %d\n",
                         st.depth, st.max_width, st.sources, st.sinks);
        hsdag_buf_printf(&b, "unknown ops   %d\nbookkeeping   %d\n", st.unknown_ops, st.bookkeeping_ops);
        if (st.unshaped_ops)
            hsdag_buf_printf(
                &b, "unshaped ops  %d (an output shape is unknown: FLOPs and bytes count only the known)\n",
                st.unshaped_ops);
        hsdag_buf_printf(&b, "op types      %d\n", st.n_op_types);
        char opname[256];
        for (int32_t i = 0; i < st.n_op_types && i < top; i++)
            hsdag_buf_printf(&b, "  %-24s %6d\n", printable(opname, sizeof opname, st.ops[i].op),
                             st.ops[i].count);
        if (st.n_op_types > top) hsdag_buf_printf(&b, "  ... %d more op types\n", (int)(st.n_op_types - top));
    }
    if (st.unshaped_ops)
        fprintf(stderr,
                "hsdag info: warning: %s: %d ops have an output of unknown shape; their FLOPs and bytes "
                "count only "
                "what is known, so simulated costs of these ops are too low\n",
                path, st.unshaped_ops);
    rc = cli_write_out("info", "-", &b);
    hsdag_buf_free(&b);
    hsdag_graph_stats_free(&st);
    hsdag_graph_free(g);
    return rc;
}

static void convert_usage(FILE *f)
{
    fprintf(f, "usage: hsdag convert IN OUT [options]\n\n"
               "Converts a graph in any supported format to hsdag JSON (exact round trip) or Graphviz DOT.\n"
               "The output format follows OUT's extension (.json, .dot/.gv) unless --to is given. OUT may\n"
               "be - for standard output.\n\n"
               "options:\n"
               "  --to json|dot     output format\n"
               "  --format F        input format (default: detected from content)\n"
               "  --mirror          PipeDream only: convert the PAC-ML job graph (2n nodes, 2E+1 edges)\n"
               "  -h, --help        this help\n");
}

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = {{"to", required_argument, 0, 'T'},
                                         {"format", required_argument, 0, 'f'},
                                         {"mirror", no_argument, 0, 'm'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int mirror = 0, c, to = 0; /* 0 = by extension, 1 = json, 2 = dot */
    hsdag_format fmt = HSDAG_FMT_UNKNOWN;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hT:f:m", opts, NULL)) != -1) {
        switch (c) {
        case 'T':
            if (strcmp(optarg, "json") == 0)
                to = 1;
            else if (strcmp(optarg, "dot") == 0)
                to = 2;
            else
                return cli_usage_error("convert", "unknown output format '%s' (json or dot)", optarg);
            break;
        case 'f':
            if (parse_format(optarg, &fmt) < 0)
                return cli_usage_error("convert", "unknown format '%s'", optarg);
            break;
        case 'm':
            mirror = 1;
            break;
        case 'h':
            convert_usage(stdout);
            return CLI_OK;
        default:
            return cli_usage_error("convert", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 2) return cli_usage_error("convert", "expected IN and OUT");
    const char *in = argv[optind], *out = argv[optind + 1];
    if (!to) {
        size_t n = strlen(out);
        if (n >= 5 && strcmp(out + n - 5, ".json") == 0)
            to = 1;
        else if ((n >= 4 && strcmp(out + n - 4, ".dot") == 0) || (n >= 3 && strcmp(out + n - 3, ".gv") == 0))
            to = 2;
        else
            return cli_usage_error("convert", "cannot tell the output format of '%s': use --to json|dot",
                                   out);
    }
    hsdag_graph *g = NULL;
    int rc = load_graph("convert", in, fmt, mirror, &g);
    if (rc != CLI_OK) return rc;
    hsdag_buf b = {0};
    rc = to == 1 ? hsdag_json_write(&b, g) : hsdag_dot_write(&b, g, NULL, NULL, 0);
    if (rc < 0) {
        hsdag_err e = {0};
        hsdag_err_set(&e, rc, "%s: cannot write: %s", out, hsdag_status_str(rc));
        rc = cli_fail("convert", rc, &e);
    } else {
        rc = cli_write_out("convert", out, &b);
    }
    hsdag_buf_free(&b);
    hsdag_graph_free(g);
    return rc;
}
