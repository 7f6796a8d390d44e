/* cmd_info.c - 'hsdag info' (graph summary as a table or JSON) and 'hsdag convert' (to hsdag JSON
 * or Graphviz DOT). Not here: parsing or statistics (the library's io and graph modules).
 * Entry points: cmd_info, cmd_convert. */
#include "cli.h"
#include "hsdag/io.h"
#include "opt.h"

#include <string.h>

/* --format F (already one of the table's choices) -> the enum; "auto" = detect. */
static hsdag_format format_of(const char *s)
{
    for (int f = HSDAG_FMT_ONNX; s && f <= HSDAG_FMT_DOT; f++)
        if (strcmp(s, hsdag_format_name((hsdag_format)f)) == 0) return (hsdag_format)f;
    return HSDAG_FMT_UNKNOWN;
}

/* Loads path (format f, or detected) and optionally mirrors a PipeDream graph into its job graph. */
static int load_graph(const char *cmd, const char *path, hsdag_format f, int mirror, hsdag_graph **g)
{
    hsdag_err e = {0};
    int rc = hsdag_load_file(g, path, f, &e);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    if (!mirror) return CLI_OK;
    if ((*g)->meta.format != HSDAG_FMT_PIPEDREAM) {
        rc = cli_usage_error(cmd, "--mirror applies to PipeDream graphs only, and %s is %s", path,
                             hsdag_format_name((*g)->meta.format));
        hsdag_graph_free(*g);
        *g = NULL;
        return rc;
    }
    hsdag_graph *m = NULL;
    rc = hsdag_pipedream_mirror(&m, *g, &e);
    hsdag_graph_free(*g);
    *g = m;
    if (rc < 0) {
        hsdag_err_prefix(&e, path);
        return cli_fail(cmd, rc, &e);
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

int cmd_info(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_INFO);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    int json = a.json, mirror = a.mirror;
    long top = a.top;
    const char *path = a.pos[0];
    hsdag_graph *g = NULL;
    rc = load_graph("info", path, format_of(a.format), mirror, &g);
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
        hsdag_graph_summary_write_json(&b, g, &st, path, mirror);
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

int cmd_convert(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_CONVERT);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    int to = !a.to ? 0 : strcmp(a.to, "json") == 0 ? 1 : 2; /* 0 = by extension, 1 = json, 2 = dot */
    const char *in = a.pos[0], *out = a.pos[1];
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
    rc = load_graph("convert", in, format_of(a.format), a.mirror, &g);
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
