/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding to the real libibverbs. This library is LD_PRELOADed in front of libibverbs.so.1
 * and defines the exported verbs with libibverbs' symbol versions (rocefw-verbs.map); a call
 * on an object of another device goes on to the real definition, found once with
 * dlvsym(RTLD_NEXT, name, version): the next object in the lookup order defining that version
 * of the name, i.e. libibverbs itself.
 */
#ifndef RFW_VERBS_SHIM_H
#define RFW_VERBS_SHIM_H

#include "verbs/vrb.h"

/* The real libibverbs' @name at @version; prints and aborts if it has none (ABI mismatch). */
void *rfw_vrb_real(const char *name, const char *version);

/* return the real @fn@@@ver (looked up once) called with the arguments. */
#define RFW_FWD(ver, fn, ...)                                                                      \
	do {                                                                                       \
		static __typeof__(&fn) real_;                                                      \
		__typeof__(&fn) f_ = __atomic_load_n(&real_, __ATOMIC_ACQUIRE);                    \
		if (f_ == NULL) {                                                                  \
			f_ = (__typeof__(&fn))rfw_vrb_real(#fn, ver);                              \
			__atomic_store_n(&real_, f_, __ATOMIC_RELEASE);                            \
		}                                                                                  \
		return f_(__VA_ARGS__);                                                            \
	} while (0)

#endif
