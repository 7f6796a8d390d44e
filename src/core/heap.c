/* heap.c - the binary min-heap of fixed-size items behind a caller's order (Kahn's ready set, m-ETF's
 *   candidates, the RAMP lookahead's flow completions).
 * Not here: any order of its own (the caller's less function) or a decrease-key (callers push again and
 *   skip stale items).
 * Entry points: hsdag_heap_init/push/pop/top/free (include/hsdag/common.h).
 */
#include "hsdag/common.h"

#include <string.h>

#define HEAP_MAX_ITEM 64

void hsdag_heap_init(hsdag_heap *h, size_t item_size, void *storage, size_t cap, hsdag_heap_less_fn less,
                     void *ctx)
{
    HSDAG_ASSERT(item_size >= 1 && item_size <= HEAP_MAX_ITEM && less);
    h->a = storage;
    h->n = 0;
    h->cap = storage ? cap : 0;
    h->size = item_size;
    h->owned = storage == NULL;
    h->less = less;
    h->ctx = ctx;
}

#define AT(h, i) ((h)->a + (i) * (h)->size)

/* item copies with a constant size where it is a common one, so the compiler inlines them */
static inline void item_copy(void *d, const void *s, size_t n)
{
    switch (n) {
    case 4:
        memcpy(d, s, 4);
        break;
    case 8:
        memcpy(d, s, 8);
        break;
    case 16:
        memcpy(d, s, 16);
        break;
    case 32:
        memcpy(d, s, 32);
        break;
    default:
        memcpy(d, s, n);
    }
}

int hsdag_heap_push(hsdag_heap *h, const void *item)
{
    if (h->n == h->cap) {
        if (!h->owned) return HSDAG_ELIMIT;
        size_t cap = h->cap;
        if (hsdag_grow((void **)&h->a, &cap, h->n + 1, h->size) < 0) return HSDAG_ENOMEM;
        h->cap = cap;
    }
    /* sift the hole up while the item goes before the parent */
    size_t i = h->n++;
    while (i > 0 && h->less(item, AT(h, (i - 1) / 2), h->ctx)) {
        item_copy(AT(h, i), AT(h, (i - 1) / 2), h->size);
        i = (i - 1) / 2;
    }
    item_copy(AT(h, i), item, h->size);
    return 0;
}

void hsdag_heap_pop(hsdag_heap *h, void *out)
{
    HSDAG_ASSERT(h->n > 0);
    unsigned char last[HEAP_MAX_ITEM];
    item_copy(out, AT(h, 0), h->size);
    item_copy(last, AT(h, --h->n), h->size);
    /* sift the hole down: the left child if it goes before the last item, the right one if it goes before
     * both */
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const unsigned char *best = last;
        if (l < h->n && h->less(AT(h, l), best, h->ctx)) m = l, best = AT(h, l);
        if (l + 1 < h->n && h->less(AT(h, l + 1), best, h->ctx)) m = l + 1;
        if (m == i) break;
        item_copy(AT(h, i), AT(h, m), h->size);
        i = m;
    }
    if (h->n > 0) item_copy(AT(h, i), last, h->size);
}

const void *hsdag_heap_top(const hsdag_heap *h)
{
    return h->n ? h->a : NULL;
}

void hsdag_heap_free(hsdag_heap *h)
{
    if (h->owned) {
        hsdag_free(h->a);
        h->a = NULL;
        h->cap = 0;
    }
    h->n = 0;
}
