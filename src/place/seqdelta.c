/* seqdelta.c - the sequential latency move by move: the change a move makes to hsdag_place_sequential_cost
 *              (= the sequential simulator's latency), from the moved nodes and their producers only.
 * Not here: memory (the peak of live activations is not local: the callers confirm with a full simulation).
 * Entry points: place_seqdelta_init/reset/delta/commit/free (place_int.h). */
#include "place_int.h"

int place_seqdelta_init(place_seqdelta *sd, const hsdag_costs *c)
{
    size_t n1 = (size_t)(c->g->n_nodes > 0 ? c->g->n_nodes : 1);
    *sd = (place_seqdelta){.c = c};
    sd->term = hsdag_malloc(n1 * sizeof *sd->term);
    sd->fresh = hsdag_malloc(n1 * sizeof *sd->fresh);
    sd->aff = hsdag_malloc(n1 * sizeof *sd->aff);
    sd->stamp = hsdag_calloc(n1, sizeof *sd->stamp);
    if (!sd->term || !sd->fresh || !sd->aff || !sd->stamp) {
        place_seqdelta_free(sd);
        return HSDAG_ENOMEM;
    }
    return 0;
}

void place_seqdelta_reset(place_seqdelta *sd, const int32_t *device)
{
    for (int32_t u = 0; u < sd->c->g->n_nodes; u++) sd->term[u] = place_seq_add(sd->c, device, u, 0.0);
    sd->naff = 0;
}

/* Lists u in aff once per delta, with its term under device. */
static void sd_touch(place_seqdelta *sd, const int32_t *device, int32_t u)
{
    if (sd->stamp[u] == sd->epoch) return;
    sd->stamp[u] = sd->epoch;
    sd->fresh[sd->naff] = place_seq_add(sd->c, device, u, 0.0);
    sd->aff[sd->naff++] = u;
}

double place_seqdelta_delta(place_seqdelta *sd, const int32_t *device, const int32_t *moved, int32_t nmoved)
{
    const hsdag_graph *g = sd->c->g;
    if (++sd->epoch == 0) { /* wrapped: no stamp may look current */
        memset(sd->stamp, 0, (size_t)g->n_nodes * sizeof *sd->stamp);
        sd->epoch = 1;
    }
    sd->naff = 0;
    for (int32_t i = 0; i < nmoved; i++) {
        int32_t v = moved[i];
        sd_touch(sd, device, v);
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) sd_touch(sd, device, g->in_src[k]);
    }
    double d = 0;
    for (int32_t i = 0; i < sd->naff; i++) d += sd->fresh[i] - sd->term[sd->aff[i]];
    return d;
}

void place_seqdelta_commit(place_seqdelta *sd)
{
    for (int32_t i = 0; i < sd->naff; i++) sd->term[sd->aff[i]] = sd->fresh[i];
    sd->naff = 0;
}

void place_seqdelta_free(place_seqdelta *sd)
{
    hsdag_free(sd->term);
    hsdag_free(sd->fresh);
    hsdag_free(sd->aff);
    hsdag_free(sd->stamp);
    *sd = (place_seqdelta){0};
}
