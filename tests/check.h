/* check.h - the tiny test harness: CHECK(cond) counts failures, CHECK_NEAR compares doubles.
 * Not here: fixtures or test data (tests/data/); each tests/test_<module>.c includes this.
 * Entry points: CHECK, CHECK_EQ_INT, CHECK_NEAR, CHECK_STR, check_summary (returns main's exit code). */
#ifndef HSDAG_TEST_CHECK_H
#define HSDAG_TEST_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_pass_, check_fail_;
#define CHECK(c)                                                         \
    do {                                                                 \
        if (c)                                                           \
            check_pass_++;                                               \
        else {                                                           \
            check_fail_++;                                               \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
        }                                                                \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                                \
    do {                                                                                                  \
        long long a_ = (long long)(a), b_ = (long long)(b);                                               \
        if (a_ == b_)                                                                                     \
            check_pass_++;                                                                                \
        else {                                                                                            \
            check_fail_++;                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, a_, b_); \
        }                                                                                                 \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                                             \
    do {                                                                                                  \
        double a_ = (double)(a), b_ = (double)(b);                                                        \
        if (fabs(a_ - b_) <= (tol))                                                                       \
            check_pass_++;                                                                                \
        else {                                                                                            \
            check_fail_++;                                                                                \
            fprintf(stderr, "FAIL %s:%d: %s ~ %s (%.17g vs %.17g, tol %g)\n", __FILE__, __LINE__, #a, #b, \
                    a_, b_, (double)(tol));                                                               \
        }                                                                                                 \
    } while (0)
#define CHECK_STR(a, b)                                                                        \
    do {                                                                                       \
        const char *a_ = (a), *b_ = (b);                                                       \
        if (a_ && b_ && strcmp(a_, b_) == 0)                                                   \
            check_pass_++;                                                                     \
        else {                                                                                 \
            check_fail_++;                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s == \"%s\" (got \"%s\")\n", __FILE__, __LINE__, #a, \
                    b_ ? b_ : "(null)", a_ ? a_ : "(null)");                                   \
        }                                                                                      \
    } while (0)

static int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_pass_, check_fail_);
    return check_fail_ ? 1 : 0;
}
#endif
