/* dotwrite.c - Graphviz DOT export of a graph: every op (nodes labelled "name\nop", optionally filled by
 * device with a legend, edges labelled with the bytes they carry), or a placement's coarsened drawing (one
 * box per group of ops on one device, edges summed) that Graphviz lays out in seconds at any size.
 * Not here: reading DOT (dot.c) or running Graphviz; layout is left entirely to Graphviz.
 * Entry points: hsdag_dot_write, hsdag_dot_write_groups. */
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

/* ---- the coarsened drawing ---- */

static int32_t dw_find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Group of every node: connected same-device components when there are at most max_groups of them, else
 * (device, band of longest-path levels) with bands sized so at most max_groups groups exist. Group ids
 * follow the first member in topological order. Returns the group count, -1 on ENOMEM; *banded = 1 for the
 * second kind. */
static int32_t dw_groups(const hsdag_graph *g, const int32_t *device, int32_t n_devices, int32_t max_groups,
                         int32_t *group, int *banded)
{
    int32_t n = g->n_nodes, ng = 0;
    int32_t *tmp = hsdag_malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp) return -1;
    *banded = 0;
    for (int32_t v = 0; v < n; v++) tmp[v] = v;
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t u = g->edge_src[k], v = g->out_dst[k];
        if (device[u] != device[v]) continue;
        int32_t a = dw_find(tmp, u), b = dw_find(tmp, v);
        if (a != b) tmp[a > b ? a : b] = a < b ? a : b; /* the root is the smallest index */
    }
    for (int32_t v = 0; v < n; v++) ng += dw_find(tmp, v) == v;
    if (ng <= max_groups) {
        /* roots are the smallest members, so numbering roots in index order numbers groups by first member */
        ng = 0;
        for (int32_t v = 0; v < n; v++) group[v] = tmp[v] == v ? ng++ : group[dw_find(tmp, v)];
        hsdag_free(tmp);
        return ng;
    }
    *banded = 1;
    int32_t depth = hsdag_graph_levels(g, tmp), used = 0;
    uint64_t seen = 0;
    int unplaced = 0;
    for (int32_t v = 0; v < n; v++) {
        if (device[v] >= 0 && device[v] < n_devices && device[v] < 64) {
            if (!((seen >> device[v]) & 1u)) used++;
            seen |= (uint64_t)1 << device[v];
        } else if (!unplaced) {
            unplaced = 1;
            used++;
        }
    }
    int32_t bands = max_groups / (used ? used : 1);
    if (bands < 1) bands = 1;
    if (bands > depth) bands = depth;
    /* key = band * (n_devices + 1) + device slot; ids by first member */
    size_t nkeys = (size_t)bands * ((size_t)n_devices + 1);
    int32_t *id = hsdag_malloc((nkeys + 1) * sizeof *id);
    if (!id) {
        hsdag_free(tmp);
        return -1;
    }
    for (size_t i = 0; i < nkeys; i++) id[i] = -1;
    ng = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t band = (int32_t)((int64_t)tmp[v] * bands / depth);
        int32_t slot = device[v] >= 0 && device[v] < n_devices ? device[v] : n_devices;
        size_t key = (size_t)band * ((size_t)n_devices + 1) + (size_t)slot;
        if (id[key] < 0) id[key] = ng++;
        group[v] = id[key];
    }
    hsdag_free(id);
    hsdag_free(tmp);
    return ng;
}

/* The name of v shortened to fit a box label. */
static void dw_short(hsdag_buf *b, const char *s)
{
    char cut[40];
    size_t n = strlen(s);
    if (n < sizeof cut) {
        dw_text(b, s);
        return;
    }
    size_t k = sizeof cut - 4;
    while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80) k--; /* do not split a UTF-8 sequence */
    memcpy(cut, s, k);
    memcpy(cut + k, "...", 4);
    dw_text(b, cut);
}

int hsdag_dot_write_groups(hsdag_buf *out, const hsdag_graph *g, const int32_t *device,
                           const char *const *device_names, int32_t n_devices, int32_t max_groups)
{
    if (!device || n_devices < 0 || max_groups < 1) return HSDAG_EINVAL;
    int32_t n = g->n_nodes;
    int32_t *group = hsdag_malloc(((size_t)n + 1) * sizeof *group);
    if (!group) return HSDAG_ENOMEM;
    int banded = 0;
    int32_t ng = dw_groups(g, device, n_devices, max_groups, group, &banded);
    /* per group: first member, last member, count */
    int32_t *first = ng > 0 ? hsdag_malloc((size_t)ng * 3 * sizeof *first) : NULL;
    hsdag_pair *links = hsdag_malloc(((size_t)g->n_edges + 1) * sizeof *links);
    int32_t *tensors = hsdag_malloc(((size_t)g->n_edges + 1) * sizeof *tensors);
    if (ng < 0 || (ng > 0 && !first) || !links || !tensors) {
        hsdag_free(group);
        hsdag_free(first);
        hsdag_free(links);
        hsdag_free(tensors);
        return HSDAG_ENOMEM;
    }
    int32_t *last = first + ng, *count = first + 2 * ng;
    for (int32_t i = 0; i < ng; i++) first[i] = -1, count[i] = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t gi = group[v];
        if (first[gi] < 0) first[gi] = v;
        last[gi] = v;
        count[gi]++;
    }
    hsdag_buf_printf(out, "digraph hsdag {\n  graph [fontname=\"Helvetica\", label=\"");
    if (g->meta.name && *g->meta.name) {
        dw_text(out, g->meta.name);
        hsdag_buf_append(out, ": ", 2);
    }
    /* bounded layout effort (network simplex and crossing minimisation passes, straight edges): a dense
     * group graph, as a random placement gives, otherwise takes Graphviz minutes */
    hsdag_buf_printf(
        out,
        "%d ops in %d groups (%s)\", labelloc=t, rankdir=TB, nslimit=2, nslimit1=2, mclimit=0.2, "
        "remincross=false, splines=line];\n",
        n, ng, banded ? "ops on one device within a band of depth levels" : "connected ops on one device");
    hsdag_buf_printf(out,
                     "  node [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", fontname=\"Helvetica\", "
                     "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
                     DW_UNPLACED);
    dw_legend(device, device_names, n_devices, g, out);
    for (int32_t gi = 0; gi < ng; gi++) {
        int32_t d = device[first[gi]];
        int placed = d >= 0 && d < n_devices;
        hsdag_buf_printf(out, "  g%d [label=\"", gi);
        if (!placed)
            hsdag_buf_printf(out, "unplaced");
        else if (device_names && device_names[d])
            dw_text(out, device_names[d]);
        else
            hsdag_buf_printf(out, "device %d", d);
        hsdag_buf_printf(out, ": %d op%s\\n", count[gi], count[gi] == 1 ? "" : "s");
        dw_short(out, g->name[first[gi]]);
        if (count[gi] > 1) {
            hsdag_buf_append(out, " .. ", 4);
            dw_short(out, g->name[last[gi]]);
        }
        hsdag_buf_append(out, "\"", 1);
        if (placed) hsdag_buf_printf(out, ", fillcolor=\"%s\"", dw_palette[d % DW_NPAL]);
        hsdag_buf_printf(out, "];\n");
    }
    int32_t nl = 0;
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t a = group[g->edge_src[k]], b = group[g->out_dst[k]];
        if (a == b) continue;
        double x = g->edge_bytes[k];
        links[nl++] = (hsdag_pair){a, b, isfinite(x) && x > 0 ? x : 0};
    }
    nl = hsdag_pairs_merge(links, nl, tensors);
    for (int32_t i = 0; i < nl; i++) {
        hsdag_buf_printf(out, "  g%d -> g%d", links[i].a, links[i].b);
        if (links[i].w > 0) {
            char lab[32];
            dw_bytes(lab, sizeof lab, links[i].w);
            hsdag_buf_printf(out, " [label=\"%s%s\"]", lab, tensors[i] > 1 ? " total" : "");
        }
        hsdag_buf_printf(out, ";\n");
    }
    hsdag_buf_printf(out, "}\n");
    hsdag_free(group);
    hsdag_free(first);
    hsdag_free(links);
    hsdag_free(tensors);
    return out->oom ? HSDAG_ENOMEM : 0;
}
