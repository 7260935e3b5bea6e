/* SPDX-License-Identifier: BSD-3-Clause */
/* rbd_spec.c - the rbd backend's IMAGE parsed: pool, namespace, image, snapshot and options. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "rbd_spec.h"

#define BAD_TOKEN (-1)

/*
 * Copy from *in to *out up to an unescaped character of delims, without
 * the backslashes; NUL-end the copy.  Returns the delimiter met (0 at the
 * end of the text), or BAD_TOKEN for a backslash that ends the text or a
 * control character.
 */
static int take_token(const char **in, char **out, const char *delims)
{
	const char *p = *in;
	char *o = *out;
	bool refused = false;
	int d = 0;

	for (; *p; p++) {
		if (*p == '\\') {
			if (!*++p) {
				refused = true; /* a stray backslash at the end */
				break;
			}
		} else if (strchr(delims, *p)) {
			d = (unsigned char)*p++;
			break;
		}
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			refused = true;
			break;
		}
		*o++ = *p;
	}
	*o++ = 0; /* on a bad token too: the error message names what came before */
	if (refused)
		return BAD_TOKEN;
	*in = p;
	*out = o;
	return d;
}

static int bad(char *why, size_t whylen, const char *fmt, const char *what)
{
	snprintf(why, whylen, fmt, what);
	return -EINVAL;
}

/* One KEY=VALUE; d is what ended it. */
static int take_option(struct rbd_spec *sp, const char **in, char **out, int *d, char *why,
		       size_t whylen)
{
	const char *key = *out, *val;

	*d = take_token(in, out, "=:,");
	if (*d == BAD_TOKEN)
		return bad(why, whylen, "rbd: option %s: a stray '\\' or a control character", key);
	if (*d != '=' || !*key)
		return bad(why, whylen, "rbd: option '%s': KEY=VALUE expected", key);
	if (strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- ") !=
	    strlen(key))
		return bad(why, whylen, "rbd: option '%s': not a Ceph option name", key);
	val = *out;
	*d = take_token(in, out, ":,");
	if (*d == BAD_TOKEN)
		return bad(why, whylen, "rbd: option %s: a stray '\\' or a control character", key);
	if (!*val)
		return bad(why, whylen, "rbd: option %s: no value", key);
	if (!strcmp(key, "conf") || !strcmp(key, "id")) {
		const char **slot = key[0] == 'c' ? &sp->conf : &sp->id;

		if (*slot)
			return bad(why, whylen, "rbd: option %s given twice", key);
		*slot = val;
		return 0;
	}
	if (sp->nr_opts == RBD_SPEC_MAX_OPTS)
		return bad(why, whylen, "rbd: more than %s options", "16");
	sp->keys[sp->nr_opts] = key;
	sp->vals[sp->nr_opts++] = val;
	return 0;
}

/* POOL[/NAMESPACE]/IMAGE[@SNAP]; d is what ended it. */
static int take_names(struct rbd_spec *sp, const char **in, char **out, int *d, char *why,
		      size_t whylen)
{
	const char *names[3];
	unsigned int n = 0;

	do {
		if (n == 3)
			return bad(why, whylen, "rbd: %s: more than POOL/NAMESPACE/IMAGE",
				   names[0]);
		names[n++] = *out;
		*d = take_token(in, out, "/@:,");
		if (*d == BAD_TOKEN)
			return bad(why, whylen, "rbd: %s: a stray '\\' or a control character",
				   names[0]);
		if (!*names[n - 1])
			return bad(why, whylen, "rbd: %s: an empty pool, namespace or image name",
				   names[0]);
	} while (*d == '/');
	if (n == 1)
		return bad(why, whylen, "rbd: %s: POOL/IMAGE expected", names[0]);
	sp->pool = names[0];
	sp->ns = n == 3 ? names[1] : NULL;
	sp->image = names[n - 1];
	if (*d != '@')
		return 0;
	sp->snap = *out;
	*d = take_token(in, out, "/@:,");
	if (*d == BAD_TOKEN || *d == '/' || *d == '@' || !*sp->snap)
		return bad(why, whylen, "rbd: %s: a bad snapshot name", sp->image);
	return 0;
}

int rbd_spec_parse(const char *args, struct rbd_spec *sp, char *why, size_t whylen)
{
	const char *in = args ? args : "";
	char *out;
	int d, ret;

	*sp = (struct rbd_spec){ 0 };
	if (!*in)
		return bad(why, whylen, "rbd: %s: give POOL/IMAGE", "no image");
	/* every token is no longer than the text, plus its NUL */
	sp->buf = out = malloc(2 * strlen(in) + 2);
	if (!sp->buf) {
		snprintf(why, whylen, "rbd: out of memory");
		return -ENOMEM;
	}
	ret = take_names(sp, &in, &out, &d, why, whylen);
	while (!ret && d)
		ret = take_option(sp, &in, &out, &d, why, whylen);
	if (ret)
		rbd_spec_free(sp);
	return ret;
}

void rbd_spec_free(struct rbd_spec *sp)
{
	free(sp->buf);
	*sp = (struct rbd_spec){ 0 };
}
