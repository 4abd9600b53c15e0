/*
 * Whether a name is a secret's, by its shape: the rule for the names of
 * fields, parameters, headers, flags and variables that redact_text.c
 * applies outside JSON members (docs/redaction.md lists the words), and
 * the words that go with it (counts, scheme words, names whose value runs
 * to the end of the line).  The word lists are indexed once
 * (redact_name_init) so that most names are turned down on their length
 * or their first byte; a name is looked at up to REDACT_NAME_MAX bytes.
 */

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "redact_int.h"

/*
 * Names of secrets by shape.  A name is cut into segments at '_', '-',
 * '.', blanks and camelCase ("nextPageToken": next, page, token;
 * "APIKey": api, key), in lower case.  It is a secret's when its whole
 * (the segments joined) holds one of these words...
 */
static const char *const redact_name_parts[] = {
	"secret", "password", "passwd", "passphrase", "credential",
	"cookie", "signature", "assertion", "bearer", "jwt", NULL
};

/* ...or its whole or one of its segments is one of these... */
static const char *const redact_name_segs[] = {
	"token", "key", "auth", "authorization", "authentication", "authn",
	"oauth", "apikey", "apitoken", "accesstoken", "refreshtoken",
	"idtoken", "authtoken", "accesskey", "privatekey", "secretkey",
	"authkey", "sessionid", "sessionkey", "sessiontoken", "phpsessid",
	"jsessionid", "sessid", "connectsid", "csrftoken", "xsrftoken",
	"bearertoken", NULL
};

/*
 * ...but not "key" before one of these: "key_file", "api_key_path" name
 * a file, not a key...
 */
static const char *const redact_name_key_kept_next[] = {
	"file", "path", "dir", "name", "size", "type", "length", "len",
	"count", "format", "alias", NULL
};

/*
 * ...or it ends a segment in "token" ("ghtoken"), or is "session" as
 * the last segment or before one of these ("session_id"; "X-Session-Name"
 * is no secret)...
 */
static const char *const redact_name_session_next[] = {
	"id", "token", "key", "secret", "cookie", NULL
};

/*
 * ...or the whole is one of these (short ones, too common inside words;
 * only where they cannot be prose: a query's, a form's, a header's)...
 */
static const char *const redact_name_whole[] = {
	"code", "codeverifier", "devicecode", "usercode", "pass", "pwd",
	"pin", "otp", "sig", "sid", NULL
};

/* ...unless the whole is one of these: they hold none, and are worth
 * reading. */
static const char *const redact_name_kept[] = {
	"wwwauthenticate", "proxyauthenticate", "author", "authors",
	"authority", "keyword", "keywords", "keyboard", "progresstoken",
	"maxtokens", "pagetoken", "nextpagetoken", "nexttoken",
	"prevpagetoken", "tokenizer", "sortkey", "primarykey", "foreignkey",
	"partitionkey", "accesscontrolallowcredentials", NULL
};

/*
 * A value of digits only after a name with one of these segments is a
 * count, not a secret ("token_count: 12", "max_token=4096").
 */
static const char *const redact_name_counts[] = {
	"tokens", "count", "max", "limit", "remaining", "used", "total", NULL
};

/* Scheme words after which the credentials follow ("Basic abc=="). */
static const char *const redact_auth_schemes[] = {
	"basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey",
	NULL
};

/*
 * Names whose value is a list or has parameters ("a=1; sid=2", "Digest
 * username=\"u\", response=\"r\""): the value runs to the line's end.
 */
static const char *const redact_name_line[] = {
	"cookie", "setcookie", "authorization", "proxyauthorization", NULL
};

/* The most words in one of the lists above. */
#define NAME_LIST_WORDS	32
/* Words are shorter than this (their lengths are bits of a uint64_t). */
#define NAME_WORD_MAX	64

/*
 * A list of words as it is looked up: each word's length, the lengths
 * that occur, and the words chained by their first byte, so that most
 * names (a header's: "content-type", "accept") are turned down on their
 * length or a byte, and the others compared with the few words that
 * start as they do.  Filled once by redact_name_init(), read-only after.
 */
struct name_list {
	const char *const *words;
	size_t		 min;			/* the shortest word */
	uint64_t	 lens;			/* bit l: a word of l bytes */
	unsigned char	 len[NAME_LIST_WORDS];
	unsigned char	 head[256];		/* 1 + the first word with it */
	unsigned char	 next[NAME_LIST_WORDS];	/* 1 + the next one, or 0 */
};

static struct name_list	name_parts = { .words = redact_name_parts };
static struct name_list	name_segs = { .words = redact_name_segs };
static struct name_list	name_key_kept_next = {
	.words = redact_name_key_kept_next
};
static struct name_list	name_session_next = {
	.words = redact_name_session_next
};
static struct name_list	name_whole = { .words = redact_name_whole };
static struct name_list	name_kept = { .words = redact_name_kept };
static struct name_list	name_counts = { .words = redact_name_counts };
static struct name_list	name_schemes = { .words = redact_auth_schemes };
static struct name_list	name_line = { .words = redact_name_line };

static struct name_list *const name_lists[] = {
	&name_parts, &name_segs, &name_key_kept_next, &name_session_next,
	&name_whole, &name_kept, &name_counts, &name_schemes, &name_line,
	NULL
};

static pthread_once_t	name_lists_built = PTHREAD_ONCE_INIT;

/* Fill the lists' tables (once: redact_name_init). */
static void
name_lists_build(void)
{
	struct name_list	*l;
	size_t			 i, j, len;
	unsigned char		 c;

	for (i = 0; name_lists[i] != NULL; i++) {
		l = name_lists[i];
		for (j = 0; l->words[j] != NULL; j++)
			;
		/* Backwards, so that each chain is in the list's order. */
		while (j-- > 0) {
			len = strlen(l->words[j]);
			if (j >= NAME_LIST_WORDS || len == 0 ||
			    len >= NAME_WORD_MAX)
				fatalx("redact: a list of names outgrew "
				    "NAME_LIST_WORDS or NAME_WORD_MAX");
			c = (unsigned char)l->words[j][0];
			l->len[j] = (unsigned char)len;
			l->next[j] = l->head[c];
			l->head[c] = (unsigned char)(j + 1);
			l->lens |= (uint64_t)1 << len;
			if (l->min == 0 || len < l->min)
				l->min = len;
		}
	}
}

/*
 * Build the tables the names are looked up in; redact_new() calls it,
 * before any name is (as secrets_init()).
 */
void
redact_name_init(void)
{
	if (pthread_once(&name_lists_built, name_lists_build) != 0)
		fatalx("redact: pthread_once failed");
}

/* Whether k (n bytes) is one of the words of l. */
static int
name_in(const struct name_list *l, const unsigned char *k, size_t n)
{
	size_t	i;

	if (n == 0 || n >= NAME_WORD_MAX || !(l->lens >> n & 1))
		return 0;
	for (i = l->head[k[0]]; i != 0; i = l->next[i - 1]) {
		if (l->len[i - 1] == n && memcmp(l->words[i - 1], k, n) == 0)
			return 1;
	}
	return 0;
}

/* Whether k holds one of the words of l (in one pass over k). */
static int
name_holds(const struct name_list *l, const unsigned char *k, size_t n)
{
	size_t	j, i;

	if (n < l->min)
		return 0;
	for (j = 0; j + l->min <= n; j++) {
		for (i = l->head[k[j]]; i != 0; i = l->next[i - 1]) {
			if (l->len[i - 1] <= n - j && memcmp(l->words[i - 1],
			    k + j, l->len[i - 1]) == 0)
				return 1;
		}
	}
	return 0;
}

/* The segments of a name (see redact_name_parts), at most this many. */
#define NAME_SEG_MAX	16

struct name_segs {
	unsigned char	 buf[REDACT_NAME_MAX];	/* segments, back to back */
	size_t		 off[NAME_SEG_MAX];
	size_t		 len[NAME_SEG_MAX];
	size_t		 n;
	size_t		 total;			/* bytes in buf */
};

/* ASCII lower case; other bytes as they are. */
static int
name_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Whether c is an ASCII capital. */
static int
name_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

/*
 * Cut name into segments (lower case) at separators and camelCase.
 * Returns 0 when it is longer than REDACT_NAME_MAX.  Segments past
 * NAME_SEG_MAX join the last one.
 */
static int
name_segments(const char *name, size_t len, struct name_segs *sg)
{
	size_t	i;
	int	c, prev = 0, next, cut;

	sg->n = sg->total = 0;
	if (len > REDACT_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (c == '_' || c == '-' || c == '.' || c == ' ' ||
		    c == '\t') {
			prev = 0;
			continue;
		}
		next = i + 1 < len ? (unsigned char)name[i + 1] : 0;
		/* aB, 9B, and the B of ABc ("APIKey": api, key) */
		cut = prev == 0 || (name_upper(c) && ((prev >= 'a' &&
		    prev <= 'z') || (prev >= '0' && prev <= '9') ||
		    (name_upper(prev) && next >= 'a' && next <= 'z')));
		if (cut && (sg->n < NAME_SEG_MAX)) {
			sg->off[sg->n] = sg->total;
			sg->n++;
		}
		sg->buf[sg->total++] = (unsigned char)name_lower(c);
		sg->len[sg->n - 1] = sg->total - sg->off[sg->n - 1];
		prev = c;
	}
	return 1;
}

/* Whether segment i of sg is one of the words of l. */
static int
name_seg_is(const struct name_segs *sg, size_t i, const struct name_list *l)
{
	return i < sg->n && name_in(l, sg->buf + sg->off[i], sg->len[i]);
}

/*
 * As redact_name_secret(); whole: the short names of redact_name_whole
 * count too (not in free text, where "exit code: 3" is no secret's).
 */
int
redact_name_match(const struct redact *r, const char *name, size_t len,
    int whole)
{
	struct name_segs	 sg;
	const unsigned char	*k, *g;
	size_t			 n, i, gl;

	if (!name_segments(name, len, &sg) || sg.total == 0)
		return 0;
	k = sg.buf;
	n = sg.total;
	if (n == 9 && memcmp(k, "sessionid", 9) == 0)
		return 1;
	if (r == NULL)
		return 0;
	if (r->nkeys > 0 && n >= r->key_min && n <= r->key_max &&
	    secrets_key_listed(r, k, n))
		return 1;
	/* The shortest word of ours has three letters. */
	if (!r->shapes || n < 3 || name_in(&name_kept, k, n))
		return 0;
	if ((whole && name_in(&name_whole, k, n)) ||
	    name_in(&name_segs, k, n))
		return 1;
	if (name_holds(&name_parts, k, n))
		return 1;
	for (i = 0; i < sg.n; i++) {
		g = sg.buf + sg.off[i];
		gl = sg.len[i];
		if (gl == 3 && memcmp(g, "key", 3) == 0) {
			if (!name_seg_is(&sg, i + 1, &name_key_kept_next))
				return 1;
			continue;
		}
		if (name_in(&name_segs, g, gl))
			return 1;
		if (gl > 5 && memcmp(g + gl - 5, "token", 5) == 0 &&
		    !name_in(&name_kept, g, gl))
			return 1;
		if (gl == 7 && memcmp(g, "session", 7) == 0 &&
		    (i + 1 == sg.n || name_seg_is(&sg, i + 1,
		    &name_session_next)))
			return 1;
	}
	return 0;
}

/*
 * Whether a name (a header, a form field, a query parameter, a flag, a
 * variable, a word before '=' or ':' in text) is a secret's: by its shape
 * under the built-in rules, or listed (--redact-key, compared as a JSON
 * key is).  A legacy sessionId is one whatever the rules.
 */
int
redact_name_secret(const struct redact *r, const char *name, size_t len)
{
	return redact_name_match(r, name, len, 1);
}

/*
 * Whether a name's value of vlen bytes at v is a count to keep: digits
 * only, after a name with a segment of redact_name_counts.
 */
int
redact_name_count(const char *name, size_t len, const unsigned char *v,
    size_t vlen)
{
	struct name_segs	sg;
	size_t			i;

	if (vlen == 0)
		return 0;
	for (i = 0; i < vlen; i++) {
		if (v[i] < '0' || v[i] > '9')
			return 0;
	}
	if (!name_segments(name, len, &sg))
		return 0;
	for (i = 0; i < sg.n; i++) {
		if (name_seg_is(&sg, i, &name_counts))
			return 1;
	}
	return 0;
}

/* Whether a name's value runs to the end of its line (redact_name_line). */
int
redact_name_to_eol(const char *name, size_t len)
{
	unsigned char	k[REDACT_NAME_MAX];
	size_t		n = 0, i;
	int		c;

	if (len > REDACT_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (c == '_' || c == '-' || c == '.' || c == ' ' || c == '\t')
			continue;
		k[n++] = (unsigned char)name_lower(c);
	}
	return name_in(&name_line, k, n);
}

/* Whether w (n bytes, in lower case) is a scheme word ("basic", "bearer"). */
int
redact_name_scheme(const unsigned char *w, size_t n)
{
	return name_in(&name_schemes, w, n);
}
