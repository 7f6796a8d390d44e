/* trace.c - writes the last simulated schedule as Chrome/Perfetto trace JSON (one track per device and per
 * link
 * resource, complete "X" events in microseconds).
 * Not here: simulation (sim.c); this only formats what a run recorded with record_trace = 1.
 * Entry points: hsdag_sim_trace_write.
 */
#include "sim_internal.h"

static void tr_meta(hsdag_buf *b, int32_t tid, const char *name, int32_t sort)
{
    hsdag_buf_printf(
        b, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":", (int)tid);
    hsdag_buf_json_str(b, name);
    hsdag_buf_printf(b,
                     "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{"
                     "\"sort_index\":%d}}",
                     (int)tid, (int)sort);
}

static void tr_slice(hsdag_buf *b, int32_t tid, double t0, double t1)
{
    hsdag_buf_printf(b, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":", (int)tid);
    hsdag_buf_double(b, t0 * 1e6);
    hsdag_buf_printf(b, ",\"dur\":");
    hsdag_buf_double(b, (t1 - t0) * 1e6);
}

int hsdag_sim_trace_write(const hsdag_sim *s, hsdag_buf *b, hsdag_err *e)
{
    if (!s->record)
        return hsdag_err_set(e, HSDAG_EINVAL, "trace: the simulator was created without record_trace");
    if (!s->have_run) return hsdag_err_set(e, HSDAG_EINVAL, "trace: nothing simulated yet");
    const hsdag_graph *g = s->g;
    const hsdag_devices *d = s->devs;
    hsdag_buf_printf(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"semantics\":\"%s\",\"devices\":",
                     hsdag_semantics_name(s->ran));
    hsdag_buf_json_str(b, d->name);
    hsdag_buf_printf(
        b,
        "},\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"hsdag "
        "simulate (%s)\"}}",
        hsdag_semantics_name(s->ran));
    for (int32_t i = 0; i < d->n; i++) tr_meta(b, i, d->dev[i].name, i);
    for (int32_t r = 0; r < d->n_resources; r++) {
        char nm[512];
        snprintf(nm, sizeof nm, "link %s", d->resource_name[r]);
        tr_meta(b, d->n + r, nm, d->n + r);
    }
    /* ops: in start order is not needed by viewers; index order keeps the output deterministic */
    for (int32_t v = 0; v < g->n_nodes; v++) {
        int32_t dv = s->tr_dev[v];
        double t0 = s->st[v], t1 = s->ran == HSDAG_SEM_TARNAWSKI && !s->is_cpu[dv]
                                       ? t0 + s->costs->node_s[(size_t)v * s->D + dv]
                                       : s->fin[v];
        hsdag_buf_printf(b, ",\n{\"name\":");
        hsdag_buf_json_str(b, g->name[v]);
        hsdag_buf_printf(b, ",\"cat\":\"op\"");
        tr_slice(b, dv, t0, t1);
        hsdag_buf_printf(b, ",\"args\":{\"op\":");
        hsdag_buf_json_str(b, g->op[v]);
        hsdag_buf_printf(b, ",\"index\":%d}}", (int)v);
    }
    for (int32_t i = 0; i < s->n_tx; i++) {
        int32_t src = s->tx_src[i], dst = s->tx_dst[i], node = s->tx_node[i];
        int32_t res = src != dst ? s->res_of[src * s->D + dst] : -1;
        int32_t tid = res >= 0 ? d->n + res : dst;
        char nm[600];
        if (node >= 0)
            snprintf(nm, sizeof nm, "%.300s -> %.100s", g->name[node], d->dev[dst].name);
        else
            snprintf(nm, sizeof nm, "block %d %s", (int)(-1 - node),
                     src == dst || s->is_cpu[dst] ? "out" : "in");
        hsdag_buf_printf(b, ",\n{\"name\":");
        hsdag_buf_json_str(b, nm);
        hsdag_buf_printf(b, ",\"cat\":\"transfer\"");
        tr_slice(b, tid, s->tx_start[i], s->tx_end[i]);
        hsdag_buf_printf(b, ",\"args\":{\"from\":");
        hsdag_buf_json_str(b, d->dev[src].name);
        hsdag_buf_printf(b, ",\"to\":");
        hsdag_buf_json_str(b, d->dev[dst].name);
        hsdag_buf_printf(b, "}}");
    }
    hsdag_buf_printf(b, "\n]}\n");
    return b->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "trace: out of memory") : 0;
}
