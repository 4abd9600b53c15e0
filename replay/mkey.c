/*
 * The text a request is matched by (match_request_key): its params
 * written canonically in one pass over the parsed message, with no copy
 * of the tree and no second encoder: keys sorted, _meta and the places an
 * ignore pattern names left out, an integral real written as the
 * integer: the text json_dumps(JSON_SORT_KEYS | JSON_COMPACT) gives of
 * the canonical copy, without making the copy.  A mock of a long
 * recording builds one for every recorded request before it answers the
 * first (a third of the time it took).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Reals within this magnitude that are integral are keyed as integers. */
#define MKEY_EXACT_LIMIT	9007199254740992.0

struct mkey {
	char			*buf;
	size_t			 len, size;
	struct jpath *const	*ignore;
	size_t			 nignore;
	struct jseg		*path;
	size_t			 npath, path_size;
};

/* A member of an object being written, for sorting. */
struct mkey_member {
	const char	*key;
	json_t		*value;
};

/* Append len bytes. */
static void
mkey_add(struct mkey *k, const char *s, size_t len)
{
	if (k->size - k->len < len + 1) {
		while (k->size - k->len < len + 1)
			k->size = k->size == 0 ? 256 : k->size * 2;
		k->buf = xreallocarray(k->buf, k->size, 1);
	}
	memcpy(k->buf + k->len, s, len);
	k->len += len;
	k->buf[k->len] = '\0';
}

/*
 * A string, quoted and escaped as jansson writes it (JSON_COMPACT): '"'
 * and '\\', the short escapes, other control bytes as \u00XX.
 */
static void
mkey_string(struct mkey *k, const char *s, size_t len)
{
	static const char	 shorts[] = "\bb\ff\nn\rr\tt\"\"\\\\";
	const char		*sh;
	char			 esc[8];
	size_t			 i, from = 0;

	mkey_add(k, "\"", 1);
	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
			continue;
		mkey_add(k, s + from, i - from);
		for (sh = shorts; *sh != '\0' && *sh != s[i]; sh += 2)
			;
		if (*sh != '\0') {
			esc[0] = '\\';
			esc[1] = sh[1];
			mkey_add(k, esc, 2);
		} else {
			snprintf(esc, sizeof esc, "\\u%04X",
			    (unsigned char)s[i]);
			mkey_add(k, esc, 6);
		}
		from = i + 1;
	}
	mkey_add(k, s + from, len - from);
	mkey_add(k, "\"", 1);
}

/* Step down into an object key or an array index. */
static void
mkey_push(struct mkey *k, const char *key, size_t index)
{
	struct jseg	*seg;

	if (k->npath == k->path_size) {
		k->path_size = k->path_size == 0 ? 16 : k->path_size * 2;
		k->path = xreallocarray(k->path, k->path_size,
		    sizeof *k->path);
	}
	seg = &k->path[k->npath++];
	seg->key = key;
	seg->index = index;
	seg->json = 0;
}

/* Whether an ignore pattern names the place the walk is at. */
static int
mkey_ignored(const struct mkey *k)
{
	size_t	i;

	for (i = 0; i < k->nignore; i++) {
		if (jpath_match(k->ignore[i], k->path, k->npath))
			return 1;
	}
	return 0;
}

static int
mkey_member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mkey_member *)a)->key,
	    ((const struct mkey_member *)b)->key);
}

/*
 * Write v canonically; the members of an object kept (not _meta, not
 * ignored) in *kept when kept is not NULL.
 */
static void
mkey_value(struct mkey *k, const json_t *v, size_t *kept)
{
	struct mkey_member	*mm;
	const char		*key;
	json_t			*e;
	size_t			 i, n;
	double			 d;
	char			 num[64], *real;
	int			 first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		mm = xreallocarray(NULL, json_object_size(v) + 1, sizeof *mm);
		n = 0;
		json_object_foreach((json_t *)v, key, e) {
			if (strcmp(key, "_meta") == 0)
				continue;
			mkey_push(k, key, 0);
			if (!mkey_ignored(k)) {
				mm[n].key = key;
				mm[n++].value = e;
			}
			k->npath--;
		}
		qsort(mm, n, sizeof *mm, mkey_member_cmp);
		mkey_add(k, "{", 1);
		for (i = 0; i < n; i++) {
			if (i > 0)
				mkey_add(k, ",", 1);
			mkey_string(k, mm[i].key, strlen(mm[i].key));
			mkey_add(k, ":", 1);
			mkey_push(k, mm[i].key, 0);
			mkey_value(k, mm[i].value, NULL);
			k->npath--;
		}
		mkey_add(k, "}", 1);
		free(mm);
		if (kept != NULL)
			*kept = n;
		return;
	case JSON_ARRAY:
		mkey_add(k, "[", 1);
		json_array_foreach(v, i, e) {
			mkey_push(k, NULL, i);
			if (!mkey_ignored(k)) {
				if (!first)
					mkey_add(k, ",", 1);
				first = 0;
				mkey_value(k, e, NULL);
			}
			k->npath--;
		}
		mkey_add(k, "]", 1);
		return;
	case JSON_STRING:
		mkey_string(k, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		break;
	case JSON_REAL:
		d = json_real_value(v);
		if (d >= -MKEY_EXACT_LIMIT && d <= MKEY_EXACT_LIMIT &&
		    (double)(json_int_t)d == d) {
			snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT,
			    (json_int_t)d);
			break;
		}
		/* Rare: jansson's own spelling (it always has '.' or 'e'). */
		if ((real = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT)) ==
		    NULL)
			fatalx("cannot encode a real number");
		mkey_add(k, real, strlen(real));
		free(real);
		return;
	case JSON_TRUE:
		mkey_add(k, "true", 4);
		return;
	case JSON_FALSE:
		mkey_add(k, "false", 5);
		return;
	default:
		mkey_add(k, "null", 4);
		return;
	}
	mkey_add(k, num, strlen(num));
}

/*
 * The key of a request with this method: "METHOD\n" then its canonical
 * params, or nothing after the newline when it has none worth keying
 * (absent, null, ignored, or an object left empty).  rules' ignores
 * scoped to msg leave places out (rules may be NULL).
 */
char *
mkey_request(const char *method, const json_t *msg,
    const struct diff_rules *rules)
{
	struct mkey	 k;
	struct jpath	**ignore = NULL;
	json_t		*params;
	size_t		 i, n = 0, kept = 1, mark;

	memset(&k, 0, sizeof k);
	mkey_add(&k, method, strlen(method));
	mkey_add(&k, "\n", 1);
	params = json_object_get(msg, "params");
	if (params == NULL || json_is_null(params))
		return k.buf;
	if (rules != NULL && rules->nignore > 0) {
		ignore = xcalloc(rules->nignore, sizeof *ignore);
		for (i = 0; i < rules->nignore; i++) {
			if (rscope_match(&rules->ignore[i].r.scope, msg))
				ignore[n++] = rules->ignore[i].path;
		}
	}
	k.ignore = ignore;
	k.nignore = n;
	mkey_push(&k, "params", 0);
	if (!mkey_ignored(&k)) {
		mark = k.len;
		mkey_value(&k, params, json_is_object(params) ? &kept : NULL);
		if (kept == 0) {	/* an object left empty: no params */
			k.len = mark;
			k.buf[k.len] = '\0';
		}
	}
	free(k.path);
	free(ignore);
	return k.buf;
}
