/* oom_sweep.h - the allocation-failure sweep, shared by the tests: make the n-th allocation fail for
 * n = 1, 2, ... and count what a (buffer, length) graph reader, or any operation, answered.
 * Not here: assertions (each test states its own on the counts). Entry points: oom_sweep_run (readers),
 * oom_sweep_call (any operation through a callback). */
#ifndef HSDAG_TEST_OOM_SWEEP_H
#define HSDAG_TEST_OOM_SWEEP_H
#include "hsdag/graph.h"

#include <stdio.h>
#include <string.h>

typedef int (*oom_reader_fn)(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e);

typedef struct oom_sweep {
    int ok;          /* attempts that succeeded */
    int oom;         /* attempts that returned HSDAG_ENOMEM */
    int oom_bad_msg; /* of those: a graph left behind, or a message that is not one line "what: ..." */
    int other;       /* attempts that returned any other status (the first is printed) */
    long first_ok;   /* the failure point of the first success, 0 if none */
} oom_sweep;

/* Runs the reader with allocation n failing for n = 1 .. max_n - 1; stops after the first success when
 * stop_at_ok (then every allocation point of the call has been hit once). */
static inline oom_sweep oom_sweep_run(oom_reader_fn rd, const void *buf, size_t len, const char *what,
                                      long max_n, int stop_at_ok)
{
    oom_sweep s = {0};
    size_t wl = strlen(what);
    for (long n = 1; n < max_n && !(stop_at_ok && s.ok); n++) {
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        hsdag_alloc_fail_after(n);
        int rc = rd(&g, buf, len, what, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0) {
            if (!s.ok++) s.first_ok = n;
        } else if (rc == HSDAG_ENOMEM) {
            s.oom++;
            if (g || strncmp(e.msg, what, wl) != 0 || strncmp(e.msg + wl, ": ", 2) != 0 ||
                strchr(e.msg, '\n'))
                s.oom_bad_msg++;
        } else {
            if (!s.other++) fprintf(stderr, "  allocation %ld failed: got %d (%s)\n", n, rc, e.msg);
        }
        hsdag_graph_free(g);
    }
    return s;
}
/* Any operation: call(ctx, e) runs it once and frees whatever it made, returning its status. ENOMEM must
 * come with a one-line message containing "out of memory" (else oom_bad_msg). Sweeps n = 1 .. max_n - 1,
 * stopping after the first success when stop_at_ok. Leaks on the failure paths show under make asan. */
typedef int (*oom_call_fn)(void *ctx, hsdag_err *e);
static inline oom_sweep oom_sweep_call(oom_call_fn call, void *ctx, long max_n, int stop_at_ok)
{
    oom_sweep s = {0};
    for (long n = 1; n < max_n && !(stop_at_ok && s.ok); n++) {
        hsdag_err e = {0};
        hsdag_alloc_fail_after(n);
        int rc = call(ctx, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0) {
            if (!s.ok++) s.first_ok = n;
        } else if (rc == HSDAG_ENOMEM) {
            s.oom++;
            if (!strstr(e.msg, "out of memory") || strchr(e.msg, '\n')) {
                if (!s.oom_bad_msg++)
                    fprintf(stderr, "  allocation %ld: ENOMEM with message '%s'\n", n, e.msg);
            }
        } else {
            if (!s.other++) fprintf(stderr, "  allocation %ld failed: got %d (%s)\n", n, rc, e.msg);
        }
    }
    return s;
}
#endif
