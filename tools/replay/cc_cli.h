/* SPDX-License-Identifier: BSD-3-Clause */
/* `rocefw-replay cc` command line (cc_cli.c). */
#ifndef RFW_TOOLS_REPLAY_CC_CLI_H
#define RFW_TOOLS_REPLAY_CC_CLI_H

/* argv[0] is "cc". Returns the process exit status (0, 1 read/plot failure, 2 usage). */
int rfw_replay_cmd_cc(int argc, char **argv);

#endif
