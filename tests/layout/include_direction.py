#!/usr/bin/env python3
"""The layer rule of docs/design.md, checked on every #include of the tree.

Each top-level folder is a layer and may include only the layers listed for it (its own
included); nothing below dataplane/ includes a DPDK header (<rte_*.h>, <dpdk/...>). Exits 1
naming each offending file:line and the include, 0 when the tree follows the rule.
"""
import pathlib
import re
import sys

# layer -> the layers it may include (besides itself)
ALLOWED = {
    "wire": set(),
    "cc": set(),
    "ctrl": set(),
    "transport": {"wire", "cc"},
    "nic": {"wire", "cc", "transport"},
    "dataplane": {"wire", "cc", "transport", "nic", "ctrl"},
    "verbs": {"wire", "cc", "transport", "nic", "dataplane", "ctrl"},
    "tools": {"wire", "cc", "transport", "nic", "dataplane", "ctrl", "verbs"},
    "interop": {"wire", "cc", "transport", "nic", "dataplane", "ctrl", "verbs", "tools"},
    "tests": None,  # anything
}
NO_DPDK = {"wire", "cc", "ctrl", "transport", "nic"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def check(root):
    bad = []
    for layer, allowed in ALLOWED.items():
        for path in sorted((root / layer).rglob("*")):
            if path.suffix not in (".c", ".h", ".cc", ".cpp", ".hpp"):
                continue
            rel = path.relative_to(root)
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(2)
                if layer in NO_DPDK and (inc.startswith("rte_") or inc.startswith("dpdk/")):
                    bad.append(f"{rel}:{n}: {layer}/ includes DPDK header <{inc}>")
                top = inc.split("/", 1)[0] if "/" in inc else None
                if allowed is None or top not in ALLOWED or top == layer:
                    continue
                if top not in allowed:
                    bad.append(f"{rel}:{n}: {layer}/ includes {inc} (a {top}/ header: "
                               f"{layer}/ may include only {sorted(allowed) or 'itself'})")
    return bad


def self_test():
    """The checker catches each kind of violation in a synthetic tree (and passes a clean one)."""
    import tempfile
    cases = {
        "wire/a.c": '#include "transport/rfw_verbs.h"',
        "cc/b.h": "#include <rte_mbuf.h>",
        "transport/c.c": '#include "dataplane/rfw_nic.h"',
        "nic/d.c": '#include "dataplane/rfw_port.h"',
        "nic/e.c": "#include <rte_ether.h>",
        "tools/f.c": '#include "interop/case.h"',
        "ctrl/g.c": '#include "wire/frame.h"',
    }
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for layer in ALLOWED:
            (root / layer).mkdir()
        (root / "transport/ok.c").write_text('#include "wire/ib_hdr.h"\n#include "cc/cc.h"\n')
        (root / "tools/ok.c").write_text('#include "dataplane/rfw_nic.h"\n#include <rte_eal.h>\n')
        if check(root):
            print("self-test: a clean tree was flagged:", check(root))
            return 1
        for f, line in cases.items():
            (root / f).write_text(line + "\n")
        flagged = {b.split(":", 1)[0] for b in check(root)}
        missed = sorted(set(cases) - flagged)
        if missed:
            print("self-test: violations not caught:", missed)
            return 1
    print(f"include_direction self-test: {len(cases)} planted violations caught")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    missing = [d for d in ("wire", "cc", "transport", "dataplane", "tools") if not (root / d).is_dir()]
    if missing:
        print(f"include_direction: {root} is not a rocefw tree (no {missing})")
        return 1
    bad = check(root)
    for b in bad:
        print(b)
    print(f"include_direction: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
