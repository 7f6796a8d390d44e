/* fuzz_pacml_policy.c - libFuzzer target for the PAC-ML policy file parser (hsdag_pacml_policy_parse),
 *   through the wire codec (frames, bounds-checked gets, both versions).
 * Not here: checks of the network's numbers (test_pacml.c); the jobs are the five built-in PAC-ML graphs.
 * Entry point: LLVMFuzzerTestOneInput. Seeds: fuzz/corpus/pacml_policy/ (a version-1 and a version-2 file).
 */
#include "hsdag/cluster.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static hsdag_cluster *env;
    static hsdag_pacml_env pe;
    hsdag_err e = {0};
    if (!env) {
        hsdag_cluster_config c = hsdag_cluster_config_default();
        c.horizon = 1000;
        if (hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e) < 0) return 0;
        hsdag_cluster_pacml_env(&pe, env);
    }
    hsdag_pacml_net *n = NULL;
    char beta = 0;
    int tuf = 0;
    if (hsdag_pacml_policy_parse(&n, pe.jobs, pe.n_jobs, data, size, "fuzz", &beta, &tuf, &e) == 0) {
        /* an accepted policy writes a version-2 image that parses again */
        hsdag_buf b = {0};
        HSDAG_ASSERT(hsdag_pacml_policy_save(n, beta, tuf, 1.0f, &b, &e) == 0);
        hsdag_pacml_net *m = NULL;
        HSDAG_ASSERT(
            hsdag_pacml_policy_parse(&m, pe.jobs, pe.n_jobs, b.data, b.len, "again", NULL, NULL, &e) == 0);
        hsdag_pacml_net_free(m);
        hsdag_buf_free(&b);
    } else {
        HSDAG_ASSERT(n == NULL && e.msg[0] && !strchr(e.msg, '\n'));
    }
    hsdag_pacml_net_free(n);
    return 0;
}
