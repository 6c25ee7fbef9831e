/* SPDX-License-Identifier: MIT */
/*
 * Checks before profiling, so that users get "what is missing and what to
 * do" instead of a verifier log: privileges, BTF, perf settings.
 * DITTO_BTF_PATH names the kernel BTF to use instead of
 * /sys/kernel/btf/vmlinux (a kernel without it, with BTF extracted
 * elsewhere; and tests, to see what a host without BTF gets).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include "profile_int.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static int check_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return ditto_err(-errno, "cannot read capabilities: %s", strerror(errno));
	if (has_cap(d, CAP_SYS_ADMIN))
		return 0;
	if (!has_cap(d, CAP_BPF))
		return ditto_err(-EPERM, "profiling needs CAP_BPF (or root) to load the syscall "
				 "collector: run as root or grant cap_bpf,cap_perfmon");
	if (!has_cap(d, CAP_PERFMON))
		return ditto_err(-EPERM, "profiling needs CAP_PERFMON (or root) to attach "
				 "tracepoints and sample stacks: run as root or grant cap_perfmon");
	return 0;
}

const char *profile_btf_override(void)
{
	const char *p = getenv("DITTO_BTF_PATH");

	return p && *p ? p : NULL;
}

static int check_btf(void)
{
	const char *override = profile_btf_override();
	const char *path = override ? override : "/sys/kernel/btf/vmlinux";

	if (access(path, R_OK) == 0)
		return 0;
	if (override)
		return ditto_err(-EOPNOTSUPP, "no kernel BTF at %s (DITTO_BTF_PATH): %s; point "
				 "DITTO_BTF_PATH at this kernel's vmlinux BTF, or unset it to use "
				 "/sys/kernel/btf/vmlinux", path, strerror(errno));
	return ditto_err(-EOPNOTSUPP,
			 "this kernel exposes no BTF (/sys/kernel/btf/vmlinux): the collector needs a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF=y (Linux 5.11 or newer), or "
			 "DITTO_BTF_PATH naming a file with this kernel's vmlinux BTF");
}

int profile_env_check(void)
{
	int err = check_caps();

	return err ? err : check_btf();
}
