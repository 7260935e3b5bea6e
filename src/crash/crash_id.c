/* SPDX-License-Identifier: BSD-3-Clause */
/* crash_id.c - the state IDs' text: parsed, printed, and the mark names spelled as in them. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_id.h"

static const char *const point_names[] = { "flush", "fua", "mark", "entry", "end" };

/* A number past this is refused: no log holds as many entries, no unit is as big. */
#define ID_NUMBER_MAX (1ULL << 62)

/* ------------------------------------------------------------ the text */

static bool name_plain(unsigned char c)
{
	return c > ' ' && c < 0x7f && !strchr("%+#,", c);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct text {
	char *s;
	size_t len, alloc;
	bool oom;
};

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (t->oom)
			return;
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->alloc - t->len : 0, fmt, ap);
		va_end(ap);
		if (n >= 0 && t->s && (size_t)n < t->alloc - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->alloc = 2 * (t->alloc + (size_t)(n > 0 ? n : 0)) + 64;
		char *s = realloc(t->s, t->alloc);
		if (!s) {
			t->oom = true;
			free(t->s);
			t->s = NULL;
			return;
		}
		t->s = s;
	}
}

/* A mark's name as an ID spells it: each byte outside '!'..'~' or one of "%+#," as %XX. */
static void text_add_name(struct text *t, const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		text_add(t, name_plain(c) ? "%c" : "%%%02X", c);
	}
}

char *crash_marks_text(const struct crash_log *log, size_t pos)
{
	const struct crash_marks *m = &log->names;
	size_t passed = crash_marks_before(log, pos);
	struct text t = { 0 };

	text_add(&t, "%s", "");
	/* the names in the order they first appear: those passed are a prefix of them */
	for (size_t n = 0; n < m->nr_names && m->by_name[m->first[n]] < passed; n++) {
		const struct crash_entry *e = &log->e[log->marks[m->by_name[m->first[n]]]];

		text_add(&t, "%s", n ? " " : "");
		text_add_name(&t, e->mark, e->mark_len);
		text_add(&t, "=%llu", (unsigned long long)crash_marks_passed(log, n, passed));
	}
	return t.s;
}

char *crash_id_format(const struct crash_id *id)
{
	struct text t = { 0 };

	text_add(&t, "%s", point_names[id->kind]);
	switch (id->kind) {
	case PT_MARK:
		text_add(&t, ":");
		text_add_name(&t, id->name, id->name_len);
		if (id->k > 1)
			text_add(&t, "#%llu", (unsigned long long)id->k);
		break;
	case PT_END:
		break;
	default:
		text_add(&t, ":%llu", (unsigned long long)id->k);
	}
	for (size_t i = 0; i < id->nr_drop; i++)
		text_add(&t, "%s%llu", i ? "," : "+drop:", (unsigned long long)id->drop[i]);
	if (id->torn)
		text_add(&t, "+torn:%llu@%llu/%llu", (unsigned long long)id->torn_e,
			 (unsigned long long)id->torn_a, (unsigned long long)id->torn_k);
	return t.s;
}

/* A decimal number at *p, no sign, no leading zero, at most ID_NUMBER_MAX. */
static bool take_number(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		/* checked before the multiplication, which would wrap */
		if (v > (ID_NUMBER_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return true;
}

bool crash_id_number(const char **p, uint64_t *out)
{
	return take_number(p, out);
}

static bool take_word(const char **p, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(*p, w, n))
		return false;
	*p += n;
	return true;
}

static int take_name(const char **p, struct crash_id *id)
{
	const char *s = *p;
	size_t n = 0;

	id->name = malloc(strlen(s) + 1);
	if (!id->name)
		return -ENOMEM;
	while (*s && *s != '+' && *s != '#') {
		if (*s == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);

			/* one spelling per name: a byte that may stand as itself must */
			if (lo < 0 || name_plain((unsigned char)(hi << 4 | lo)))
				return -EINVAL;
			id->name[n++] = (char)(hi << 4 | lo);
			s += 3;
		} else if (name_plain((unsigned char)*s)) {
			id->name[n++] = *s++;
		} else {
			return -EINVAL;
		}
	}
	id->name[n] = '\0';
	id->name_len = n;
	*p = s;
	return 0;
}

static int take_point(const char **p, struct crash_id *id, const char **reason)
{
	const char *at;
	int ret;

	for (int kind = PT_FLUSH; kind <= PT_END; kind++) {
		if (!take_word(p, point_names[kind]))
			continue;
		id->kind = (enum crash_point_kind)kind;
		if (kind == PT_END)
			return 0;
		if (!take_word(p, ":"))
			return -EINVAL;
		at = *p;
		if (kind != PT_MARK && !take_number(p, &id->k))
			return -EINVAL;
		if (kind != PT_MARK && kind != PT_ENTRY && !id->k) {
			/* the message points at the 0, not past it */
			*p = at;
			*reason = "flush and fua count from 1";
			return -EINVAL;
		}
		if (kind != PT_MARK)
			return 0;
		ret = take_name(p, id);
		if (ret)
			return ret;
		id->k = 1;
		if (take_word(p, "#") && (!take_number(p, &id->k) || id->k < 2))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

static int take_drops(const char **p, struct crash_id *id, const char **reason)
{
	size_t alloc = 0;
	const char *at;
	uint64_t v;

	do {
		at = *p;
		if (!take_number(p, &v))
			return -EINVAL;
		if (id->nr_drop && v <= id->drop[id->nr_drop - 1]) {
			/* one spelling per state: a set written in one order */
			*p = at;
			*reason = "the dropped entries must rise, each once";
			return -EINVAL;
		}
		if (id->nr_drop == alloc) {
			uint64_t *d = realloc(id->drop, (alloc = 2 * alloc + 4) * sizeof(*d));

			if (!d)
				return -ENOMEM;
			id->drop = d;
		}
		id->drop[id->nr_drop++] = v;
	} while (take_word(p, ","));
	return 0;
}

static int take_torn(const char **p, struct crash_id *id)
{
	id->torn = true;
	if (!take_number(p, &id->torn_e) || !take_word(p, "@") || !take_number(p, &id->torn_a) ||
	    !take_word(p, "/") || !take_number(p, &id->torn_k))
		return -EINVAL;
	return 0;
}

/* At most max bytes of s for a message: what a terminal or a log line would mangle as '?'. */
const char *crash_printable(const char *s, size_t max, char *out)
{
	size_t n = 0;

	for (; s[n] && n < max; n++)
		out[n] = s[n] > ' ' && s[n] < 0x7f ? s[n] : '?';
	out[n] = '\0';
	return out;
}

int crash_id_parse(const char *s, struct crash_id *id, char *why, size_t whylen)
{
	char whole[65], at[17];
	const char *p = s, *reason = NULL;
	int ret;

	memset(id, 0, sizeof(*id));
	ret = take_point(&p, id, &reason);
	if (!ret && take_word(&p, "+drop:"))
		ret = take_drops(&p, id, &reason);
	if (!ret && take_word(&p, "+torn:"))
		ret = take_torn(&p, id);
	if (!ret && *p)
		ret = -EINVAL;
	if (ret == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	else if (ret)
		crash_refuse(why, whylen, "bad state ID '%s%s' at '%s'%s%s",
			     crash_printable(s, 64, whole), strlen(s) > 64 ? "..." : "",
			     crash_printable(p, 16, at), reason ? ": " : "", reason ? reason : "");
	if (ret)
		crash_id_free(id);
	return ret;
}

void crash_id_free(struct crash_id *id)
{
	free(id->name);
	free(id->drop);
	memset(id, 0, sizeof(*id));
}

int crash_id_copy(struct crash_id *dst, const struct crash_id *src)
{
	*dst = *src;
	dst->name = NULL;
	dst->drop = NULL;
	if (src->name && !(dst->name = strdup(src->name)))
		goto oom;
	if (src->nr_drop && !(dst->drop = malloc(src->nr_drop * sizeof(*src->drop))))
		goto oom;
	if (src->nr_drop)
		memcpy(dst->drop, src->drop, src->nr_drop * sizeof(*src->drop));
	return 0;
oom:
	crash_id_free(dst);
	return -ENOMEM;
}
