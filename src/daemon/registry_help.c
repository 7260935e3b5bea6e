/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry_help.c - rqdisk --list and --help-filter/--help-backend, read
 * from the registries of elevators (elevator.c), filters (device.c) and
 * backends (backend.c) and from each one's own table: a name, a line of
 * description, its keys with their help.  Nothing here names a plugin, so
 * one added to a registry is listed and explained without a line here.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "blkdev.h"
#include "device.h"
#include "registry_help.h"

/* "NAME  TEXT", the text from column width on, two spaces after a longer name. */
static void registry_line(const char *indent, int width, const char *name, const char *text)
{
	int pad = width - (int)strlen(name);

	printf("%s%s%*s  %s\n", indent, name, pad > 0 ? pad : 0, "", text ? text : "");
}

#define LIST_WIDTH 10 /* a name in --list */
#define KEY_WIDTH 16  /* a key in --help-filter */

static void list_elevators(void)
{
	/* none is the core's: no elevator at all */
	for (const char *const *n = elevator_names(); *n; n++) {
		const struct elevator_type *t = elevator_find(*n);

		registry_line("", LIST_WIDTH, *n, t ? t->elevator_description
					: "no elevator: requests go down in the order they come");
	}
}

static void list_filters(void)
{
	for (const struct dev_ops *const *f = dev_filter_list(); *f; f++)
		registry_line("", LIST_WIDTH, (*f)->name, (*f)->description);
}

static void list_backends(void)
{
	for (const struct backend_type *b = backend_list(); b->scheme; b++) {
		char why[256], text[300];
		const struct dev_ops *ops = backend_ops(b, why, sizeof(why));

		/* a module that does not load is still listed, with the reason */
		if (!ops)
			snprintf(text, sizeof(text), "(%s)", why);
		registry_line("", LIST_WIDTH, b->scheme, ops ? ops->description : text);
	}
}

int registry_list(const char *what)
{
	if (!strcmp(what, "elevators"))
		list_elevators();
	else if (!strcmp(what, "filters"))
		list_filters();
	else if (!strcmp(what, "backends"))
		list_backends();
	else {
		fprintf(stderr, "rqdisk: --list: '%s' is not elevators, filters or backends\n",
			what);
		return 1;
	}
	return 0;
}

/* Every key, and after a word with keys of its own (a model), those as WORD:KEY. */
static void print_keys(const struct dev_key *keys)
{
	char path[128];

	for (const struct dev_key *k = keys; k && k->name; k++) {
		registry_line("  ", KEY_WIDTH, k->name, k->help);
		for (const struct dev_key *s = k->sub; s && s->name; s++) {
			snprintf(path, sizeof(path), "%s:%s", k->name, s->name);
			registry_line("  ", KEY_WIDTH, path, s->help);
		}
	}
}

static void print_layer(const struct dev_ops *ops, const char *kind, const char *usage)
{
	printf("%s - %s\n", ops->name, ops->description ? ops->description : "");
	if (!ops->keys || !ops->keys->name) {
		printf("It takes no keys; see rqdisk-%s-%s(8).\n", ops->name, kind);
		return;
	}
	printf("Keys (%s; see rqdisk-%s-%s(8)):\n", usage, ops->name, kind);
	print_keys(ops->keys);
}

int registry_help_filter(const char *name)
{
	const struct dev_ops *ops = dev_find_filter(name, strlen(name));
	char usage[160];

	if (!ops) {
		fprintf(stderr, "rqdisk: --help-filter: no filter '%s' (rqdisk --list filters)\n",
			name);
		return 1;
	}
	snprintf(usage, sizeof(usage), "--filter %s:KEY=VALUE,...", ops->name);
	print_layer(ops, "filter", usage);
	return 0;
}

int registry_help_backend(const char *name)
{
	const struct backend_type *b = backend_find(name);
	const struct dev_ops *ops;
	char why[256];

	if (!b) {
		fprintf(stderr, "rqdisk: --help-backend: no backend '%s' (rqdisk --list backends)\n",
			name);
		return 1;
	}
	ops = backend_ops(b, why, sizeof(why));
	if (!ops) {
		fprintf(stderr, "rqdisk: --help-backend: %s\n", why);
		return 1;
	}
	print_layer(ops, "backend", "after the image, as rqdisk(8)'s BACKENDS says");
	return 0;
}
