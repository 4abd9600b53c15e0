/*
 * What a validation reports and counts: its steps of work against
 * JSCHEMA_MAX_STEPS, its errors (at most JSCHEMA_MAX_ERRORS said, each
 * with the value's place as JSONPath and the keyword's as a JSON
 * Pointer), and the value's JSONPath as the walk goes in and out.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

/* Count n steps of work; 1 once the budget is spent. */
int
jsreport_step(struct jsctx *c, uint64_t n)
{
	if (c->stopped)
		return 1;
	c->steps += n;
	if (c->steps > JSCHEMA_MAX_STEPS) {
		c->stopped = 1;
		return 1;
	}
	return 0;
}

/*
 * The value's path cut for a sentence (NULL when short enough): its head
 * and its tail, at UTF-8 boundaries, "..." between; deep values with long
 * keys would otherwise give each error a path as long as the value.
 */
static char *
jsreport_path_cut(const char *p, size_t len)
{
	size_t	 h = JSCHEMA_PATH_MAX / 4, t;
	char	*out;

	if (len <= JSCHEMA_PATH_MAX)
		return NULL;
	while (h > 0 && (p[h] & 0xc0) == 0x80)
		h--;
	t = len - (JSCHEMA_PATH_MAX - h - 3);
	while (t < len && (p[t] & 0xc0) == 0x80)
		t++;
	xasprintf(&out, "%.*s...%s", (int)h, p, p + t);
	return out;
}

/* Report one error at node's keyword kw (unless quiet or stopped). */
void
jsreport_err(struct jsctx *c, const struct jsnode *n, const char *kw,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*text, *spath, *ipath;

	if (c->quiet > 0 || c->stopped)
		return;
	/* Past JSCHEMA_MAX_ERRORS, counted for one last line; a step. */
	if (++c->reported > JSCHEMA_MAX_ERRORS || c->cb == NULL) {
		jsreport_step(c, 1);
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		text = NULL;
	va_end(ap);
	if (kw != NULL)
		xasprintf(&spath, "%s/%s", n->path, kw);
	else
		spath = xstrdup(n->path);
	ipath = jsreport_path_cut(c->ipath, c->ilen);
	c->cb(c->arg, ipath != NULL ? ipath : c->ipath, spath, text != NULL ?
	    text : "the value does not match the schema");
	free(ipath);
	free(spath);
	free(text);
}

/*
 * A key or pattern quoted for an error that will be said, else NULL
 * (past JSCHEMA_MAX_ERRORS or quiet): quoting a million names that are
 * only counted would cost more than finding them.
 */
char *
jsreport_quote(const struct jsctx *c, const char *s, size_t len)
{
	if (c->quiet > 0 || c->stopped || c->cb == NULL ||
	    c->reported >= JSCHEMA_MAX_ERRORS)
		return NULL;
	return jsvalue_quote_str(s, len);
}

/* Append n bytes to the value's JSONPath. */
void
jsreport_path_add(struct jsctx *c, const char *s, size_t n)
{
	if (c->ilen + n + 1 > c->icap) {
		while (c->ilen + n + 1 > c->icap)
			c->icap = c->icap ? c->icap * 2 : 64;
		c->ipath = xreallocarray(c->ipath, c->icap, 1);
	}
	memcpy(c->ipath + c->ilen, s, n);
	c->ilen += n;
	c->ipath[c->ilen] = '\0';
}

/* Append .key, or ['key'] when the key is not a plain name. */
size_t
jsreport_push_key(struct jsctx *c, const char *key, size_t klen)
{
	size_t	old = c->ilen, i;
	int	plain = klen > 0 && !(key[0] >= '0' && key[0] <= '9');

	for (i = 0; i < klen && plain; i++) {
		plain = (key[i] >= 'a' && key[i] <= 'z') ||
		    (key[i] >= 'A' && key[i] <= 'Z') ||
		    (key[i] >= '0' && key[i] <= '9') || key[i] == '_' ||
		    key[i] == '$';
	}
	if (plain) {
		jsreport_path_add(c, ".", 1);
		jsreport_path_add(c, key, klen);
		return old;
	}
	jsreport_path_add(c, "['", 2);
	for (i = 0; i < klen; i++) {
		if (key[i] == '\'' || key[i] == '\\')
			jsreport_path_add(c, "\\", 1);
		if (key[i] == '\0')
			jsreport_path_add(c, "\\u0000", 6);
		else
			jsreport_path_add(c, key + i, 1);
	}
	jsreport_path_add(c, "']", 2);
	return old;
}

/* Append [i] to the value's JSONPath; the length to pop back to. */
size_t
jsreport_push_index(struct jsctx *c, size_t i)
{
	char	buf[32];
	size_t	old = c->ilen;
	int	n;

	n = snprintf(buf, sizeof buf, "[%zu]", i);
	jsreport_path_add(c, buf, (size_t)n);
	return old;
}

/* Cut the value's JSONPath back to what it was before a push. */
void
jsreport_pop(struct jsctx *c, size_t old)
{
	c->ilen = old;
	c->ipath[old] = '\0';
}
