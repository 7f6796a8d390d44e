/* fuzz_devices.c - libFuzzer target for the device-set JSON reader (hsdag_devices_parse), with a round-trip
 * property: whatever parses is written back and must parse again to the same set.
 * Not here: checks of the numbers (tests/test_devices.c); this looks for crashes, leaks, UB and round-trip
 * loss.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/devices.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_devices *d = NULL, *d2 = NULL;
    hsdag_err e = {0};
    if (hsdag_devices_parse(&d, data, size, "fuzz", &e) < 0) {
        HSDAG_ASSERT(d == NULL && e.msg[0] && !strchr(e.msg, '\n'));
        return 0;
    }
    HSDAG_ASSERT(d->n >= 1 && d->n <= HSDAG_MAX_DEVICES);
    for (int32_t a = 0; a < d->n; a++)
        for (int32_t b = 0; b < d->n; b++)
            if (a != b)
                HSDAG_ASSERT(d->link[a * d->n + b].resource >= 0 &&
                             d->link[a * d->n + b].resource < d->n_resources);
    hsdag_buf b = {0};
    if (hsdag_devices_write_json(&b, d) == 0) {
        int rc = hsdag_devices_parse(&d2, b.data, b.len, "fuzz-rt", &e);
        HSDAG_ASSERT(rc == 0 || rc == HSDAG_ENOMEM);
        if (rc == 0) {
            HSDAG_ASSERT(d2->n == d->n && d2->n_resources == d->n_resources && d2->semantics == d->semantics);
            for (int32_t k = 0; k < d->n; k++)
                HSDAG_ASSERT(strcmp(d2->dev[k].name, d->dev[k].name) == 0 &&
                             d2->dev[k].peak_flops == d->dev[k].peak_flops);
        }
    }
    hsdag_buf_free(&b);
    hsdag_devices_free(d2);
    hsdag_devices_free(d);
    return 0;
}
