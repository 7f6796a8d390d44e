/* constw.c - attributes the bytes of constant nodes (weights) to the nodes that consume them.
 * Not here: parsing or graph building; shared by the OpenVINO IR and NNCF DOT readers (see constw.h).
 * Entry points: hsdag_constw_attribute.
 */
#include "constw.h"

#include <string.h>

int hsdag_constw_attribute(int32_t n, int32_t m, const int32_t *src, const int32_t *dst,
                           const uint8_t *is_const, const double *bytes, uint8_t *const_valued, double *param)
{
    int rc = HSDAG_ENOMEM;
    int32_t *in_off = NULL, *in_src = NULL, *out_off = NULL, *out_dst = NULL, *fill = NULL;
    int32_t *queue = NULL, *stack = NULL, *pending = NULL;
    uint8_t *seen = NULL;
    if (n <= 0) return 0;
    in_off = hsdag_calloc((size_t)n + 1, sizeof *in_off);
    out_off = hsdag_calloc((size_t)n + 1, sizeof *out_off);
    fill = hsdag_calloc((size_t)n + 1, sizeof *fill);
    in_src = hsdag_malloc(((size_t)m + 1) * sizeof *in_src);
    out_dst = hsdag_malloc(((size_t)m + 1) * sizeof *out_dst);
    queue = hsdag_malloc((size_t)n * sizeof *queue);
    stack = hsdag_malloc((size_t)n * sizeof *stack);
    pending = hsdag_malloc((size_t)n * sizeof *pending);
    seen = hsdag_calloc((size_t)n, 1);
    if (!in_off || !out_off || !fill || !in_src || !out_dst || !queue || !stack || !pending || !seen)
        goto fail;

    /* ---- CSR both ways over the valid edges ---- */
    for (int32_t k = 0; k < m; k++) {
        if (src[k] < 0 || src[k] >= n || dst[k] < 0 || dst[k] >= n) continue;
        in_off[dst[k] + 1]++;
        out_off[src[k] + 1]++;
    }
    for (int32_t v = 0; v < n; v++) {
        in_off[v + 1] += in_off[v];
        out_off[v + 1] += out_off[v];
    }
    for (int32_t k = 0; k < m; k++) {
        if (src[k] < 0 || src[k] >= n || dst[k] < 0 || dst[k] >= n) continue;
        in_src[in_off[dst[k]] + fill[dst[k]]++] = src[k];
    }
    memset(fill, 0, ((size_t)n + 1) * sizeof *fill);
    for (int32_t k = 0; k < m; k++) {
        if (src[k] < 0 || src[k] >= n || dst[k] < 0 || dst[k] >= n) continue;
        out_dst[out_off[src[k]] + fill[src[k]]++] = dst[k];
    }

    /* ---- constant-valued: Kahn order, a node is decided once all its inputs are ---- */
    int32_t qh = 0, qt = 0;
    for (int32_t v = 0; v < n; v++) {
        pending[v] = in_off[v + 1] - in_off[v];
        const_valued[v] = is_const[v] ? 1 : 0;
        if (pending[v] == 0) queue[qt++] = v;
    }
    while (qh < qt) {
        int32_t v = queue[qh++];
        if (!is_const[v] && in_off[v + 1] > in_off[v]) {
            uint8_t all = 1;
            for (int32_t k = in_off[v]; k < in_off[v + 1]; k++)
                if (!const_valued[in_src[k]]) all = 0;
            const_valued[v] = all;
        }
        for (int32_t k = out_off[v]; k < out_off[v + 1]; k++)
            if (--pending[out_dst[k]] == 0) queue[qt++] = out_dst[k];
    }

    /* ---- attribution: each constant source once, to the first consumer that reaches it ---- */
    for (int32_t v = 0; v < n; v++) {
        if (const_valued[v]) continue;
        for (int32_t k = in_off[v]; k < in_off[v + 1]; k++) {
            int32_t u = in_src[k], sp = 0;
            if (!const_valued[u] || seen[u]) continue;
            seen[u] = 1;
            stack[sp++] = u;
            while (sp > 0) {
                int32_t w = stack[--sp];
                if (is_const[w]) param[v] += bytes[w];
                for (int32_t j = in_off[w]; j < in_off[w + 1]; j++) {
                    int32_t x = in_src[j];
                    if (const_valued[x] && !seen[x]) {
                        seen[x] = 1;
                        stack[sp++] = x;
                    }
                }
            }
        }
    }
    rc = 0;
fail:
    hsdag_free(in_off);
    hsdag_free(out_off);
    hsdag_free(fill);
    hsdag_free(in_src);
    hsdag_free(out_dst);
    hsdag_free(queue);
    hsdag_free(stack);
    hsdag_free(pending);
    hsdag_free(seen);
    return rc;
}
