/* SPDX-License-Identifier: MIT */
/* The profiling host, for meta.host: CPU model, kernel, cores, caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "profile_int.h"

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

/* Size of cache index N of cpu0 ("48K") in bytes, and its level and type. */
static uint64_t cache_size(int index, int *level, char *type, size_t tlen)
{
	char path[128], buf[64];
	uint64_t size = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		char *end;

		size = strtoull(buf, &end, 10);
		size *= *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
	*level = 0;
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%d", level) != 1)
			*level = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
	type[0] = '\0';
	if ((f = fopen(path, "re"))) {
		if (fgets(type, (int)tlen, f))
			type[strcspn(type, "\n")] = '\0';
		fclose(f);
	}
	return size;
}

void host_info_fill(struct ditto_meta *meta)
{
	char model[256], type[32];
	struct utsname u;
	int level;

	cpu_model(model, sizeof(model));
	ditto_meta_set_host_cpu_model(meta, model);
	if (uname(&u) == 0)
		ditto_meta_set_host_kernel(meta, u.release);
	ditto_meta_set_host_cores(meta, (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0; i < 8; i++) {
		uint64_t size = cache_size(i, &level, type, sizeof(type));

		if (!size)
			continue;
		if (level == 1 && strcmp(type, "Data") == 0)
			ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1D, size);
		else if (level == 1 && strcmp(type, "Instruction") == 0)
			ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L1I, size);
		else if (level == 2)
			ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_L2, size);
		else if (level >= 3)
			ditto_meta_set_host_cache_bytes(meta, DITTO_CACHE_LLC, size);
	}
}
