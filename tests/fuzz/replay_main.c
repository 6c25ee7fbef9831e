/* main() for a fuzz target built without libFuzzer: runs each file named
 * on the command line (or each file in a named directory) through
 * LLVMFuzzerTestOneInput once, so the corpus and past crashes stay
 * regression tests. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	size_t cap = 1 << 16, len = 0, n;
	uint8_t *buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				free(buf);
			buf = bigger;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return 1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int run_path(const char *path, size_t *files)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*files;
		return run_file(path);
	}
	struct dirent **ents;
	int n = scandir(path, &ents, NULL, alphasort), rc = 0;
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char sub[4096];
			snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
			rc |= run_path(sub, files);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	size_t files = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &files);
	printf("%s: %zu inputs replayed\n", argv[0], files);
	return rc || files == 0;
}
