/* sim_internal.h - the simulator's private state and per-run setup, shared by sim.c (set-up, dispatch),
 *   sim_sequential.c, sim_concurrent.c, sim_tarnawski.c (the three semantics) and trace.c.
 * Not here: anything public; include/hsdag/sim.h is the API.
 * Entry points: struct hsdag_sim, the trace record layout, sim_run_* and sim_trace_xfer.
 */
#ifndef HSDAG_SIM_INTERNAL_H
#define HSDAG_SIM_INTERNAL_H

#include "hsdag/sim.h"

/* One pending event of the concurrent simulator: ordered by (t, seq). who >= 0: op `who` finished;
 * who < 0: the transfer in slot -who-1 (an edge id) finished. */
typedef struct sim_event {
    double t;
    uint64_t seq;
    int32_t who;
} sim_event;

/* What the sequential loop reads per node, packed into one 32-byte record (fewer pointers, one cache line
 * per two nodes). Copies of the cost table's act_bytes, xfer_bytes and static_bytes and of the out-CSR. */
typedef struct sim_node {
    double act, xby, stat;
    int32_t out_begin, out_end;
} sim_node;

/* Invariants: every array is sized at create time and never reallocated; V, E, D, R are the graph's node and
 * edge counts, the number of devices and of link resources. Per-run arrays hold garbage between runs. */
struct hsdag_sim {
    const hsdag_graph *g;
    const hsdag_devices *devs;
    hsdag_costs *costs;
    hsdag_semantics sem;
    hsdag_priority prio;
    int record;
    int32_t V, E, D, R;
    hsdag_arena *arena;

    /* set up once */
    int32_t *prio_rank; /* [V] position in the priority order, smaller runs first */
    int32_t *prio_node; /* [V] inverse of prio_rank */
    int32_t *color_id;  /* [V] dense colour class, -1 if none */
    int32_t n_colors;
    int32_t *res_of; /* [D*D] link resource of a -> b, -1 on the diagonal */
    uint8_t *is_cpu; /* [D] */
    int32_t host;    /* first CPU device, -1 if none (tarnawski communication goes through it) */
    int all_allowed; /* every op may run on every device: no need to count unsupported ops */

    /* per run: results */
    double *busy, *peak, *excess; /* [D] */
    double *live, *static_sum;    /* [D] live activation bytes, resident static bytes */
    double *act_peak;             /* [D] */
    double *fin, *st;             /* [V] finish and start times */
    const int32_t *dev;           /* the placement of the current run (borrowed during the run) */

    /* per run: memory reference counts */
    int32_t *own_ref;  /* [V] readers left of a node's own output on its device */
    int32_t *copy_ref; /* [E] readers left of the copy whose slot is this edge id */
    /* [E] slot (edge id of the first edge from the source to that device), -1 if local */
    int32_t *slot_of_edge;
    int32_t *slot_first;         /* [D] scratch */
    int32_t *slot_stamp;         /* [D] scratch */
    int32_t *first_on, *last_on; /* [D] first and last node index on each device, -1 if none (the sequential
                                  * run borrows them as scratch) */
    sim_node *nodes;             /* [V] */
    double
        *free_at; /* [V] sequential: bytes node v frees on its device once it has run (zero between runs) */
    double acc_xs, acc_xb; /* sequential: copy seconds and bytes so far */
    int64_t acc_nx;
    int32_t *color_dev; /* [n_colors] */
    uint8_t *color_bad; /* [n_colors] */

    /* per run: concurrent */
    int32_t *pend;    /* [V] unsatisfied in-edges */
    int32_t *indeg;   /* [V] in-degree (set up once: pend's initial value) */
    int32_t *sources; /* [n_sources] nodes without inputs, in index order (set up once) */
    int32_t n_sources;
    uint64_t *rq_bits;     /* [D * rq_words] ready sets: a hierarchical bitset of priority ranks per device */
    int64_t rq_words;      /* words per device */
    int32_t rq_levels;     /* levels (V <= 64^rq_levels) */
    int32_t rq_lvl_off[8]; /* word offset of each level within a device's bitset */
    sim_event *ev;         /* [D + R + 1] pending events, sorted from the latest to the next (sim.c) */
    int32_t *xq_next;      /* [E] FIFO links of queued transfers (by slot) */
    int32_t *xq_head, *xq_tail; /* [R] */
    uint8_t *res_busy;          /* [R] */

    /* per run: tarnawski */
    int32_t *dp; /* [V] */
    /* [V] unit of a node in the contracted graph: itself on a CPU, V + block on an accelerator */
    int32_t *unit;
    int32_t *udeg; /* [3V] in-degree of units (V nodes + up to 2V blocks) in the contracted graph */
    int32_t *blk_start, *blk_end; /* [2V] block b's members are blk_nodes[blk_start[b] .. blk_end[b]) */
    int32_t *blk_nodes;           /* [V] */
    int32_t *blk_dev;             /* [2V] */
    int32_t *queue;               /* [3V] */
    uint8_t *done;                /* [V] */
    uint32_t *mark;               /* [V] */
    uint32_t gen;

    /* trace records (record == 1) */
    int32_t *tr_dev; /* [V] copy of the placement */
    int32_t n_tx, cap_tx;
    double *tx_start, *tx_end;          /* [cap_tx] */
    int32_t *tx_node, *tx_src, *tx_dst; /* [cap_tx] node (or -1-block for tarnawski aggregates), devices */
    int have_run;
    hsdag_semantics ran;
};

#if defined(__GNUC__)
#define SIM_COLD __attribute__((noinline, cold))
#define SIM_INLINE static inline __attribute__((always_inline))
#define SIM_NOINLINE __attribute__((noinline))
#else
#define SIM_COLD
#define SIM_INLINE static inline
#define SIM_NOINLINE
#endif

/* ---- the per-run setup the semantics share (sim.c) ---- */
/* Checks every device index and resets the per-device state, then sim_run_bind. 0 or HSDAG_EINVAL. */
int sim_run_reset(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r);
/* Clears the result and binds the placement to the run (the trace's copy). */
void sim_run_bind(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r);
/* Unsupported ops, split colour classes, accelerators used (used = bit set of the devices holding ops). */
void sim_run_tally(hsdag_sim *s, const int32_t *dev, uint64_t used, hsdag_sim_result *r);
/* Peaks, excess over capacity, feasibility. */
void sim_run_finish(hsdag_sim *s, hsdag_sim_result *r, int with_acts);

/* A transfer for the trace (record == 1; silently dropped past the capacity). */
static inline void sim_trace_xfer(hsdag_sim *s, double t0, double t1, int32_t node, int32_t src, int32_t dst)
{
    if (!s->record || s->n_tx >= s->cap_tx) return;
    int32_t i = s->n_tx++;
    s->tx_start[i] = t0;
    s->tx_end[i] = t1;
    s->tx_node[i] = node;
    s->tx_src[i] = src;
    s->tx_dst[i] = dst;
}

/* ---- the semantics: each fills r (after its own prepass or sim_run_reset); hsdag_sim_run finishes ---- */
void sim_run_sequential(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r);
int sim_run_concurrent(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r);
int sim_run_tarnawski(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r);

#endif
