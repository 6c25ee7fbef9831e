#!/usr/bin/env python3
"""Write a C table of x86-64 system call names from the build host's
<asm/unistd_64.h>, so that calls outside the description table still get
their name in the model."""
import re
import sys

header, out = sys.argv[1], sys.argv[2]
names = {}
with open(header) as f:
    for line in f:
        m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
        if m:
            names[int(m.group(2))] = m.group(1)
with open(out, "w") as f:
    f.write("/* Generated from %s by scripts/gen-syscall-names.py. */\n" % header)
    f.write("#include <stddef.h>\n\n")
    f.write("const char *const syscall_names[] = {\n")
    for nr in sorted(names):
        f.write('\t[%d] = "%s",\n' % (nr, names[nr]))
    f.write("};\n")
    f.write("const size_t syscall_names_len = sizeof(syscall_names) / sizeof(syscall_names[0]);\n")
