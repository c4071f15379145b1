"""The known-failures list (tests/sim/soak_known_failures.txt): inputs that fail an oracle on
today's code because a numbered defect of issue 13 is not fixed yet. Each line:

    WHERE  SYMPTOM  ITEM  [# comment]

WHERE names the input (`sim_cli:mix.pcap`, `soak:SEED`), SYMPTOM the rule or check that fails
(`ack_in_read_atomic`, `completed`, ...), ITEM the issue item (`item1`) whose fix it waits for.
A listed input that fails only with its listed symptoms is reported as KNOWN, not failed; one
that passes is reported so the line can be deleted once the fix is merged.
"""
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak_known_failures.txt")


def load(path=PATH):
    known = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) >= 3:
                known.setdefault(line[0], {})[line[1]] = line[2]
    return known
