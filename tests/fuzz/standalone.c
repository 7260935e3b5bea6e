/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * standalone.c - main() for a fuzz target built without libFuzzer: runs the
 * target once on every file of its corpus (tests/fuzz/corpus/NAME/, or the
 * files and directories on the command line), each under a time limit, so
 * that every input that ever crashed or hung is retried by make check.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Far above what any input takes under ASan on a loaded machine; a hang never ends. */
#define INPUT_TIMEOUT_S 60

static const char *current; /* the input being run, for the timeout's message */

static void on_alarm(int sig)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "%s: still running after %d s: a hang\n", current,
			 INPUT_TIMEOUT_S);

	(void)sig;
	if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
		_exit(3);
	_exit(1);
}

/* The whole file in a buffer of exactly its size, so that ASan sees any overread. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	struct stat st;
	size_t n;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	n = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!data || n != (size_t)st.st_size) {
		fprintf(stderr, "%s: could not read it whole\n", path);
		free(data);
		return -1;
	}
	current = path;
	alarm(INPUT_TIMEOUT_S);
	LLVMFuzzerTestOneInput(data, n);
	alarm(0);
	free(data);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order; an empty or missing corpus fails. */
static int run_dir(const char *dir, unsigned int *count)
{
	char **names = NULL, *path;
	size_t nr = 0, alloc = 0;
	struct dirent *d;
	DIR *dp = opendir(dir);
	int ret = 0;

	if (!dp) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		if (nr == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			names = realloc(names, alloc * sizeof(*names));
		}
		if (!names || !(names[nr++] = strdup(d->d_name)))
			abort();
	}
	closedir(dp);
	qsort(names, nr, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nr; i++) {
		if (!ret && asprintf(&path, "%s/%s", dir, names[i]) > 0) {
			ret = run_file(path);
			++*count;
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

static int run_path(const char *path, unsigned int *count)
{
	struct stat st;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return run_dir(path, count);
	++*count;
	return run_file(path);
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char corpus[4096];
	unsigned int count = 0;
	int ret = 0;

	signal(SIGALRM, on_alarm);
	if (argc > 1) {
		for (int i = 1; i < argc && !ret; i++)
			ret = run_path(argv[i], &count);
	} else {
		/* lt-fuzz-NAME under libtool's wrapper: the corpus is NAME */
		prog += strncmp(prog, "lt-", 3) ? 0 : 3;
		snprintf(corpus, sizeof(corpus), "%s/tests/fuzz/corpus/%s", srcdir ? srcdir : ".",
			 prog + (strncmp(prog, "fuzz-", 5) ? 0 : 5));
		ret = run_dir(corpus, &count);
	}
	if (!ret && !count) {
		fprintf(stderr, "%s: no inputs to run\n", prog);
		ret = -1;
	}
	if (!ret)
		printf("%s: %u inputs ran\n", prog, count);
	return ret ? 1 : 0;
}
