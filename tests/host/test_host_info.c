/* SPDX-License-Identifier: MIT */
/*
 * meta.host on any host: the sysfs path reads a fake tree, the CPUID path
 * runs with DITTO_SYSFS_CPU pointed at an empty directory, and the two
 * agree where the real sysfs has caches. Unknown facts stay absent.
 * Links the static library for host_info_fill() and host_cpuid_caches().
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ditto/ditto.h>

#include "profile_int.h"

static const char *const fields[] = { "l1d_bytes", "l1i_bytes", "l2_bytes", "llc_bytes" };

static void put_file(const char *dir, int index, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu0", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/cpu0/cache", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/cpu0/cache/index%d", dir, index);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/cpu0/cache/index%d/%s", dir, index, name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "%s\n", text);
	fclose(f);
}

static void put_cache(const char *dir, int index, const char *size, const char *level,
		      const char *type)
{
	put_file(dir, index, "size", size);
	put_file(dir, index, "level", level);
	put_file(dir, index, "type", type);
}

static char *temp_dir(void)
{
	char *d = strdup("/tmp/ditto-sysfs-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static struct ditto_model *fill(const char *sysfs)
{
	struct ditto_model *m = ditto_model_new();

	ck_assert_ptr_nonnull(m);
	if (sysfs)
		setenv("DITTO_SYSFS_CPU", sysfs, 1);
	else
		unsetenv("DITTO_SYSFS_CPU");
	host_info_fill(ditto_model_meta_ensure(m));
	return m;
}

/* meta.host.<field>, or 0 when absent. */
static uint64_t host_u64(const struct ditto_model *m, const char *field, bool *present)
{
	char path[64];
	uint64_t v = 0;
	int rc;

	snprintf(path, sizeof(path), "meta.host.%s", field);
	rc = ditto_model_get_u64(m, path, &v);
	ck_assert_msg(rc == 0 || rc == -DITTO_ENOTFOUND, "%s: %d", path, rc);
	if (present)
		*present = rc == 0;
	return v;
}

START_TEST(sysfs_tree_is_parsed)
{
	char *dir = temp_dir();
	struct ditto_model *m;

	put_cache(dir, 0, "48K", "1", "Data");
	put_cache(dir, 1, "32K", "1", "Instruction");
	put_cache(dir, 2, "2048K", "2", "Unified");
	put_cache(dir, 3, "16M", "3", "Unified");
	m = fill(dir);
	ck_assert_uint_eq(host_u64(m, "l1d_bytes", NULL), 48 << 10);
	ck_assert_uint_eq(host_u64(m, "l1i_bytes", NULL), 32 << 10);
	ck_assert_uint_eq(host_u64(m, "l2_bytes", NULL), 2 << 20);
	ck_assert_uint_eq(host_u64(m, "llc_bytes", NULL), 16 << 20);
	ck_assert_str_eq(ditto_meta_host_cache_source(ditto_model_meta(m)), "sysfs");
	ck_assert_uint_gt(host_u64(m, "cores", NULL), 0);
	ditto_model_free(m);
	free(dir);
}
END_TEST

START_TEST(without_sysfs_caches_come_from_cpuid)
{
	char *dir = temp_dir();
	struct ditto_model *m = fill(dir);
	const char *src = ditto_meta_host_cache_source(ditto_model_meta(m));
#if defined(__x86_64__) || defined(__i386__)
	/* glibc derives these from CPUID too: a second opinion where it has one. */
	static const int sc[] = { _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_ICACHE_SIZE,
				  _SC_LEVEL2_CACHE_SIZE };

	ck_assert_str_eq(src, "cpuid");
	for (size_t l = 0; l < 3; l++) {
		bool present;
		uint64_t v = host_u64(m, fields[l], &present);
		long want = sysconf(sc[l]);

		ck_assert_msg(present, "%s absent on x86", fields[l]);
		if (want > 0)
			ck_assert_msg(v == (uint64_t)want, "%s: CPUID says %llu, glibc %ld", fields[l],
				      (unsigned long long)v, want);
	}
#else
	/* no CPUID: unknown sizes stay absent, never 0 */
	ck_assert_str_eq(src, "");
	for (size_t l = 0; l < 4; l++) {
		bool present;

		host_u64(m, fields[l], &present);
		ck_assert(!present);
	}
#endif
	ditto_model_free(m);
	rmdir(dir);
	free(dir);
}
END_TEST

/* A tree with L1d only: the other levels come from CPUID, and the source
 * says both were used. */
START_TEST(missing_sysfs_levels_come_from_cpuid)
{
	char *dir = temp_dir();
	struct host_caches id;
	struct ditto_model *m;

	put_cache(dir, 0, "40K", "1", "Data");
	m = fill(dir);
	ck_assert_uint_eq(host_u64(m, "l1d_bytes", NULL), 40 << 10);
	if (host_cpuid_caches(&id) && id.bytes[DITTO_CACHE_L2]) {
		ck_assert_str_eq(ditto_meta_host_cache_source(ditto_model_meta(m)), "sysfs+cpuid");
		ck_assert_uint_eq(host_u64(m, "l2_bytes", NULL), id.bytes[DITTO_CACHE_L2]);
	}
	ditto_model_free(m);
	free(dir);
}
END_TEST

START_TEST(cpuid_agrees_with_the_real_sysfs)
{
	char *dir;
	struct ditto_model *real, *cpuid;

	if (access("/sys/devices/system/cpu/cpu0/cache/index0/size", R_OK) != 0) {
		fprintf(stderr, "cpuid_agrees_with_the_real_sysfs: no sysfs cache folder here, "
			"nothing to compare\n");
		return;
	}
	dir = temp_dir();
	real = fill(NULL);
	cpuid = fill(dir);
	ck_assert_str_eq(ditto_meta_host_cache_source(ditto_model_meta(real)), "sysfs");
	/* The LLC is left out: sysfs shows one slice where CPUID may show the
	 * whole (AMD's legacy leaf). */
	for (size_t l = 0; l < 3; l++) {
		bool a, b;
		uint64_t x = host_u64(real, fields[l], &a), y = host_u64(cpuid, fields[l], &b);

		if (a && b)
			ck_assert_msg(x == y, "%s: sysfs %llu, CPUID %llu", fields[l],
				      (unsigned long long)x, (unsigned long long)y);
	}
	ditto_model_free(real);
	ditto_model_free(cpuid);
	rmdir(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("host_info");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, sysfs_tree_is_parsed);
	tcase_add_test(tc, without_sysfs_caches_come_from_cpuid);
	tcase_add_test(tc, missing_sysfs_levels_come_from_cpuid);
	tcase_add_test(tc, cpuid_agrees_with_the_real_sysfs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
