/* glpk.c - the one place the placers call GLPK through: its error hook (an internal GLPK error becomes
 * HSDAG_ESOLVER instead of abort()), its terminal output (captured, never printed) and a check of every
 * model's numbers before a solve.
 * Not here: any model (list.c's m-SCT LP, ilp.c's and ilp_conc.c's MILPs build their own).
 * Entry points: place_glpk_call, place_glpk_prepare (place_int.h).
 *
 * GLPK reports a broken invariant (an assertion, "invalid scale factor", ...) through glp_error, which
 * prints and calls abort(). Its documented way out is a hook that longjmps back to the caller, after
 * which glp_free_env releases every GLPK object (so no glp_prob of the failed call may be touched again).
 * place_glpk_call therefore runs the whole GLPK part of a placer as one callback, whose own memory
 * belongs to the caller's context, not to the callback's frame. */
#include "place_int.h"

#include <glpk.h>
#include <setjmp.h>

typedef struct glpk_guard {
    jmp_buf jb;
    char line[160], prev[160]; /* the line being printed, the last complete one */
    size_t len;
    int active;
} glpk_guard;
static _Thread_local glpk_guard guard;

/* GLPK's terminal output: never printed; the last complete line is kept, since glp_error prints the
 * failure ("glp_add_cols: ncs = -1; invalid ...", "Assertion failed: x[j] > 0.0") just before it calls the
 * hook, on the line before "Error detected in file ...". Control characters become blanks. */
static int glpk_term(void *info, const char *s)
{
    (void)info;
    for (; *s; s++) {
        if (*s == '\n') {
            guard.line[guard.len] = 0;
            if (strncmp(guard.line, "Error detected in file", 22) != 0)
                memcpy(guard.prev, guard.line, guard.len + 1);
            guard.len = 0;
        } else if (guard.len + 1 < sizeof guard.line) {
            guard.line[guard.len++] = (unsigned char)*s < 0x20 ? ' ' : *s;
        }
    }
    return 1; /* suppress */
}

static void glpk_error(void *info)
{
    (void)info;
    longjmp(guard.jb, 1);
}

int place_glpk_call(int (*fn)(void *ctx, hsdag_err *e), void *ctx, const char *who, hsdag_err *e)
{
    HSDAG_ASSERT(!guard.active); /* a failure frees every GLPK object: calls must not nest */
    guard.active = 1;
    guard.len = 0;
    guard.prev[0] = 0;
    glp_term_hook(glpk_term, NULL);
    glp_error_hook(glpk_error, NULL);
    int rc;
    if (setjmp(guard.jb) == 0) {
        rc = fn(ctx, e);
        glp_error_hook(NULL, NULL);
        glp_term_hook(NULL, NULL);
    } else {
        glp_free_env(); /* every object of the failed call, and the hooks, are gone */
        rc = hsdag_err_set(e, HSDAG_ESOLVER, "%s: GLPK failed internally (%s)", who,
                           guard.prev[0] ? guard.prev : "no message");
    }
    guard.active = 0;
    return rc;
}

/* Magnitudes GLPK handles: model numbers are in ms (times) or fractions of a capacity, and a time is at
 * most HSDAG_PLACE_MAX_S. Values below the floor (a femtosecond) are rounded to 0, since scaling a row
 * with 1e-300 next to 1 underflows GLPK's scale factor ("invalid scale factor"). */
#define GLPK_MAX 1e17
#define GLPK_FLOOR 1e-12

static int glpk_num(double *x, const char *who, const char *what, int at, hsdag_err *e)
{
    if (!isfinite(*x) || fabs(*x) > GLPK_MAX)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %s %d of the model is %.6g, beyond what GLPK can scale",
                             who, what, at, *x);
    if (fabs(*x) < GLPK_FLOOR) *x = 0;
    return 0;
}

int place_glpk_prepare(glp_prob *lp, const char *who, hsdag_err *e)
{
    int rows = glp_get_num_rows(lp), cols = glp_get_num_cols(lp), rc = 0;
    /* GLPK's own allocator: on a failure inside the call, glp_free_env releases these too */
    int *ind = glp_alloc(cols + 1, sizeof *ind);
    double *val = glp_alloc(cols + 1, sizeof *val);
    for (int i = 1; i <= rows; i++) {
        int t = glp_get_row_type(lp, i);
        double lb = glp_get_row_lb(lp, i), ub = glp_get_row_ub(lp, i);
        if (t != GLP_FR) {
            if ((t == GLP_LO || t == GLP_DB || t == GLP_FX) &&
                (rc = glpk_num(&lb, who, "row bound", i, e)) < 0)
                goto done;
            if ((t == GLP_UP || t == GLP_DB || t == GLP_FX) &&
                (rc = glpk_num(&ub, who, "row bound", i, e)) < 0)
                goto done;
            glp_set_row_bnds(lp, i, t, lb, t == GLP_FX ? lb : ub);
        }
        int len = glp_get_mat_row(lp, i, ind, val), keep = 0;
        for (int k = 1; k <= len; k++) {
            if ((rc = glpk_num(&val[k], who, "coefficient in row", i, e)) < 0) goto done;
            if (val[k] != 0) ind[++keep] = ind[k], val[keep] = val[k];
        }
        if (keep < len) glp_set_mat_row(lp, i, keep, ind, val);
    }
    for (int j = 1; j <= cols; j++) {
        int t = glp_get_col_type(lp, j);
        double lb = glp_get_col_lb(lp, j), ub = glp_get_col_ub(lp, j), c = glp_get_obj_coef(lp, j);
        if ((t == GLP_LO || t == GLP_DB || t == GLP_FX) &&
            (rc = glpk_num(&lb, who, "column bound", j, e)) < 0)
            goto done;
        if ((t == GLP_UP || t == GLP_DB || t == GLP_FX) &&
            (rc = glpk_num(&ub, who, "column bound", j, e)) < 0)
            goto done;
        if (t != GLP_FR) glp_set_col_bnds(lp, j, t, lb, t == GLP_FX ? lb : ub);
        if ((rc = glpk_num(&c, who, "objective coefficient of column", j, e)) < 0) goto done;
        glp_set_obj_coef(lp, j, c);
    }
done:
    glp_free(ind);
    glp_free(val);
    return rc;
}
