/*
 * Names by shape (core/redact_name.c) against a reference: the matcher as
 * it was before its lists were indexed (a linear look through every word,
 * per call), kept here only as an oracle.  Both must give the same answer
 * on every name-like window of the fuzz corpus of redact, on the words of
 * the lists in many spellings, and on their neighbours, for the built-in
 * rules, for none and for a --redact-key set.  The word lists are a copy
 * of redact_name.c's on purpose (an oracle shares no code with what it
 * checks): a word added there is added here too.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core.h"
#include "redact_int.h"
#include "unit.h"

/* As redact_name.c's (the reference compares no longer a name). */
#define REF_NAME_MAX	128
#define REF_SEG_MAX	16
/* The longest window of the corpus tried, past REF_NAME_MAX. */
#define REF_WINDOW_MAX	(REF_NAME_MAX + 2)
/* The largest corpus file read. */
#define REF_FILE_MAX	(1024 * 1024)

static const char *const ref_parts[] = {
	"secret", "password", "passwd", "passphrase", "credential",
	"cookie", "signature", "assertion", "bearer", "jwt", NULL
};
static const char *const ref_segs[] = {
	"token", "key", "auth", "authorization", "authentication", "authn",
	"oauth", "apikey", "apitoken", "accesstoken", "refreshtoken",
	"idtoken", "authtoken", "accesskey", "privatekey", "secretkey",
	"authkey", "sessionid", "sessionkey", "sessiontoken", "phpsessid",
	"jsessionid", "sessid", "connectsid", "csrftoken", "xsrftoken",
	"bearertoken", NULL
};
static const char *const ref_key_kept_next[] = {
	"file", "path", "dir", "name", "size", "type", "length", "len",
	"count", "format", "alias", NULL
};
static const char *const ref_session_next[] = {
	"id", "token", "key", "secret", "cookie", NULL
};
static const char *const ref_whole[] = {
	"code", "codeverifier", "devicecode", "usercode", "pass", "pwd",
	"pin", "otp", "sig", "sid", NULL
};
static const char *const ref_kept[] = {
	"wwwauthenticate", "proxyauthenticate", "author", "authors",
	"authority", "keyword", "keywords", "keyboard", "progresstoken",
	"maxtokens", "pagetoken", "nextpagetoken", "nexttoken",
	"prevpagetoken", "tokenizer", "sortkey", "primarykey", "foreignkey",
	"partitionkey", "accesscontrolallowcredentials", NULL
};
static const char *const ref_counts[] = {
	"tokens", "count", "max", "limit", "remaining", "used", "total", NULL
};
static const char *const ref_schemes[] = {
	"basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey",
	NULL
};
static const char *const ref_line[] = {
	"cookie", "setcookie", "authorization", "proxyauthorization", NULL
};
static const char *const *const ref_lists[] = {
	ref_parts, ref_segs, ref_key_kept_next, ref_session_next, ref_whole,
	ref_kept, ref_counts, ref_schemes, ref_line, NULL
};

static int
ref_in(const char *const *list, const unsigned char *k, size_t n)
{
	size_t	i;

	for (i = 0; n > 0 && list[i] != NULL; i++) {
		if (strlen(list[i]) == n && memcmp(list[i], k, n) == 0)
			return 1;
	}
	return 0;
}

static int
ref_holds(const char *const *list, const unsigned char *k, size_t n)
{
	size_t	j, i, l;

	for (j = 0; j < n; j++) {
		for (i = 0; list[i] != NULL; i++) {
			l = strlen(list[i]);
			if (l <= n - j && memcmp(list[i], k + j, l) == 0)
				return 1;
		}
	}
	return 0;
}

struct ref_segs {
	unsigned char	buf[REF_NAME_MAX];
	size_t		off[REF_SEG_MAX];
	size_t		len[REF_SEG_MAX];
	size_t		n;
	size_t		total;
};

static int
ref_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static int
ref_segments(const char *name, size_t len, struct ref_segs *sg)
{
	size_t	i;
	int	c, prev = 0, next, cut;

	sg->n = sg->total = 0;
	if (len > REF_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (c == '_' || c == '-' || c == '.' || c == ' ' ||
		    c == '\t') {
			prev = 0;
			continue;
		}
		next = i + 1 < len ? (unsigned char)name[i + 1] : 0;
		cut = prev == 0 || (ref_upper(c) && ((prev >= 'a' &&
		    prev <= 'z') || (prev >= '0' && prev <= '9') ||
		    (ref_upper(prev) && next >= 'a' && next <= 'z')));
		if (cut && sg->n < REF_SEG_MAX)
			sg->off[sg->n++] = sg->total;
		sg->buf[sg->total++] = (unsigned char)(ref_upper(c) ?
		    c - 'A' + 'a' : c);
		sg->len[sg->n - 1] = sg->total - sg->off[sg->n - 1];
		prev = c;
	}
	return 1;
}

static int
ref_seg_is(const struct ref_segs *sg, size_t i, const char *const *list)
{
	return i < sg->n && ref_in(list, sg->buf + sg->off[i], sg->len[i]);
}

/* The matcher as it was: every list looked through, word by word. */
static int
ref_name_secret(const struct redact *r, const char *name, size_t len,
    int whole)
{
	struct ref_segs		 sg;
	const unsigned char	*k, *g;
	size_t			 n, i, gl;

	if (!ref_segments(name, len, &sg) || sg.total == 0)
		return 0;
	k = sg.buf;
	n = sg.total;
	if (n == 9 && memcmp(k, "sessionid", 9) == 0)
		return 1;
	if (r == NULL)
		return 0;
	for (i = 0; i < r->nkeys; i++) {
		if (r->keys[i].len == n && memcmp(r->keys[i].name, k, n) == 0)
			return 1;
	}
	if (!r->shapes || n < 3 || ref_in(ref_kept, k, n))
		return 0;
	if ((whole && ref_in(ref_whole, k, n)) || ref_in(ref_segs, k, n) ||
	    ref_holds(ref_parts, k, n))
		return 1;
	for (i = 0; i < sg.n; i++) {
		g = sg.buf + sg.off[i];
		gl = sg.len[i];
		if (gl == 3 && memcmp(g, "key", 3) == 0) {
			if (!ref_seg_is(&sg, i + 1, ref_key_kept_next))
				return 1;
			continue;
		}
		if (ref_in(ref_segs, g, gl) || (gl > 5 &&
		    memcmp(g + gl - 5, "token", 5) == 0 &&
		    !ref_in(ref_kept, g, gl)) || (gl == 7 &&
		    memcmp(g, "session", 7) == 0 && (i + 1 == sg.n ||
		    ref_seg_is(&sg, i + 1, ref_session_next))))
			return 1;
	}
	return 0;
}

/* A value of digits after this name is a count (as it was). */
static int
ref_count(const char *name, size_t len)
{
	struct ref_segs	sg;
	size_t		i;

	if (!ref_segments(name, len, &sg))
		return 0;
	for (i = 0; i < sg.n; i++) {
		if (ref_seg_is(&sg, i, ref_counts))
			return 1;
	}
	return 0;
}

/* Whether this name's value runs to the end of its line (as it was). */
static int
ref_to_eol(const char *name, size_t len)
{
	unsigned char	k[REF_NAME_MAX];
	size_t		n = 0, i;
	int		c;

	if (len > REF_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (c == '_' || c == '-' || c == '.' || c == ' ' || c == '\t')
			continue;
		k[n++] = (unsigned char)(ref_upper(c) ? c - 'A' + 'a' : c);
	}
	return ref_in(ref_line, k, n);
}

/* The rule sets compared: the built-in ones, none, and keys only. */
struct ref_sets {
	struct redact	*r[3];
	size_t		 checked;
};

/* Compare the matcher with the reference on one name, in every set. */
static void
ref_check(struct ref_sets *rs, const char *name, size_t len)
{
	size_t	i;
	int	got, want;

	for (i = 0; i < 3; i++) {
		got = redact_name_secret(rs->r[i], name, len);
		want = ref_name_secret(rs->r[i], name, len, 1);
		cr_assert_eq(got, want, "set %zu, whole name \"%.*s\": %d, "
		    "the reference %d", i, (int)len, name, got, want);
		/* A member's value "x" is no count: the name alone decides. */
		got = redact_text_member(rs->r[i], name, len,
		    (const unsigned char *)"x", 1);
		want = ref_name_secret(rs->r[i], name, len, 0);
		cr_assert_eq(got, want, "set %zu, member \"%.*s\": %d, the "
		    "reference %d", i, (int)len, name, got, want);
		/* A value of digits: a count after some names. */
		got = redact_text_member(rs->r[i], name, len,
		    (const unsigned char *)"12", 2);
		want = want && !ref_count(name, len);
		cr_assert_eq(got, want, "set %zu, member \"%.*s\" with a "
		    "count: %d, the reference %d", i, (int)len, name, got,
		    want);
	}
	got = redact_name_to_eol(name, len);
	want = ref_to_eol(name, len);
	cr_assert_eq(got, want, "to the line's end \"%.*s\": %d, the "
	    "reference %d", (int)len, name, got, want);
	/* A scheme word is compared as given (its caller lowers it). */
	got = redact_name_scheme((const unsigned char *)name, len);
	want = ref_in(ref_schemes, (const unsigned char *)name, len);
	cr_assert_eq(got, want, "scheme \"%.*s\": %d, the reference %d",
	    (int)len, name, got, want);
	rs->checked++;
}

/* Every window of s that is a run of a name's bytes, up to a length. */
static void
ref_windows(struct ref_sets *rs, const char *s, size_t n)
{
	size_t	b, e;

	for (b = 0; b < n; b++) {
		for (e = b + 1; e <= n && e - b <= REF_WINDOW_MAX; e++)
			ref_check(rs, s + b, e - b);
	}
}

/* The words of the lists spelled as names are: cases, separators, around. */
static void
ref_words(struct ref_sets *rs)
{
	static const char *const around[] = {
		"", "x", "my_", "_id", "next", "Name", "-file", "_count",
		"Session", "api", "KEY", ".", " ", "9", NULL
	};
	char	buf[256], w[64];
	size_t	l, i, j, a, b, len;

	for (l = 0; ref_lists[l] != NULL; l++) {
		for (i = 0; ref_lists[l][i] != NULL; i++) {
			len = strlen(ref_lists[l][i]);
			for (j = 0; j < 4; j++) {
				memcpy(w, ref_lists[l][i], len + 1);
				if (j == 1)
					w[0] = (char)(w[0] - 'a' + 'A');
				else if (j == 2) {
					for (a = 0; a < len; a++)
						w[a] = (char)(w[a] - 'a' + 'A');
				} else if (j == 3 && len > 3)
					w[len / 2] = (char)(w[len / 2] - 'a' +
					    'A');
				for (a = 0; around[a] != NULL; a++) {
					for (b = 0; around[b] != NULL; b++) {
						snprintf(buf, sizeof buf, "%s%s%s",
						    around[a], w, around[b]);
						ref_check(rs, buf, strlen(buf));
						/* each prefix too */
						ref_check(rs, buf,
						    strlen(around[a]) + len - 1);
					}
				}
			}
		}
	}
}

Test(redact_name, same_as_reference, .timeout = UNIT_TIMEOUT * 4)
{
	struct ref_sets	 rs;
	static const char *const later[] = {
		"\xc3\x84PI-Secret", "\xc3\x84piSecret", "\xc3\xa4pi_secret",
		"\xc3\x84", "quota_ref", "QuotaRef", "QUOTAREF", "quota",
		"x_custom_field", "X-Custom-Field", "devtoken", "Dev.Token",
		NULL
	};
	char		 path[1024], *cause = NULL, *buf;
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	size_t		 n, files = 0;

	memset(&rs, 0, sizeof rs);
	rs.r[0] = redact_new(1);
	rs.r[1] = redact_new(0);
	rs.r[2] = redact_new(0);
	cr_assert_eq(redact_add_key(rs.r[2], "x-custom_field", &cause), 0);
	cr_assert_eq(redact_add_key(rs.r[2], "Dev.Token", &cause), 0);
	ref_words(&rs);
	/*
	 * Keys added after names were looked up, one starting with a byte
	 * past ASCII (kept as it is, not folded) and one upper-case.
	 */
	cr_assert_eq(redact_add_key(rs.r[2], "\xc3\x84PI-Secret", &cause),
	    0);
	cr_assert_eq(redact_add_key(rs.r[2], "QUOTA_Ref", &cause), 0);
	for (n = 0; later[n] != NULL; n++)
		ref_check(&rs, later[n], strlen(later[n]));
	cr_assert(redact_name_secret(rs.r[2], "\xc3\x84PI_secret", 11));
	cr_assert(!redact_name_secret(rs.r[2], "\xc3\xa4pi_secret", 11));
	cr_assert(redact_name_secret(rs.r[2], "quotaRef", 8));
	buf = malloc(REF_FILE_MAX);
	cr_assert_not_null(buf);
	cr_assert_not_null(d = opendir(FUZZ_CORPUS_DIR "/redact"));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/redact/%s", FUZZ_CORPUS_DIR,
		    de->d_name);
		cr_assert_not_null(f = fopen(path, "rb"), "%s", path);
		n = fread(buf, 1, REF_FILE_MAX, f);
		fclose(f);
		ref_windows(&rs, buf, n);
		files++;
	}
	closedir(d);
	cr_assert_not_null(f = fopen(FUZZ_DICT, "rb"));
	n = fread(buf, 1, REF_FILE_MAX, f);
	fclose(f);
	ref_windows(&rs, buf, n);
	free(buf);
	cr_expect_gt(files, 0);
	cr_expect_gt(rs.checked, 10000);
	redact_free(rs.r[0]);
	redact_free(rs.r[1]);
	redact_free(rs.r[2]);
}
