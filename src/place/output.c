/* output.c - Graphviz DOT of a placement, nodes filled by device, with a legend.
 * Not here: placement JSON, affinity maps and Tarnawski splits (placement.h has those writers).
 * Entry points: hsdag_place_dot_write. */
#include "place_int.h"

static const char *const dot_palette[] = {"#8dd3c7", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
                                          "#fccde5", "#bebada", "#ffffb3", "#d9d9d9", "#bc80bd"};

int hsdag_place_dot_write(const hsdag_graph *g, const hsdag_devices *devs, const int32_t *device, hsdag_buf *out)
{
    size_t np = sizeof dot_palette / sizeof dot_palette[0];
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device[v] < 0 || device[v] >= devs->n) return HSDAG_EINVAL;
    hsdag_buf_printf(out, "digraph placement {\n  rankdir=TB;\n  node [shape=box, style=filled, fontsize=10];\n");
    hsdag_buf_printf(out, "  subgraph cluster_legend {\n    label=\"devices\";\n");
    for (int32_t d = 0; d < devs->n; d++) {
        hsdag_buf_printf(out, "    \"legend_%d\" [label=", (int)d);
        hsdag_buf_json_str(out, devs->dev[d].name);
        hsdag_buf_printf(out, ", fillcolor=\"%s\"];\n", dot_palette[(size_t)d % np]);
    }
    hsdag_buf_printf(out, "  }\n");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hsdag_buf_printf(out, "  n%d [label=", (int)v);
        hsdag_buf_json_str(out, g->name[v]);
        hsdag_buf_printf(out, ", tooltip=");
        hsdag_buf_json_str(out, g->op[v] ? g->op[v] : "");
        hsdag_buf_printf(out, ", fillcolor=\"%s\"];\n", dot_palette[(size_t)device[v] % np]);
    }
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t u = g->edge_src[k], v = g->out_dst[k];
        hsdag_buf_printf(out, "  n%d -> n%d%s;\n", (int)u, (int)v,
                         device[u] != device[v] ? " [color=\"#d62728\", penwidth=2]" : "");
    }
    hsdag_buf_printf(out, "}\n");
    return out->oom ? HSDAG_ENOMEM : 0;
}
