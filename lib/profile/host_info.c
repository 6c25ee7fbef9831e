/* SPDX-License-Identifier: MIT */
/*
 * The profiling host, for meta.host: CPU model, kernel, cores, caches.
 * A fact that cannot be learnt is left out of the model, never written as
 * 0 or "unknown": readers tell "absent" from a measured value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core_int.h"
#include "profile_int.h"

static void cpu_model(struct ditto_meta *meta)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		line[strcspn(line, "\n")] = '\0';
		colon += strspn(colon + 1, " \t") + 1;
		if (*colon)
			ditto_meta_set_host_cpu_model(meta, colon);
		break;
	}
	fclose(f);
}

/* The sysfs CPU directory. DITTO_SYSFS_CPU replaces it: tests feed a fake
 * tree, or an empty directory to take the CPUID path on any host. */
static const char *sysfs_cpu(void)
{
	const char *e = getenv("DITTO_SYSFS_CPU");

	return e && *e ? e : "/sys/devices/system/cpu";
}

/* First line of cpu0/cache/indexN/<name>, without its newline. */
static bool cache_attr(int index, const char *name, char *buf, size_t len)
{
	char path[512];
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu0/cache/index%d/%s", sysfs_cpu(), index, name);
	if (!(f = fopen(path, "re")))
		return false;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		ok = true;
	}
	fclose(f);
	return ok;
}

/* Cache level of sysfs index N ("48K", level 1, type "Data"), or -1. */
static int sysfs_cache(int index, uint64_t *bytes)
{
	char size[64], level[16], type[32];
	char *end;
	int lv;

	if (!cache_attr(index, "size", size, sizeof(size)) ||
	    !cache_attr(index, "level", level, sizeof(level)) ||
	    !cache_attr(index, "type", type, sizeof(type)))
		return -1;
	*bytes = strtoull(size, &end, 10);
	*bytes *= *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? 1024u << 20 : 1;
	lv = atoi(level);
	if (!*bytes)
		return -1;
	if (lv == 1 && strcmp(type, "Data") == 0)
		return DITTO_CACHE_L1D;
	if (lv == 1 && strcmp(type, "Instruction") == 0)
		return DITTO_CACHE_L1I;
	if (lv == 2 && strcmp(type, "Instruction") != 0)
		return DITTO_CACHE_L2;
	if (lv >= 3 && strcmp(type, "Instruction") != 0)
		return DITTO_CACHE_LLC;
	return -1;
}

static unsigned sysfs_caches(uint64_t bytes[HOST_CACHE_LEVELS])
{
	unsigned found = 0;

	memset(bytes, 0, HOST_CACHE_LEVELS * sizeof(bytes[0]));
	for (int i = 0; i < 16; i++) {
		uint64_t size;
		int l = sysfs_cache(i, &size);

		/* the highest level seen is the LLC */
		if (l < 0)
			continue;
		found += !bytes[l];
		bytes[l] = size;
	}
	return found;
}

static void caches(struct ditto_meta *meta)
{
	static const char *const names[] = { "L1d", "L1i", "L2", "LLC" };
	uint64_t bytes[HOST_CACHE_LEVELS];
	struct host_caches id;
	unsigned from_sysfs = sysfs_caches(bytes), from_cpuid = 0;

	if (from_sysfs < HOST_CACHE_LEVELS && host_cpuid_caches(&id))
		for (int l = 0; l < HOST_CACHE_LEVELS; l++)
			if (!bytes[l] && id.bytes[l]) {
				bytes[l] = id.bytes[l];
				from_cpuid++;
				ditto_debug("host: %s %llu bytes, %u-byte lines, %u ways from CPUID",
					    names[l], (unsigned long long)id.bytes[l], id.line[l],
					    id.ways[l]);
			}
	for (int l = 0; l < HOST_CACHE_LEVELS; l++)
		if (bytes[l])
			ditto_meta_set_host_cache_bytes(meta, (enum ditto_cache_level)l, bytes[l]);
	if (from_sysfs || from_cpuid)
		ditto_meta_set_host_cache_source(meta, !from_cpuid ? "sysfs" :
						 !from_sysfs ? "cpuid" : "sysfs+cpuid");
}

void host_info_fill(struct ditto_meta *meta)
{
	struct utsname u;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	cpu_model(meta);
	if (uname(&u) == 0)
		ditto_meta_set_host_kernel(meta, u.release);
	if (cores > 0)
		ditto_meta_set_host_cores(meta, (uint64_t)cores);
	caches(meta);
}
