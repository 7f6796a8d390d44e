/* constw.h - private helper of the OpenVINO IR and NNCF DOT readers: weight bytes of constant nodes.
 * Not here: parsing or the graph builder; it works on plain edge arrays before hsdag_gb_finish.
 * Entry points: hsdag_constw_attribute.
 *
 * Usage (inside src/io only):
 *   uint8_t *cv = ...; double *param = calloc(n);
 *   if (hsdag_constw_attribute(n, m, src, dst, is_const, bytes, cv, param) < 0) goto fail;
 */
#ifndef HSDAG_IO_CONSTW_H
#define HSDAG_IO_CONSTW_H

#include "hsdag/common.h"

/* The rule (both readers document it):
 *  - a node is "constant-valued" if it is a constant source (is_const[v]: Const, get_attr, ...), or if
 *    it has at least one in-edge and every in-edge comes from a constant-valued node (the weight
 *    decompression chain Const(f16) -> Convert -> Convolution makes the Convert constant-valued);
 *  - the bytes of every constant source go to exactly one consumer: scanning non-constant-valued nodes
 *    in index (file) order, each takes the bytes of the constant sources in the backward cone of its
 *    constant-valued inputs that no earlier node took. Weights shared by several consumers are thus
 *    counted once, and constants that reach no non-constant node are not counted.
 * n nodes; m edges src[k] -> dst[k] (edges with an end outside [0, n) are ignored); bytes[v] = the
 * stored bytes of constant source v. Writes const_valued[n] (0/1) and adds into param[n].
 * Returns 0 or HSDAG_ENOMEM. Cycles are left to the builder: nodes on them are not constant-valued. */
int hsdag_constw_attribute(int32_t n, int32_t m, const int32_t *src, const int32_t *dst,
                           const uint8_t *is_const, const double *bytes, uint8_t *const_valued,
                           double *param);

#endif
