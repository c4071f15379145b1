/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes PAUSE and PFC frames made by wire/pfc_wire.c's builders (random class-enable
 * vectors and pause times, some XON) to a pcap and prints what each must decode to, one TSV
 * line per frame with tshark's field names as columns: tests/wire/pfc_tshark.py compares.
 *
 * usage: gen_pfc OUT.pcap [SEED]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <pcap/pcap.h>

#include "wire/pfc_wire.h"

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

int main(int argc, char **argv)
{
	pcap_t *dead;
	pcap_dumper_t *d;

	if (argc < 2) {
		fprintf(stderr, "usage: gen_pfc OUT.pcap [SEED]\n");
		return 2;
	}
	rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
	rng = rng * 0x9e3779b97f4a7c15ull + 1;
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, argv[1]);
	if (d == NULL) {
		fprintf(stderr, "gen_pfc: %s: %s\n", argv[1], pcap_geterr(dead));
		return 1;
	}
	printf("frame\tmacc.opcode\tmacc.pause_time\tmacc.cbfc.enbv");
	for (int i = 0; i < RFW_PFC_PRIOS; i++)
		printf("\tmacc.cbfc.pause_time.c%d", i);
	printf("\n");
	for (unsigned f = 0; f < 64; f++) {
		uint8_t buf[RFW_MACCTL_FRAME_LEN], src[6] = {0x02, 0, 0, 0, 0, (uint8_t)f};
		uint16_t q[RFW_PFC_PRIOS];
		struct pcap_pkthdr h = {0};
		/* Pause times: extremes, XON and random values. */
		uint16_t pick[4] = {0, 0xffff, 1, (uint16_t)rnd()};
		size_t len;

		for (int i = 0; i < RFW_PFC_PRIOS; i++)
			q[i] = pick[rnd() % 4];
		if (f % 5 == 4) {
			len = rfw_pause_build(buf, sizeof(buf), src, q[0]);
			printf("%u\t%u\t%u\t-", f + 1, RFW_MACCTL_OP_PAUSE, q[0]);
			for (int i = 0; i < RFW_PFC_PRIOS; i++)
				printf("\t-");
		} else {
			uint8_t en = (uint8_t)rnd();

			len = rfw_pfc_build(buf, sizeof(buf), src, en, q);
			printf("%u\t%u\t-\t%u", f + 1, RFW_MACCTL_OP_PFC, en);
			/* tshark shows every time field, enabled or not. */
			for (int i = 0; i < RFW_PFC_PRIOS; i++)
				printf("\t%u", q[i]);
		}
		printf("\n");
		h.caplen = h.len = (bpf_u_int32)len;
		h.ts.tv_usec = (long)f;
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}
