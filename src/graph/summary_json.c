/* summary_json.c - the "hsdag-graph-summary/1" document of `hsdag info --json`: format, counts as in the
 * file and in the graph, FLOPs, bytes, depth, width and the op histogram.
 * Not here: computing the statistics (graph.c, hsdag_graph_stats_compute) or the key list (docs/formats.md,
 * "Result JSON"). Entry points: hsdag_graph_summary_write_json.
 */
#include "hsdag/graph.h"

int hsdag_graph_summary_write_json(hsdag_buf *out, const hsdag_graph *g, const hsdag_graph_stats *st,
                                   const char *file, int mirrored)
{
    long long nodes = mirrored || g->meta.file_nodes < 0 ? g->n_nodes : g->meta.file_nodes;
    long long edges = mirrored || g->meta.file_edges < 0 ? g->n_edges : g->meta.file_edges;
    hsdag_jw w;
    hsdag_jw_begin(&w, out, "hsdag-graph-summary/1");
    hsdag_jw_str(&w, "file", file);
    hsdag_jw_str(&w, "format", hsdag_format_name(g->meta.format));
    hsdag_jw_int(&w, "nodes", nodes);
    hsdag_jw_int(&w, "edges", edges);
    hsdag_jw_int(&w, "graph_nodes", g->n_nodes);
    hsdag_jw_int(&w, "graph_edges", g->n_edges);
    hsdag_jw_num(&w, "flops", st->total_flops);
    hsdag_jw_num(&w, "param_bytes", st->param_bytes);
    hsdag_jw_num(&w, "activation_bytes", st->activation_bytes);
    hsdag_jw_int(&w, "depth", st->depth);
    hsdag_jw_int(&w, "max_width", st->max_width);
    hsdag_jw_int(&w, "unknown_ops", st->unknown_ops);
    hsdag_jw_int(&w, "bookkeeping_ops", st->bookkeeping_ops);
    hsdag_jw_int(&w, "unshaped_ops", st->unshaped_ops);
    hsdag_jw_int(&w, "sources", st->sources);
    hsdag_jw_int(&w, "sinks", st->sinks);
    hsdag_jw_int(&w, "op_types", st->n_op_types);
    hsdag_jw_bool(&w, "mirrored", mirrored);
    /* -1 in the IR = the file has no such field */
    const int32_t opt[] = {g->meta.ir_version, g->meta.opset, g->meta.max_accels, g->meta.max_cpus};
    const char *const opt_key[] = {"ir_version", "opset", "max_accels", "max_cpus"};
    for (int i = 0; i < 4; i++)
        if (opt[i] >= 0)
            hsdag_jw_int(&w, opt_key[i], opt[i]);
        else
            hsdag_jw_null(&w, opt_key[i]);
    hsdag_jw_object(&w, "ops");
    for (int32_t i = 0; i < st->n_op_types; i++) hsdag_jw_int(&w, st->ops[i].op, st->ops[i].count);
    hsdag_jw_close(&w);
    return hsdag_jw_end(&w);
}
