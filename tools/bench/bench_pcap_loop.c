/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocefw-bench-pcap-loop: libpcap's plain read loop over a capture (pcap_next_ex, one add per
 * frame), the bound any per-frame analysis on top of libpcap is measured against. Prints
 * frames, seconds and frames per second.
 *
 * usage: rocefw-bench-pcap-loop FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <pcap/pcap.h>

int main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	struct timespec a, b;
	uint64_t n = 0, sum = 0;
	double s;
	pcap_t *pc;

	if (argc != 2) {
		fprintf(stderr, "usage: rocefw-bench-pcap-loop FILE\n");
		return 2;
	}
	pc = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (pc == NULL) {
		fprintf(stderr, "rocefw-bench-pcap-loop: %s\n", errbuf);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		sum += h->caplen + data[0];
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	printf("frames %llu seconds %.3f pps %.0f (checksum %llu)\n", (unsigned long long)n, s,
	       s > 0 ? (double)n / s : 0.0, (unsigned long long)sum);
	pcap_close(pc);
	return 0;
}
