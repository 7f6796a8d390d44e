/* cbc.c - solves a MILP built as a GLPK problem with COIN-OR CBC instead (when the build found CBC with
 *         pkg-config): the model is copied column by column, warm-started, time-limited in wall time.
 * Not here: any model (ilp_tw.c builds it), GLPK's own solve (ilp.c, place_ilp_solve).
 * Entry points: place_cbc_available, place_cbc_solve (place_int.h).
 *
 * CBC's branch-and-cut (Gomory, MIR, knapsack, clique cuts, strong branching, its own primal heuristics)
 * proves much smaller gaps than GLPK's on the tarnawski latency model, and its dual simplex (Clp) solves the
 * LP relaxations GLPK's primal simplex does not finish within a minute. */
#include "place_int.h"

#include <float.h>
#include <glpk.h>

#ifdef HSDAG_HAVE_CBC
#include <Cbc_C_Interface.h>
#include <stdio.h>

int place_cbc_available(void)
{
    return 1;
}

/* Column j's bounds and the row bounds of GLPK's types as CBC's [lo, hi] (DBL_MAX = none). */
static void cbc_bounds(int type, double lb, double ub, double *lo, double *hi)
{
    *lo = type == GLP_FR || type == GLP_UP ? -DBL_MAX : lb;
    *hi = type == GLP_FR || type == GLP_LO ? DBL_MAX : type == GLP_FX ? lb : ub;
}

/* The copy: CBC wants the matrix by columns (0-based), with bounds and the objective. */
static Cbc_Model *cbc_load(glp_prob *lp)
{
    int rows = glp_get_num_rows(lp), cols = glp_get_num_cols(lp), nnz = glp_get_num_nz(lp);
    int *start = hsdag_malloc((size_t)(cols + 1) * sizeof *start);
    int *index = hsdag_malloc((size_t)(nnz + 1) * sizeof *index);
    double *value = hsdag_malloc((size_t)(nnz + 1) * sizeof *value);
    double *cl = hsdag_malloc((size_t)(cols + 1) * sizeof *cl),
           *cu = hsdag_malloc((size_t)(cols + 1) * sizeof *cu);
    double *obj = hsdag_malloc((size_t)(cols + 1) * sizeof *obj);
    double *rl = hsdag_malloc((size_t)(rows + 1) * sizeof *rl),
           *ru = hsdag_malloc((size_t)(rows + 1) * sizeof *ru);
    Cbc_Model *cm = NULL;
    if (!start || !index || !value || !cl || !cu || !obj || !rl || !ru) goto done;
    int k = 0;
    for (int j = 1; j <= cols; j++) {
        start[j - 1] = k;
        int len = glp_get_mat_col(lp, j, index + k - 1, value + k - 1); /* GLPK writes [1..len] */
        for (int i = 0; i < len; i++) index[k + i] -= 1;
        k += len;
        cbc_bounds(glp_get_col_type(lp, j), glp_get_col_lb(lp, j), glp_get_col_ub(lp, j), &cl[j - 1],
                   &cu[j - 1]);
        obj[j - 1] = glp_get_obj_coef(lp, j);
    }
    start[cols] = k;
    for (int i = 1; i <= rows; i++)
        cbc_bounds(glp_get_row_type(lp, i), glp_get_row_lb(lp, i), glp_get_row_ub(lp, i), &rl[i - 1],
                   &ru[i - 1]);
    cm = Cbc_newModel();
    Cbc_loadProblem(cm, cols, rows, start, index, value, cl, cu, obj, rl, ru);
    Cbc_setObjSense(cm, glp_get_obj_dir(lp) == GLP_MAX ? -1 : 1);
    for (int j = 1; j <= cols; j++)
        if (glp_get_col_kind(lp, j) != GLP_CV) Cbc_setInteger(cm, j - 1);
done:
    hsdag_free(start), hsdag_free(index), hsdag_free(value), hsdag_free(cl), hsdag_free(cu);
    hsdag_free(obj), hsdag_free(rl), hsdag_free(ru);
    return cm;
}

int place_cbc_solve(glp_prob *lp, double deadline, const double *heur, double *x, place_ilp_run *out)
{
    memset(out, 0, sizeof *out);
    out->ir = -1;
    out->mip_status = GLP_UNDEF;
    out->obj = out->bound = NAN;
    int cols = glp_get_num_cols(lp);
    Cbc_Model *cm = cbc_load(lp);
    if (!cm) return HSDAG_ENOMEM;
    double c0 = glp_get_obj_coef(lp, 0), left = deadline - hsdag_now();
    char sec[32];
    snprintf(sec, sizeof sec, "%.3f", left > 0.1 ? left : 0.1);
    Cbc_setLogLevel(cm, 0);
    Cbc_setParameter(cm, "timeMode", "elapsed");
    Cbc_setParameter(cm, "seconds", sec);
    if (heur) {
        int *idx = hsdag_malloc((size_t)(cols + 1) * sizeof *idx);
        if (idx) {
            for (int j = 0; j < cols; j++) idx[j] = j;
            Cbc_setMIPStartI(cm, cols, idx, heur + 1);
            hsdag_free(idx);
        }
    }
    out->ir = Cbc_solve(cm);
    double bound = Cbc_getBestPossibleObjValue(cm);
    out->lp_ok = isfinite(bound) && fabs(bound) < 1e30;
    out->lp_status = out->lp_ok ? GLP_OPT : GLP_UNDEF;
    const double *sol = Cbc_bestSolution(cm);
    int optimal = Cbc_isProvenOptimal(cm);
    if (sol) {
        out->obj = Cbc_getObjValue(cm) + c0;
        memcpy(x + 1, sol, (size_t)cols * sizeof *x);
        out->mip_status = optimal ? GLP_OPT : GLP_FEAS;
    }
    out->ir = optimal ? 0 : GLP_ETMLIM;
    out->bound = optimal && sol ? out->obj : bound + c0;
    Cbc_deleteModel(cm);
    return 0;
}
#else
int place_cbc_available(void)
{
    return 0;
}

int place_cbc_solve(glp_prob *lp, double deadline, const double *heur, double *x, place_ilp_run *out)
{
    (void)lp, (void)deadline, (void)heur, (void)x, (void)out;
    return HSDAG_EUNSUPPORTED;
}
#endif
