/* SPDX-License-Identifier: BSD-3-Clause */
/* Without libFuzzer: run a fuzz target once over each file named on the command line (the
 * seed corpus), so every normal build replays the corpus as a regression test. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	int n = 0;

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t len;

		if (f == NULL) {
			perror(argv[i]);
			return 1;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		n++;
	}
	printf("replayed %d inputs\n", n);
	return n > 0 ? 0 : 1;
}
