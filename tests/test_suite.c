/* test_suite.c - tests of the benchmark suite reader (hsdag_suite_parse): the grammar, bad lines, allocation
 * failures, and the bundled bench/hard.suite itself (every entry names a model that loads, a best known latency
 * and a HOW of the documented vocabulary, written by scripts/suite-best.py).
 * Not here: running a suite (tests/cli/hard.sh runs compare --suite). Entry points: main. */
#include "check.h"

#include "hsdag/io.h"
#include "hsdag/learn.h"
#include "hsdag/place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse(hsdag_suite **s, const char *text, hsdag_err *e)
{
    return hsdag_suite_parse(s, text, strlen(text), "t.suite", e);
}

static void test_grammar(void)
{
    hsdag_suite *s = NULL;
    hsdag_err e = {0};
    const char *text = "# comment\n\n"
                       "a 2.5 best:heft m.onnx --devices cpu-gpu --mem GPU=50% --mem CPU=1G  # tail\n"
                       "b - - m.json --semantics concurrent --costs roofline\r\n";
    CHECK_EQ_INT(parse(&s, text, &e), 0);
    if (!s) return;
    CHECK_EQ_INT(s->n, 2);
    CHECK_STR(s->entry[0].name, "a");
    CHECK_NEAR(s->entry[0].best_ms, 2.5, 0);
    CHECK_STR(s->entry[0].how, "best:heft");
    CHECK_STR(s->entry[0].model, "m.onnx");
    CHECK_STR(s->entry[0].devices, "cpu-gpu");
    CHECK_EQ_INT(s->entry[0].n_mem, 2);
    CHECK_STR(s->entry[0].mem[1], "CPU=1G");
    CHECK_EQ_INT(s->entry[0].line, 3);
    CHECK(isnan(s->entry[1].best_ms));
    CHECK_STR(s->entry[1].semantics, "concurrent");
    CHECK_STR(s->entry[1].costs, "roofline");
    CHECK(s->entry[1].devices == NULL);
    hsdag_suite_free(s);
}

static void test_bad(void)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "t.suite: no entries"},
        {"# only a comment\n", "t.suite: no entries"},
        {"a 1 x\n", "t.suite:1: expected NAME BEST_MS HOW MODEL"},
        {"a zz x m\n", "t.suite:1: BEST_MS is not a positive number or '-': 'zz'"},
        {"a -3 x m\n", "t.suite:1: BEST_MS is not a positive number or '-': '-3'"},
        {"a 1 x --devices\n", "t.suite:1: MODEL expected"},
        {"a 1 x m --devices\n", "t.suite:1: option without a value"},
        {"a 1 x m --bogus 1\n", "t.suite:1: unknown option '--bogus'"},
        {"a 1 x m\n\na 2 y m\n", "t.suite:3: duplicate name 'a'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hsdag_suite *s = NULL;
        hsdag_err e = {0};
        CHECK_EQ_INT(parse(&s, cases[i].text, &e), HSDAG_EPARSE);
        CHECK(s == NULL);
        if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fprintf(stderr, "case %zu: got \"%s\"\n", i, e.msg);
        CHECK(strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) == 0);
    }
}

static void test_alloc_failures(void)
{
    const char *text = "a 1 x m --mem GPU=1\nb 2 y n --devices cpu-4gpu\n";
    int ok = 0, oom = 0, other = 0;
    for (long n = 1; n < 200 && !ok; n++) {
        hsdag_suite *s = NULL;
        hsdag_err e = {0};
        hsdag_alloc_fail_after(n);
        int rc = parse(&s, text, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0) {
            ok++;
            CHECK_EQ_INT(s->n, 2);
        } else if (rc == HSDAG_ENOMEM) {
            oom++;
            CHECK(s == NULL && strncmp(e.msg, "t.suite: ", 9) == 0);
        } else {
            other++;
        }
        hsdag_suite_free(s);
    }
    CHECK(ok == 1 && oom > 0);
    CHECK_EQ_INT(other, 0);
}

/* HOW is "bound:RULE" with RULE a rule of the lower bound (hsdag_bound.rule), "ilp:optimal", "ilp:gap=X%" or
 * "best:METHOD" with METHOD a placer or a single device. */
static int how_ok(const char *how)
{
    static const char *const rules[] = {"exact",     "sum-min-cost", "critical-path", "work/devices",
                                        "comm-path", "path-blocks",  "mincut-memory", "windows"};
    if (strncmp(how, "bound:", 6) == 0)
        for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
            if (strcmp(how + 6, rules[i]) == 0) return 1;
    if (strcmp(how, "ilp:optimal") == 0) return 1;
    if (strncmp(how, "ilp:gap=", 8) == 0) {
        char *end;
        double g = strtod(how + 8, &end);
        return end != how + 8 && g >= 0 && strcmp(end, "%") == 0;
    }
    if (strncmp(how, "best:", 5) != 0) return 0;
    const char *m = how + 5;
    size_t n = strlen(m);
    return hsdag_place_method_find(m) != NULL || (n > 5 && strcmp(m + n - 5, "-only") == 0);
}

static void test_hard_suite(void)
{
    hsdag_suite *s = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_suite_read_file(&s, "bench/hard.suite", &e), 0);
    if (!s) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK(s->n >= 20);
    for (int32_t i = 0; i < s->n; i++) {
        const hsdag_suite_entry *en = &s->entry[i];
        int good = isfinite(en->best_ms) && en->best_ms > 0 && how_ok(en->how);
        if (!good)
            fprintf(stderr, "bench/hard.suite:%d: %s: best %g, how '%s'\n", en->line, en->name, en->best_ms,
                    en->how);
        CHECK(good);
        FILE *f = fopen(en->model, "rb");
        if (!f) fprintf(stderr, "bench/hard.suite:%d: %s: cannot open %s\n", en->line, en->name, en->model);
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    hsdag_suite_free(s);
}

int main(void)
{
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_learn_register_methods(&e), 0);
    test_grammar();
    test_bad();
    test_alloc_failures();
    test_hard_suite();
    return check_summary("test_suite");
}
