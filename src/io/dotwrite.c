/* dotwrite.c - Graphviz DOT export of a graph: nodes labelled "name\nop", optionally filled by device with a
 * legend, edges labelled with the bytes they carry (human units). Output is valid input for `dot -Tsvg`.
 * Not here: reading DOT (dot.c) or running Graphviz; layout is left entirely to Graphviz.
 * Entry points: hsdag_dot_write. */
#include "hsdag/io.h"

#include <math.h>
#include <string.h>

/* ColorBrewer Set3 (12 pastel colours, readable under black text); device d gets dw_palette[d % 12]. */
static const char *const dw_palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                         "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
#define DW_NPAL ((int32_t)(sizeof dw_palette / sizeof dw_palette[0]))
#define DW_UNPLACED "#ffffff"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static int dw_utf8_len(const unsigned char *p)
{
    int n;
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4;
    else
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 3 && p[0] == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
    if (n == 3 && p[0] == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
    if (n == 4 && p[0] == 0xf0 && p[1] < 0x90) return 0;  /* overlong */
    if (n == 4 && p[0] == 0xf4 && p[1] >= 0x90) return 0; /* > U+10FFFF */
    return n;
}

/* Appends s escaped for a DOT double-quoted label: \" and \\ escaped, newline as \n, other control
 * characters as spaces, invalid UTF-8 bytes as '?' (Graphviz expects UTF-8). */
static void dw_text(hsdag_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            hsdag_buf_append(b, esc, 2);
            p++;
        } else if (*p == '\n') {
            hsdag_buf_append(b, "\\n", 2);
            p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            hsdag_buf_append(b, " ", 1);
            p++;
        } else {
            int n = dw_utf8_len(p);
            if (n == 0) {
                hsdag_buf_append(b, "?", 1);
                p++;
            } else {
                hsdag_buf_append(b, (const char *)p, (size_t)n);
                p += n;
            }
        }
    }
}

/* "512 B", "1.50 KiB", "12.3 MiB", "802 GiB"; three significant digits at most. */
static void dw_bytes(char *out, size_t cap, double x)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (x >= 1024 && u < 6) {
        x /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%.0f B", x);
    else if (x < 10)
        snprintf(out, cap, "%.2f %s", x, unit[u]);
    else if (x < 100)
        snprintf(out, cap, "%.1f %s", x, unit[u]);
    else
        snprintf(out, cap, "%.0f %s", x, unit[u]);
}

static void dw_legend(const int32_t *device, const char *const *device_names, int32_t n_devices,
                      const hsdag_graph *g, hsdag_buf *b)
{
    int unplaced = 0;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (device[v] < 0 || device[v] >= n_devices) unplaced = 1;
    hsdag_buf_printf(b, "  subgraph cluster_legend {\n    label=\"devices\"; style=dashed; fontsize=10;\n");
    for (int32_t d = 0; d < n_devices; d++) {
        hsdag_buf_printf(b, "    legend%d [label=\"", d);
        if (device_names && device_names[d])
            dw_text(b, device_names[d]);
        else
            hsdag_buf_printf(b, "device %d", d);
        hsdag_buf_printf(b, "\", fillcolor=\"%s\"];\n", dw_palette[d % DW_NPAL]);
    }
    if (unplaced)
        hsdag_buf_printf(b, "    legend_unplaced [label=\"unplaced\", fillcolor=\"%s\"];\n", DW_UNPLACED);
    /* invisible chain keeps the legend in one column */
    for (int32_t d = 0; d + 1 < n_devices; d++)
        hsdag_buf_printf(b, "    legend%d -> legend%d [style=invis];\n", d, d + 1);
    hsdag_buf_printf(b, "  }\n");
}

int hsdag_dot_write(hsdag_buf *out, const hsdag_graph *g, const int32_t *device,
                    const char *const *device_names, int32_t n_devices)
{
    if (device && n_devices < 0) return HSDAG_EINVAL;
    hsdag_buf_printf(out, "digraph hsdag {\n  graph [fontname=\"Helvetica\", label=\"");
    if (g->meta.name && *g->meta.name) {
        dw_text(out, g->meta.name);
        hsdag_buf_append(out, ": ", 2);
    }
    hsdag_buf_printf(out, "%d nodes, %d edges\", labelloc=t];\n", g->n_nodes, g->n_edges);
    hsdag_buf_printf(out,
                     "  node [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", fontname=\"Helvetica\", "
                     "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
                     DW_UNPLACED);
    if (device) dw_legend(device, device_names, n_devices, g, out);
    for (int32_t v = 0; v < g->n_nodes; v++) {
        hsdag_buf_printf(out, "  n%d [label=\"", v);
        dw_text(out, g->name[v]);
        hsdag_buf_append(out, "\\n", 2);
        dw_text(out, g->op[v]);
        hsdag_buf_append(out, "\"", 1);
        if (device && device[v] >= 0 && device[v] < n_devices)
            hsdag_buf_printf(out, ", fillcolor=\"%s\"", dw_palette[device[v] % DW_NPAL]);
        hsdag_buf_printf(out, "];\n");
    }
    for (int32_t k = 0; k < g->n_edges; k++) {
        hsdag_buf_printf(out, "  n%d -> n%d", g->edge_src[k], g->out_dst[k]);
        if (isfinite(g->edge_bytes[k]) && g->edge_bytes[k] > 0) {
            char lab[32];
            dw_bytes(lab, sizeof lab, g->edge_bytes[k]);
            hsdag_buf_printf(out, " [label=\"%s\"]", lab);
        }
        hsdag_buf_printf(out, ";\n");
    }
    hsdag_buf_printf(out, "}\n");
    return out->oom ? HSDAG_ENOMEM : 0;
}
