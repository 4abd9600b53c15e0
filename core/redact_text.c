/*
 * Secrets outside JSON members: in text (a server's stderr, events, header
 * values), in URLs and request targets, in form-encoded bodies and in a
 * server's command line.  What they share is the rule for names: a field,
 * parameter, header, flag or variable is a secret by the shape of its name
 * (redact_name.c; docs/redaction.md lists the words), and its value is
 * replaced by
 * [REDACTED]; the names stay.  The credential shapes of secrets.c run over
 * all of it too.
 *
 * Every scan is linear: a name is looked for at most REDACT_NAME_MAX bytes
 * back from its separator, a value at most TEXT_VALUE_MAX on, and the scan
 * goes on after the value it took.
 */

#include <stdlib.h>
#include <string.h>

#include "redact_int.h"

/* How far a value is followed (a quoted one to its closing quote). */
#define TEXT_VALUE_MAX	65536
/* Blanks allowed between a name, its separator and its value. */
#define TEXT_GAP_MAX	4

/* A growing list of byte ranges to replace. */
struct ranges {
	struct range	*v;
	size_t		 n;
	size_t		 cap;
};

static void
ranges_add(struct ranges *rs, size_t s, size_t e)
{
	if (e <= s)
		return;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 8;
		rs->v = xreallocarray(rs->v, rs->cap, sizeof *rs->v);
	}
	rs->v[rs->n].s = s;
	rs->v[rs->n].e = e;
	rs->n++;
}

static int
ranges_cmp(const void *a, const void *b)
{
	const struct range	*x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

/*
 * s with the ranges (merged where they overlap) replaced by [REDACTED]:
 * a new allocation, NUL-terminated, or NULL when there are none or each
 * is [REDACTED] already.  Frees the ranges.
 */
static char *
ranges_splice(struct ranges *rs, const unsigned char *s, size_t n,
    size_t *outlen)
{
	const size_t	 rl = sizeof REDACTED - 1;
	size_t		 i, o, at, total, changed = 0;
	char		*out = NULL;

	if (rs->n > 1) {
		qsort(rs->v, rs->n, sizeof *rs->v, ranges_cmp);
		for (i = 1, o = 0; i < rs->n; i++) {
			if (rs->v[i].s <= rs->v[o].e) {
				if (rs->v[i].e > rs->v[o].e)
					rs->v[o].e = rs->v[i].e;
			} else
				rs->v[++o] = rs->v[i];
		}
		rs->n = o + 1;
	}
	for (i = 0, total = n; i < rs->n; i++) {
		total = total - (rs->v[i].e - rs->v[i].s) + rl;
		if (rs->v[i].e - rs->v[i].s != rl ||
		    memcmp(s + rs->v[i].s, REDACTED, rl) != 0)
			changed++;
	}
	if (changed > 0) {
		out = xmalloc(total + 1);
		for (i = 0, o = 0, at = 0; i < rs->n; i++) {
			memcpy(out + o, s + at, rs->v[i].s - at);
			o += rs->v[i].s - at;
			memcpy(out + o, REDACTED, rl);
			o += rl;
			at = rs->v[i].e;
		}
		memcpy(out + o, s + at, n - at);
		o += n - at;
		out[o] = '\0';
		*outlen = o;
	}
	free(rs->v);
	memset(rs, 0, sizeof *rs);
	return out;
}

static int
text_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* [A-Za-z0-9_.-]: the bytes of a name in text. */
static int
text_name_byte(unsigned char c)
{
	return (secrets_cls[c] & C_TOKEN) || c == '.';
}

/* What ends a bare value in text. */
static int
text_value_stop(unsigned char c)
{
	return (secrets_cls[c] & C_WS) || c == '\0' || c == '&' ||
	    c == ',' || c == ';' || c == '"' || c == '\'' || c == '<' ||
	    c == '>' || c == ')' || c == ']' || c == '}' || c == '#' ||
	    c == '`';
}

static int
text_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* The end of a bare value from v ("[REDACTED]" whole: ours already). */
static size_t
text_bare_end(const unsigned char *s, size_t v, size_t n)
{
	size_t	e;

	if (n - v >= sizeof REDACTED - 1 && memcmp(s + v, REDACTED,
	    sizeof REDACTED - 1) == 0)
		return v + sizeof REDACTED - 1;
	/* An escape is the value's (never its end: "abc\\\"def" is one). */
	for (e = v; e < n && e - v < TEXT_VALUE_MAX && !text_value_stop(s[e]);
	    e++) {
		if (s[e] == '\\' && e + 1 < n && !text_value_stop(s[e + 1]))
			e++;
		else if (s[e] == '\\' && e + 1 < n && s[e + 1] == '"')
			e++;
	}
	if (e > n)
		e = n;
	return e;
}

/*
 * The value at v (after a separator and its blanks) as [*vs, *ve): a
 * quoted one up to its closing quote (or the line's end), else a bare
 * word; a scheme word ("Basic", "Bearer") takes the word after it as the
 * value.  Returns where the scan goes on.
 */
static size_t
text_value(const unsigned char *s, size_t v, size_t n, size_t *vs,
    size_t *ve)
{
	unsigned char	lw[16];
	size_t		e, w, i;
	unsigned char	q;

	*vs = *ve = v;
	if (v >= n)
		return v;
	if (s[v] == '"' || s[v] == '\'') {
		q = s[v];
		for (e = v + 1; e < n && e - v < TEXT_VALUE_MAX && s[e] != q &&
		    s[e] != '\n'; e++) {
			if (s[e] == '\\' && e + 1 < n)
				e++;
		}
		if (e > n)
			e = n;
		*vs = v + 1;
		*ve = e;
		return e < n ? e + 1 : e;
	}
	e = text_bare_end(s, v, n);
	if (e - v < sizeof lw && e < n && text_blank(s[e])) {
		for (i = 0; i < e - v; i++)
			lw[i] = (unsigned char)text_lower(s[v + i]);
		if (redact_name_scheme(lw, e - v)) {
			for (w = e; w < n && w - e < TEXT_GAP_MAX &&
			    text_blank(s[w]); w++)
				;
			*vs = w;
			*ve = text_bare_end(s, w, n);
			return *ve;
		}
	}
	*vs = v;
	*ve = e;
	return e;
}

/*
 * The value at v of a name in redact_name_line: after its scheme word if
 * it has one, to the end of the line or to the quote that opened the
 * text around it (quote, not 0; an escaped one does not end it), blanks
 * at its end left out.  Returns where the scan goes on.
 */
static size_t
text_line_value(const unsigned char *s, size_t v, size_t n,
    unsigned char quote, size_t *vs, size_t *ve)
{
	unsigned char	lw[16];
	size_t		e, w, i;

	for (e = v; e < n && e - v < sizeof lw && (secrets_cls[s[e]] &
	    C_ALNUM); e++)
		lw[e - v] = (unsigned char)text_lower(s[e]);
	if (e > v && e - v < sizeof lw && e < n && text_blank(s[e]) &&
	    redact_name_scheme(lw, e - v)) {
		for (w = e; w < n && w - e < TEXT_GAP_MAX && text_blank(s[w]);
		    w++)
			;
		v = w;
	}
	for (e = v; e < n && e - v < TEXT_VALUE_MAX && s[e] != '\n' &&
	    s[e] != '\r'; e++) {
		if (s[e] == '\\' && e + 1 < n && s[e + 1] != '\n') {
			e++;
			continue;
		}
		if (quote != 0 && s[e] == quote)
			break;
	}
	if (e > n)
		e = n;
	for (i = e; i > v && text_blank(s[i - 1]); i--)
		;
	*vs = v;
	*ve = i;
	return e;
}

/*
 * name=value or name: value with the separator at i: the value's range
 * when the name is a secret's.  Returns where the scan goes on.
 */
static size_t
text_pair(const struct redact *r, const unsigned char *s, size_t i,
    size_t n, struct ranges *rs)
{
	size_t		e = i, b, v, vs, ve, next;
	unsigned char	q = 0;

	if (s[i] == ':' && n - i >= 3 && s[i + 1] == '/' && s[i + 2] == '/')
		return i + 1;	/* a URL's scheme */
	if (s[i] == '=' && ((i + 1 < n && s[i + 1] == '=') || (i > 0 &&
	    strchr("=!<>", s[i - 1]) != NULL)))
		return i + 1;	/* a comparison */
	while (e > 0 && i - e < TEXT_GAP_MAX && text_blank(s[e - 1]))
		e--;
	if (e > 0 && (s[e - 1] == '"' || s[e - 1] == '\'')) {
		q = s[e - 1];
		e--;
	}
	for (b = e; b > 0 && e - b <= REDACT_NAME_MAX && text_name_byte(s[b - 1]);
	    b--)
		;
	if (b == e || e - b > REDACT_NAME_MAX)
		return i + 1;
	if (q != 0 && (b == 0 || s[b - 1] != q))
		return i + 1;
	/*
	 * "GET /sse?p=session_id: ..." (a log line naming a URL): a query's
	 * value before a colon, not a name.
	 */
	if (s[i] == ':' && q == 0 && b > 0 && s[b - 1] == '=')
		return i + 1;
	/* "$.params.password: ..." names a place (a JSONPath), not a value. */
	if (q == 0 && b > 0 && s[b - 1] == '$')
		return i + 1;
	/* The short names only as a query's or a form's ("?code=", "&pin="). */
	if (!redact_name_match(r, (const char *)s + b, e - b, s[i] == '=' &&
	    b > 0 && strchr("?&;#", s[b - 1]) != NULL))
		return i + 1;
	for (v = i + 1; v < n && v - i <= TEXT_GAP_MAX && text_blank(s[v]); v++)
		;
	if (v < n && s[v] != '"' && s[v] != '\'' &&
	    redact_name_to_eol((const char *)s + b, e - b))
		next = text_line_value(s, v, n, q == 0 && b > 0 &&
		    (s[b - 1] == '"' || s[b - 1] == '\'') ? s[b - 1] : 0,
		    &vs, &ve);
	else
		next = text_value(s, v, n, &vs, &ve);
	if (!redact_name_count((const char *)s + b, e - b, s + vs, ve - vs))
		ranges_add(rs, vs, ve);
	return next > i + 1 ? next : i + 1;
}

/*
 * "--flag value" or "-flag value" with the dash at i (a word's start):
 * the value's range when the flag names a secret.
 */
static size_t
text_flag(const struct redact *r, const unsigned char *s, size_t i, size_t n,
    struct ranges *rs)
{
	size_t	f = i + 1, g, v, e;

	if (f < n && s[f] == '-')
		f++;
	if (f >= n || !(secrets_cls[s[f]] & C_ALNUM))
		return i + 1;
	for (g = f; g < n && g - f <= REDACT_NAME_MAX && text_name_byte(s[g]);
	    g++)
		;
	if (g - f < 2 || g >= n || !text_blank(s[g]))
		return g;
	for (v = g; v < n && v - g < TEXT_GAP_MAX && text_blank(s[v]); v++)
		;
	if (v >= n || s[v] == '-' || text_value_stop(s[v]) ||
	    !redact_name_secret(r, (const char *)s + f, g - f))
		return g;
	e = text_bare_end(s, v, n);
	if (!redact_name_count((const char *)s + f, g - f, s + v, e - v))
		ranges_add(rs, v, e);
	return e;
}

/* The ranges of secrets' values after their names in text. */
static void
text_pairs(const struct redact *r, const unsigned char *s, size_t n,
    struct ranges *rs)
{
	size_t	i = 0;

	if (r == NULL || (!r->shapes && r->nkeys == 0))
		return;
	while (i < n) {
		switch (s[i]) {
		case '=':
		case ':':
			i = text_pair(r, s, i, n, rs);
			break;
		case '-':
			if (i == 0 || (secrets_cls[s[i - 1]] & C_WS) ||
			    s[i - 1] == '"' || s[i - 1] == '\'')
				i = text_flag(r, s, i, n, rs);
			else
				i++;
			break;
		default:
			i++;
			break;
		}
	}
}

/* The credential shapes (and --redact-regex) over s, as ranges. */
static void
text_shapes(const struct redact *r, const unsigned char *s, size_t n,
    struct ranges *rs)
{
	struct range	*rg;
	size_t		 nr, i;

	if (r == NULL || (!r->patterns && r->nres == 0))
		return;
	rg = secrets_matches(r, s, n, &nr);
	for (i = 0; i < nr; i++)
		ranges_add(rs, rg[i].s, rg[i].e);
	free(rg);
}

/*
 * Whether text is a JSON object or array (a JSON log line, an error
 * body): a bare number or string is text like any other.
 */
static int
text_json(const unsigned char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n && (secrets_cls[s[i]] & C_WS); i++)
		;
	return i < n && (s[i] == '{' || s[i] == '[') && scan_is_json(s, n);
}

/*
 * Redact free text (a stderr line, an event, a header's value, an argv
 * element): members as in a message (redact_buf), the credential shapes,
 * and the value after every name of a secret ("password=X", "token: X",
 * "api_key=\"X\"", "\"secret\": \"X\"", "--token X", "Authorization:
 * Basic X").  Text that is JSON (a server logging JSON lines, an error
 * body) is redacted as JSON (redact_buf_text) and stays JSON.  Returns
 * how many ranges were replaced; when not 0, *out is a new allocation of
 * *outlen bytes (NUL-terminated).
 */
size_t
redact_text(const struct redact *r, const void *buf, size_t len, char **out,
    size_t *outlen)
{
	struct ranges	 rs;
	char		*first = NULL, *res;
	const void	*s = buf;
	size_t		 flen, n = len, count;

	if (r == NULL || len == 0)
		return 0;
	if (text_json(buf, len)) {
		count = redact_buf_text(r, buf, len, &first, &flen);
		if (count == 0)
			return 0;
		/* NUL-terminated, as the text path's. */
		res = xmalloc(flen + 1);
		memcpy(res, first, flen);
		res[flen] = '\0';
		free(first);
		*out = res;
		*outlen = flen;
		return count;
	}
	/* The shapes run there (walk_text) when any can be in the text. */
	if (redact_buf(r, buf, len, &first, &flen) != 0) {
		s = first;
		n = flen;
	}
	memset(&rs, 0, sizeof rs);
	text_pairs(r, s, n, &rs);
	count = rs.n;
	res = ranges_splice(&rs, s, n, outlen);
	if (res == NULL) {
		if (first == NULL)
			return 0;
		*out = first;
		*outlen = flen;
		return 1;
	}
	free(first);
	*out = res;
	return count > 0 ? count : 1;
}

/*
 * The text rule over s (the decoded contents of a JSON string): the
 * values after names of secrets and the credential shapes, nothing
 * parsed as JSON.  Returns as redact_text() does.
 */
size_t
redact_text_plain(const struct redact *r, const void *buf, size_t len,
    char **out, size_t *outlen)
{
	struct ranges	 rs;
	size_t		 count;

	if (r == NULL || len == 0)
		return 0;
	memset(&rs, 0, sizeof rs);
	text_pairs(r, buf, len, &rs);
	text_shapes(r, buf, len, &rs);
	count = rs.n;
	if ((*out = ranges_splice(&rs, buf, len, outlen)) == NULL)
		return 0;
	return count;
}

/*
 * Whether a member of JSON met as text, named name (the bytes between
 * its quotes) with the scalar value v (as written), is a secret's: by
 * names by shape (the short names not: JSON-RPC errors have a "code"),
 * unless v is a count (digits after a name such as "total_tokens").
 */
int
redact_text_member(const struct redact *r, const char *name, size_t len,
    const unsigned char *v, size_t vlen)
{
	return redact_name_match(r, name, len, 0) &&
	    !redact_name_count(name, len, v, vlen);
}

/* A byte of %XX at p (n bytes left), or -1. */
static int
text_pct(const unsigned char *p, size_t n)
{
	int	h, l;

	if (n < 3 || p[0] != '%' || (h = scan_hex_value(p[1])) < 0 ||
	    (l = scan_hex_value(p[2])) < 0)
		return -1;
	return h << 4 | l;
}

/* Percent-decode s[0, n) ('+' is a space) into out (n bytes at least). */
static size_t
text_unpct(const unsigned char *s, size_t n, unsigned char *out)
{
	size_t	i, o = 0;
	int	c;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && (c = text_pct(s + i, n - i)) >= 0) {
			out[o++] = (unsigned char)c;
			i += 2;
		} else
			out[o++] = s[i] == '+' ? ' ' : s[i];
	}
	return o;
}

/*
 * name=value fields in s[from, to), split at any of seps: the value's
 * range for a secret's name (percent-decoded), or for a value that is a
 * credential once decoded.
 */
static void
text_fields(const struct redact *r, const unsigned char *s, size_t from,
    size_t to, const char *seps, struct ranges *rs)
{
	unsigned char	 name[REDACT_NAME_MAX];
	unsigned char	*dec;
	size_t		 p = from, e, eq, nl, dl, nr;
	struct range	*rg;

	while (p < to) {
		for (e = p; e < to && strchr(seps, s[e]) == NULL; e++)
			;
		for (eq = p; eq < e && s[eq] != '='; eq++)
			;
		if (eq < e && eq + 1 < e) {
			if (eq - p <= REDACT_NAME_MAX) {
				nl = text_unpct(s + p, eq - p, name);
				if (redact_name_secret(r, (const char *)name,
				    nl) && !redact_name_count((const char *)name,
				    nl, s + eq + 1, e - eq - 1)) {
					ranges_add(rs, eq + 1, e);
					p = e + 1;
					continue;
				}
			}
			if (r != NULL && (r->patterns || r->nres > 0)) {
				dec = xmalloc(e - eq);
				dl = text_unpct(s + eq + 1, e - eq - 1, dec);
				rg = secrets_matches(r, dec, dl, &nr);
				if (nr > 0)
					ranges_add(rs, eq + 1, e);
				free(rg);
				free(dec);
			}
		}
		p = e + 1;
	}
}

/*
 * A URL or a request target as it may be stored or logged: the password
 * of its userinfo (all of a userinfo without one), the values of secret
 * query and fragment parameters (by name, or by a credential's shape),
 * and the credential shapes anywhere.  r may be NULL (then only a legacy
 * sessionId goes).  Returns a new string.
 */
char *
redact_url(const struct redact *r, const char *url)
{
	const unsigned char	*s = (const unsigned char *)url;
	struct ranges		 rs;
	const unsigned char	*sep;
	size_t			 n = strlen(url), i, a, e, q, h, us, ue;
	size_t			 outlen;
	char			*out;

	memset(&rs, 0, sizeof rs);
	/*
	 * scheme "://" authority, the scheme anywhere ("--repo=https://..."),
	 * or a leading "//" authority: the password of its userinfo, or all
	 * of one without a ':' (whatever the rules).
	 */
	a = 0;
	sep = memmem(s, n, "://", 3);
	if (sep != NULL)
		i = (size_t)(sep - s) + 3;
	else if (n >= 2 && s[0] == '/' && s[1] == '/')
		i = 2;
	else
		i = 0;
	if (i > 0) {
		if (secrets_userinfo(s, i - 2, n, &us, &ue))
			ranges_add(&rs, us, ue);
		for (e = i; e < n && strchr("/?#", s[e]) == NULL; e++)
			;
		a = e;
	}
	/* Path parameters: "/app;jsessionid=X" is a field too. */
	for (q = a; q < n && s[q] != '?' && s[q] != '#'; q++) {
		if (s[q] != ';')
			continue;
		for (e = q + 1; e < n && strchr("/?#", s[e]) == NULL; e++)
			;
		text_fields(r, s, q + 1, e, ";", &rs);
		q = e - 1;
	}
	for (q = a; q < n && s[q] != '?' && s[q] != '#'; q++)
		;
	for (h = q; h < n && s[h] != '#'; h++)
		;
	if (q < h)
		text_fields(r, s, q + 1, h, "&;", &rs);
	if (h < n)
		text_fields(r, s, h + 1, n, "&;", &rs);
	text_shapes(r, s, n, &rs);
	out = ranges_splice(&rs, s, n, &outlen);
	return out != NULL ? out : xstrdup(url);
}

/*
 * An application/x-www-form-urlencoded body: the values of its secret
 * fields (by name, percent-decoded, or a credential's shape) replaced.
 * Returns as redact_buf() does.
 */
size_t
redact_form(const struct redact *r, const void *buf, size_t len, char **out,
    size_t *outlen)
{
	struct ranges	 rs;
	size_t		 count;

	if (len == 0)
		return 0;
	memset(&rs, 0, sizeof rs);
	text_fields(r, buf, 0, len, "&;", &rs);
	count = rs.n;
	if ((*out = ranges_splice(&rs, buf, len, outlen)) == NULL)
		return 0;
	return count;
}

/* Whether an argument is an assignment NAME=... (env, docker -e). */
static size_t
argv_assign(const char *a)
{
	size_t	i;

	if (!((a[0] >= 'A' && a[0] <= 'Z') || (a[0] >= 'a' && a[0] <= 'z') ||
	    a[0] == '_'))
		return 0;
	for (i = 1; a[i] != '\0' && a[i] != '='; i++) {
		if (!(secrets_cls[(unsigned char)a[i]] & C_TOKEN) &&
		    a[i] != '.')
			return 0;
	}
	return a[i] == '=' ? i : 0;
}

/* name (len bytes) followed by "=[REDACTED]" as a new string. */
static char *
argv_with_value(const char *a, size_t len)
{
	char	*s;

	xasprintf(&s, "%.*s=%s", (int)len, a, REDACTED);
	return s;
}

/*
 * An argument (or the value of "--flag=" or "NAME=" in one) with no
 * blank that is user:password@host with no scheme ("--dsn
 * user:pw@tcp(db:3306)/app"): a copy with the password [REDACTED], or
 * NULL.  The password runs to the last '@' before the first '/' after
 * the ':' (one may hold an '@').  An image digest (name:tag@sha256:...)
 * is no password.
 */
static char *
argv_userinfo(const char *a)
{
	const char	*v = a, *colon, *slash, *at, *p;
	size_t		 nl;
	char		*out;

	if (a[0] == '-' && (p = strchr(a, '=')) != NULL)
		v = p + 1;
	else if ((nl = argv_assign(a)) > 0)
		v = a + nl + 1;
	if (strpbrk(v, " \t\r\n") != NULL || strstr(v, "//") != NULL)
		return NULL;
	if ((colon = strchr(v, ':')) == NULL || colon == v ||
	    memchr(v, '/', (size_t)(colon - v)) != NULL ||
	    memchr(v, '@', (size_t)(colon - v)) != NULL)
		return NULL;
	slash = strchr(colon, '/');
	if (slash == NULL)
		slash = colon + strlen(colon);
	for (at = NULL, p = colon + 1; p < slash; p++) {
		if (*p == '@')
			at = p;
	}
	if (at == NULL || at == colon + 1 || at[1] == '\0' ||
	    strncmp(at + 1, "sha256:", 7) == 0 ||
	    strncmp(at + 1, "sha512:", 7) == 0)
		return NULL;
	xasprintf(&out, "%.*s%s%s", (int)(colon + 1 - a), a, REDACTED, at);
	return out;
}

/*
 * A command line as it may be stored or logged (a new NULL-terminated
 * array; free with redact_argv_free): after a flag named like a secret
 * ("--token X", "-api-key X") the next argument unless it is a flag
 * itself, the value of "--flag=X" and of an assignment "NAME=X" with a
 * secret's name, whole; the password of user:password@host with no
 * scheme; then every argument as text (redact_text) and, when it holds
 * "://", as a URL (redact_url).  A one-letter flag ("-p")
 * is not taken for a name: its meaning differs from program to program.
 */
char **
redact_argv(const struct redact *r, char *const *argv)
{
	char		**out;
	char		 *cur, *t;
	const char	 *a, *f, *pf = NULL;
	size_t		  argc, i, nl, tl, pl = 0;
	int		  pending = 0;

	for (argc = 0; argv[argc] != NULL; argc++)
		;
	out = xcalloc(argc + 1, sizeof *out);
	for (i = 0; i < argc; i++) {
		a = argv[i];
		if (pending && !(a[0] == '-' && a[1] == '-') &&
		    !redact_name_count(pf, pl, (const unsigned char *)a,
		    strlen(a))) {
			out[i] = xstrdup(REDACTED);
			pending = 0;
			continue;
		}
		pending = 0;
		cur = NULL;
		if (r != NULL && (r->shapes || r->nkeys > 0) && a[0] == '-' &&
		    a[1] != '\0') {
			f = a + (a[1] == '-' ? 2 : 1);
			nl = strcspn(f, "=");
			if (nl >= 2 && redact_name_secret(r, f, nl)) {
				if (f[nl] == '=' && !redact_name_count(f, nl,
				    (const unsigned char *)f + nl + 1,
				    strlen(f + nl + 1)))
					cur = argv_with_value(a,
					    (size_t)(f - a) + nl);
				else if (f[nl] != '=') {
					pending = 1;
					pf = f;
					pl = nl;
				}
			}
		} else if (r != NULL && (nl = argv_assign(a)) > 0 &&
		    redact_name_secret(r, a, nl))
			cur = argv_with_value(a, nl);
		if (cur == NULL && (r == NULL || r->shapes))
			cur = argv_userinfo(a);
		if (cur == NULL)
			cur = xstrdup(a);
		if (redact_text(r, cur, strlen(cur), &t, &tl) != 0) {
			free(cur);
			cur = t;
		}
		if (strstr(cur, "://") != NULL) {
			t = redact_url(r, cur);
			free(cur);
			cur = t;
		}
		out[i] = cur;
	}
	return out;
}

void
redact_argv_free(char **argv)
{
	size_t	i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
