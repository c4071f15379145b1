/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading the independent test vectors in tests/data/icrc (text forms of the pcaps). */
#ifndef RFW_TESTS_TESTDATA_H
#define RFW_TESTS_TESTDATA_H

#include <stddef.h>
#include <stdint.h>

#define TD_MAX_FRAMES 32
#define TD_MAX_LEN    2048

struct td_frame {
	char name[64];
	uint8_t data[TD_MAX_LEN];
	size_t len;
	uint32_t icrc_wire; /* vectors.txt only: expected ICRC bytes as written, big-endian read */
};

/* Both return the number of frames loaded; they fail the test on any format error. */
int td_load_vectors(struct td_frame *out, int max);
int td_load_malformed(struct td_frame *out, int max);
/* Path of a file under tests/data. */
const char *td_path(const char *rel, char *buf, size_t len);

#endif
