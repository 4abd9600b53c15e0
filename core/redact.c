/*
 * Payload redaction: secrets in a recorded message are replaced by
 * "[REDACTED]" in the stored copy (the bytes forwarded never change).
 *
 * Two kinds of rule.  Keys: the value of an object member whose name is
 * one of a set (the built-in one, --redact-key) becomes the string
 * "[REDACTED]", whatever its type.  Patterns: the part of a string that
 * looks like a credential (the built-in token shapes, --redact-regex)
 * becomes [REDACTED] inside the string.
 *
 * The output is the input with those spans spliced in, so everything
 * else stays byte for byte as forwarded.  Input that is not JSON (a bad
 * line, a message cut at the record cap) is walked leniently for keys as
 * far as it goes, and the patterns run over all of its bytes.
 *
 * It runs on every recorded message, so a cheap pass first (secrets_maybe)
 * answers "nothing to do" for most; the walk is iterative (any depth) and
 * every scan is linear in the input.
 */

#include <stdlib.h>
#include <string.h>

#include "redact_int.h"

/*
 * The built-in key names, as they are compared: lower case, without '_'
 * and '-' (so api_key, api-key, apiKey and APIKEY are all "apikey").
 * Exact names only: progressToken (MCP's) or nextPageToken stay.
 */
const char *const redact_default_keys[] = {
	"password", "passwd", "passphrase",
	"secret", "clientsecret", "secretkey", "secretaccesskey",
	"token", "accesstoken", "refreshtoken", "idtoken", "authtoken",
	"sessiontoken",
	"apikey", "xapikey",
	"authorization", "proxyauthorization",
	"cookie", "setcookie",
	"privatekey",
	/* OAuth's request and registration members (RFC 6749, 7523, 7591,
	   7636, 8628, 8693); "code" is not here: JSON-RPC errors have one. */
	"clientassertion", "assertion", "codeverifier", "devicecode",
	"subjecttoken", "actortoken", "registrationaccesstoken",
	NULL
};

/*
 * Members of these (a JSON Schema's) are names of properties, and an
 * object under such a name is a schema: {"properties": {"password":
 * {"type": "string"}}} in a tools/list or an elicitation keeps its schema.
 */
static const char *const redact_schema_keys[] = {
	"properties", "patternproperties", "definitions", "$defs", NULL
};
#define REDACT_SCHEMA_KEY_MAX	17	/* strlen("patternproperties") */

/* What replaces a member's value, and a match inside a string. */
#define REDACT_VALUE	"\"" REDACTED "\""

/* Frames of nesting the walk keeps without allocating. */
#define REDACT_STACK_LOCAL	64
/*
 * How deep JSON held in a string (a tool's result as text) is walked as
 * JSON: a string in a string in a string...  Each level costs a decoded
 * copy of the string, so the bound keeps a message's cost linear.
 */
#define REDACT_JSON_IN_STRING_MAX	4

/* A run of input bytes and what replaces them. */
struct span {
	size_t		 off;
	size_t		 len;
	const char	*repl;
	size_t		 repl_len;
	char		*owned;		/* repl, when it was built */
	int		 is_value;	/* a member's whole value */
};

struct walk {
	const struct redact	*r;
	const unsigned char	*base;
	const unsigned char	*end;
	struct span		*spans;
	size_t			 nspans;
	size_t			 cap;
	/* Per open container: REDACT_F_* bits. */
	unsigned char		 local[REDACT_STACK_LOCAL];
	unsigned char		*stack;
	size_t			 depth;
	size_t			 stack_cap;
	int			 level;	/* JSON in strings: how deep */
	/*
	 * JSON text that is free text (a stderr line, an error body): the
	 * names-by-shape rule for members with a scalar value, and the text
	 * rule inside strings (redact_text.c), the result still JSON.
	 */
	int			 text;
};

static size_t	redact_buf_level(const struct redact *, const void *, size_t,
		    char **, size_t *, int, int);

#define REDACT_F_OBJECT	0x1	/* an object, not an array */
#define REDACT_F_SCHEMA	0x2	/* its members name schema properties */

static int
key_is_schema(const unsigned char *k, size_t n)
{
	size_t	i;

	for (i = 0; redact_schema_keys[i] != NULL; i++) {
		if (strlen(redact_schema_keys[i]) == n &&
		    memcmp(redact_schema_keys[i], k, n) == 0)
			return 1;
	}
	return 0;
}

/* Whether a key (the bytes between its quotes) names a redacted member. */
int
redact_key_matches(const struct redact *r, const char *key, size_t len)
{
	unsigned char	buf[256];
	size_t		n, cap = r->key_max < sizeof buf ? r->key_max :
			    sizeof buf;

	if (r->nkeys == 0)
		return 0;
	n = secrets_key_norm((const unsigned char *)key, len, buf, cap);
	return n <= cap && secrets_key_listed(r, buf, n);
}

/* The rules: the built-in ones when defaults is set, else none yet. */
struct redact *
redact_new(int defaults)
{
	struct redact	*r = xcalloc(1, sizeof *r);

	secrets_init();
	redact_name_init();
	if (defaults)
		redact_add_defaults(r);
	return r;
}

/* Add the built-in rules: the key names and the credential shapes. */
void
redact_add_defaults(struct redact *r)
{
	size_t	 i;
	char	*cause = NULL;

	r->patterns = 1;
	r->shapes = 1;
	for (i = 0; redact_default_keys[i] != NULL; i++) {
		if (redact_add_key(r, redact_default_keys[i], &cause) != 0)
			fatalx("%s", cause);
	}
}

void
redact_free(struct redact *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nkeys; i++)
		free(r->keys[i].name);
	free(r->keys);
	for (i = 0; i < r->nres; i++)
		regfree(&r->res[i]);
	free(r->res);
	free(r);
}

/* Redact the value of every member named name (compared as key_norm). */
int
redact_add_key(struct redact *r, const char *name, char **cause)
{
	unsigned char	buf[256];
	size_t		n, len = strlen(name);

	/* A name is not JSON-escaped: let key_norm see no backslashes. */
	if (strchr(name, '\\') != NULL || len == 0 ||
	    (n = secrets_key_norm((const unsigned char *)name, len, buf,
	    sizeof buf - 1)) == 0 || n >= sizeof buf) {
		xasprintf(cause, "--redact-key '%s': give a member name of 1 "
		    "to %zu characters besides '_' and '-', without a "
		    "backslash", name, sizeof buf - 1);
		return -1;
	}
	r->keys = xreallocarray(r->keys, r->nkeys + 1, sizeof *r->keys);
	r->keys[r->nkeys].name = xstrndup((const char *)buf, n);
	r->keys[r->nkeys].len = n;
	r->keys[r->nkeys].next = r->key_head[buf[0]];
	r->key_head[buf[0]] = r->nkeys + 1;
	r->nkeys++;
	if (n > r->key_max)
		r->key_max = n;
	if (r->key_min == 0 || n < r->key_min)
		r->key_min = n;
	r->key_first[buf[0]] = 1;
	return 0;
}

/* Redact what re (a POSIX extended regex) matches in any string. */
int
redact_add_regex(struct redact *r, const char *re, char **cause)
{
	regex_t	rx;
	char	err[256];
	int	rc;

	if ((rc = regcomp(&rx, re, REG_EXTENDED)) != 0) {
		regerror(rc, &rx, err, sizeof err);
		xasprintf(cause, "--redact-regex '%s': %s; give a POSIX "
		    "extended regular expression (as grep -E takes)", re, err);
		return -1;
	}
	r->res = xreallocarray(r->res, r->nres + 1, sizeof *r->res);
	r->res[r->nres++] = rx;
	return 0;
}

/* Whether there is no rule at all (nothing will ever be redacted). */
int
redact_is_empty(const struct redact *r)
{
	return r == NULL || (r->nkeys == 0 && r->nres == 0 &&
	    !r->patterns && !r->shapes);
}

static void
walk_span(struct walk *wk, size_t off, size_t len, const char *repl,
    size_t repl_len, char *owned, int is_value)
{
	struct span	*sp;

	if (wk->nspans == wk->cap) {
		wk->cap = wk->cap ? wk->cap * 2 : 8;
		wk->spans = xreallocarray(wk->spans, wk->cap,
		    sizeof *wk->spans);
	}
	sp = &wk->spans[wk->nspans++];
	sp->off = off;
	sp->len = len;
	sp->repl = repl;
	sp->repl_len = repl_len;
	sp->owned = owned;
	sp->is_value = is_value;
}

/* Patterns over raw bytes [off, off + n) of the input, as they are. */
static void
walk_text(struct walk *wk, size_t off, size_t n)
{
	struct range	*rg;
	size_t		 nr, i;

	rg = secrets_matches(wk->r, wk->base + off, n, &nr);
	for (i = 0; i < nr; i++)
		walk_span(wk, off + rg[i].s, rg[i].e - rg[i].s, REDACTED,
		    sizeof REDACTED - 1, NULL, 0);
	free(rg);
}

/* Append the JSON string contents for s[0, n) (UTF-8) to out at *o. */
static void
json_escape(const unsigned char *s, size_t n, char *out, size_t *o)
{
	static const char	hex[] = "0123456789abcdef";
	static const char	shortesc[] = "\b\t\n\f\r";
	const char		*e;
	size_t			i;

	for (i = 0; i < n; i++) {
		unsigned char	c = s[i];

		if (c == '"' || c == '\\') {
			out[(*o)++] = '\\';
			out[(*o)++] = (char)c;
		} else if (c < 0x20 && (e = strchr(shortesc, c)) != NULL &&
		    c != '\0') {
			out[(*o)++] = '\\';
			out[(*o)++] = "btnfr"[e - shortesc];
		} else if (c < 0x20) {
			out[(*o)++] = '\\';
			out[(*o)++] = 'u';
			out[(*o)++] = '0';
			out[(*o)++] = '0';
			out[(*o)++] = hex[c >> 4];
			out[(*o)++] = hex[c & 0xf];
		} else
			out[(*o)++] = (char)c;
	}
}

/* Whether decoded string contents look like JSON text (an object, array). */
static int
string_holds_json(const unsigned char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n && (secrets_cls[s[i]] & C_WS); i++)
		;
	return i < n && (s[i] == '{' || s[i] == '[');
}

/*
 * Whether the raw contents of an escaped string may be JSON text: blanks
 * (or their escapes) and then '{' or '['.
 */
static int
raw_may_hold_json(const unsigned char *s, size_t n)
{
	size_t	i = 0;

	while (i < n) {
		if (secrets_cls[s[i]] & C_WS)
			i++;
		else if (s[i] == '\\' && i + 1 < n && strchr("nrt", s[i + 1]) !=
		    NULL)
			i += 2;
		else
			break;
	}
	return i < n && (s[i] == '{' || s[i] == '[');
}

/* Whether s holds a byte the text rule acts at ('=', ':', '-'). */
static int
string_has_sep(const unsigned char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (s[i] == '=' || s[i] == ':' || s[i] == '-')
			return 1;
	}
	return 0;
}

/*
 * The patterns over a string's contents, raw bytes [off, off + n) with
 * \-escapes when escaped: matched in the decoded text, and then the
 * whole of the contents is written anew.  A string holding JSON (a tool's
 * result as text) is redacted as JSON first, members and all.
 */
static void
walk_string(struct walk *wk, size_t off, size_t n, int escaped)
{
	struct range	*rg;
	unsigned char	*dec;
	char		*out, *inner;
	size_t		 dn, nr, i, o, at, innerlen;
	int		 changed = 0, json;

	/*
	 * As text, a string with no escape, no separator of the text rule
	 * and nothing the quick pass finds has nothing to redact.
	 */
	if (wk->text && !escaped && !string_has_sep(wk->base + off, n) &&
	    !secrets_maybe(wk->r, wk->base + off, n))
		return;
	if (!wk->text) {
		/*
		 * Keys only: an escaped string can hold a member only when
		 * it holds JSON, which starts as JSON does.
		 */
		if (wk->r->nres == 0 && !wk->r->patterns && (!escaped ||
		    wk->r->nkeys == 0 || wk->level >= REDACT_JSON_IN_STRING_MAX ||
		    !raw_may_hold_json(wk->base + off, n)))
			return;
		if (!escaped) {
			walk_text(wk, off, n);
			return;
		}
	}
	dec = xmalloc(n + 1);
	if (!escaped) {
		memcpy(dec, wk->base + off, n);
		dn = n;
	} else if (scan_string_decode((const char *)wk->base + off, n,
	    (char *)dec, &dn) != 0) {
		/* A bad escape (not JSON): the patterns see the raw bytes. */
		free(dec);
		walk_text(wk, off, n);
		return;
	}
	json = wk->level < REDACT_JSON_IN_STRING_MAX &&
	    string_holds_json(dec, dn) && (!wk->text || scan_is_json(dec, dn));
	if (json && redact_buf_level(wk->r, dec, dn, &inner, &innerlen,
	    wk->level + 1, wk->text) != 0) {
		free(dec);
		dec = (unsigned char *)inner;
		dn = innerlen;
		changed = 1;
	} else if (wk->text && !json && redact_text_plain(wk->r, dec, dn,
	    &inner, &innerlen) != 0) {
		/* The text rule over the contents (the shapes included). */
		free(dec);
		dec = (unsigned char *)inner;
		dn = innerlen;
		changed = 1;
	}
	rg = NULL;
	nr = 0;
	/*
	 * As text, the shapes ran with the text rule or the inner walk;
	 * JSON in the string had them over each of its strings (or, not
	 * JSON after all, over all of it), a regex aside.
	 */
	if ((wk->r->nres > 0 || (wk->r->patterns && !json)) && !wk->text)
		rg = secrets_matches(wk->r, dec, dn, &nr);
	if (nr == 0 && !changed) {
		free(dec);
		return;
	}
	/* Escaping at most sixfolds a byte; each match adds REDACTED. */
	out = xmalloc(dn * 6 + nr * (sizeof REDACTED - 1) + 1);
	for (i = 0, o = 0, at = 0; i < nr; i++) {
		json_escape(dec + at, rg[i].s - at, out, &o);
		memcpy(out + o, REDACTED, sizeof REDACTED - 1);
		o += sizeof REDACTED - 1;
		at = rg[i].e;
	}
	json_escape(dec + at, dn - at, out, &o);
	walk_span(wk, off, n, out, o, out, 0);
	free(rg);
	free(dec);
}

static void
walk_push(struct walk *wk, unsigned char flags)
{
	if (wk->depth == wk->stack_cap) {
		size_t		 ncap = wk->stack_cap * 2;
		unsigned char	*ns = xmalloc(ncap);

		memcpy(ns, wk->stack, wk->stack_cap);
		if (wk->stack != wk->local)
			free(wk->stack);
		wk->stack = ns;
		wk->stack_cap = ncap;
	}
	wk->stack[wk->depth++] = flags;
}

static unsigned char
walk_top(const struct walk *wk)
{
	return wk->depth > 0 ? wk->stack[wk->depth - 1] : 0;
}

/*
 * The end of the string whose quote is at p: the byte after its closing
 * quote, or end when it has none (a cut message).  *escaped: it has a \;
 * *closed: it has its closing quote.
 */
static const unsigned char *
string_end(const unsigned char *p, const unsigned char *end, int *escaped,
    int *closed)
{
	*escaped = 0;
	*closed = 0;
	for (p++; p < end; p++) {
		if (*p == '"') {
			*closed = 1;
			return p + 1;
		}
		if (*p == '\\') {
			*escaped = 1;
			if (++p >= end)
				break;
		}
	}
	return end;
}

/* The end of the value at v, leniently: a cut one ends at end. */
static const unsigned char *
value_end(const unsigned char *v, const unsigned char *end)
{
	const unsigned char	*p;
	size_t			 depth = 0;
	int			 esc, closed;

	if (v >= end)
		return v;
	switch (*v) {
	case '"':
		return string_end(v, end, &esc, &closed);
	case '{':
	case '[':
		for (p = v; p < end; ) {
			switch (*p) {
			case '"':
				p = string_end(p, end, &esc, &closed);
				continue;
			case '{':
			case '[':
				depth++;
				break;
			case '}':
			case ']':
				if (--depth == 0)
					return p + 1;
				break;
			default:
				break;
			}
			p++;
		}
		return end;
	case ':':
		return v;
	default:
		for (p = v; p < end && !(secrets_cls[*p] & C_STOP); p++)
			;
		return p;
	}
}

/* Whether [v, ve) is a value with nothing to hide (null, "", ours). */
static int
value_is_empty(const unsigned char *v, const unsigned char *ve)
{
	size_t	n = (size_t)(ve - v);

	return n == 0 || (n == 4 && memcmp(v, "null", 4) == 0) ||
	    (n == 2 && memcmp(v, "\"\"", 2) == 0) ||
	    (n == sizeof REDACT_VALUE - 1 && memcmp(v, REDACT_VALUE, n) == 0);
}

static const unsigned char *
skip_ws(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (secrets_cls[*p] & C_WS))
		p++;
	return p;
}

/*
 * Walk the input's structure, leniently: containers, strings, which
 * strings are keys, and the values of the keys to redact.
 */
static void
walk_json(struct walk *wk)
{
	const struct redact	*r = wk->r;
	const unsigned char	*p = wk->base, *end = wk->end, *q, *v, *ve;
	unsigned char		 kn[256];
	size_t			 kcap, kl, clen;
	int			 esc, closed, schema_next = 0, listed;

	kcap = r->key_max > REDACT_SCHEMA_KEY_MAX ? r->key_max :
	    REDACT_SCHEMA_KEY_MAX;
	if (kcap > sizeof kn)
		kcap = sizeof kn;
	while (p < end) {
		switch (*p) {
		case '{':
			walk_push(wk, REDACT_F_OBJECT |
			    (schema_next ? REDACT_F_SCHEMA : 0));
			schema_next = 0;
			p++;
			continue;
		case '[':
			walk_push(wk, 0);
			schema_next = 0;
			p++;
			continue;
		case '}':
		case ']':
			if (wk->depth > 0)
				wk->depth--;
			p++;
			continue;
		case '"':
			break;
		default:
			if (!(secrets_cls[*p] & C_WS))
				schema_next = 0;
			p++;
			continue;
		}
		q = string_end(p, end, &esc, &closed);
		clen = (size_t)(q - p - 1) - (closed ? 1 : 0);
		walk_string(wk, (size_t)(p + 1 - wk->base), clen, esc);
		v = skip_ws(q, end);
		if (!(walk_top(wk) & REDACT_F_OBJECT) || v >= end ||
		    *v != ':') {
			schema_next = 0;
			p = q;
			continue;
		}
		/* A key. */
		kl = secrets_key_norm(p + 1, clen, kn, kcap);
		listed = kl <= kcap && r->nkeys > 0 && secrets_key_listed(r, kn, kl);
		v = skip_ws(v + 1, end);
		if (!listed && wk->text && v < end && *v != '{' && *v != '[') {
			ve = value_end(v, end);
			listed = redact_text_member(r, (const char *)p + 1,
			    clen, v, (size_t)(ve - v));
		}
		if (listed && !((walk_top(wk) & REDACT_F_SCHEMA) && v < end &&
		    *v == '{')) {
			ve = value_end(v, end);
			if (!value_is_empty(v, ve))
				walk_span(wk, (size_t)(v - wk->base),
				    (size_t)(ve - v), REDACT_VALUE,
				    sizeof REDACT_VALUE - 1, NULL, 1);
			schema_next = 0;
			p = ve;
			continue;
		}
		schema_next = kl <= kcap && key_is_schema(kn, kl);
		p = v;
	}
}

static int
span_cmp(const void *a, const void *b)
{
	const struct span	*x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return (x->len < y->len) - (x->len > y->len);
}

/*
 * Put the spans in order and merge those that overlap: one that takes a
 * member's value whole replaces it as a JSON string; a mix of others, as
 * [REDACTED].
 */
static void
spans_merge(struct walk *wk)
{
	struct span	*a, *b;
	size_t		 i, o;

	if (wk->nspans < 2)
		return;
	qsort(wk->spans, wk->nspans, sizeof *wk->spans, span_cmp);
	for (i = 1, o = 0; i < wk->nspans; i++) {
		a = &wk->spans[o];
		b = &wk->spans[i];
		if (b->off >= a->off + a->len) {
			wk->spans[++o] = *b;
			continue;
		}
		if (b->off + b->len > a->off + a->len)
			a->len = b->off + b->len - a->off;
		if (b->is_value && !a->is_value) {
			free(a->owned);
			a->owned = NULL;
			a->repl = REDACT_VALUE;
			a->repl_len = sizeof REDACT_VALUE - 1;
			a->is_value = 1;
		} else if (!a->is_value) {
			free(a->owned);
			a->owned = NULL;
			a->repl = REDACTED;
			a->repl_len = sizeof REDACTED - 1;
		}
		free(b->owned);
	}
	wk->nspans = o + 1;
}

/*
 * Redact len bytes at buf.  Returns how many values or matches were
 * replaced; when that is not 0, *out is a new allocation of *outlen bytes
 * (the input with the replacements), else *out is left alone.
 */
size_t
redact_buf(const struct redact *r, const void *buf, size_t len, char **out,
    size_t *outlen)
{
	return redact_buf_level(r, buf, len, out, outlen, 0, 0);
}

/*
 * redact_buf() for JSON text met as free text (redact_text): also the
 * members named like a secret (names by shape) with a scalar value, and
 * the text rule inside every string; the result is JSON still.
 */
size_t
redact_buf_text(const struct redact *r, const void *buf, size_t len,
    char **out, size_t *outlen)
{
	return redact_buf_level(r, buf, len, out, outlen, 0, 1);
}

/* redact_buf() of JSON held in strings level deep. */
static size_t
redact_buf_level(const struct redact *r, const void *buf, size_t len,
    char **out, size_t *outlen, int level, int text)
{
	struct walk	 wk;
	const char	*in = buf;
	size_t		 i, at, o, total, count;
	char		*res;

	if (redact_is_empty(r) || len == 0)
		return 0;
	/* The quick pass knows the keys and shapes, not names by shape. */
	if (!(text && (r->shapes || r->nkeys > 0)) &&
	    !secrets_maybe(r, (const unsigned char *)buf, len))
		return 0;
	memset(&wk, 0, sizeof wk);
	wk.r = r;
	wk.base = buf;
	wk.end = wk.base + len;
	wk.stack = wk.local;
	wk.stack_cap = sizeof wk.local;
	wk.level = level;
	wk.text = text;
	walk_json(&wk);
	/* Not JSON: the patterns see every byte, quoted or not. */
	if ((r->nres > 0 || r->patterns) && !scan_is_json(buf, len))
		walk_text(&wk, 0, len);
	if (wk.stack != wk.local)
		free(wk.stack);
	spans_merge(&wk);
	if ((count = wk.nspans) == 0) {
		free(wk.spans);
		return 0;
	}

	total = len;
	for (i = 0; i < wk.nspans; i++)
		total = total - wk.spans[i].len + wk.spans[i].repl_len;
	res = xmalloc(total + 1);
	for (i = 0, at = 0, o = 0; i < wk.nspans; i++) {
		memcpy(res + o, in + at, wk.spans[i].off - at);
		o += wk.spans[i].off - at;
		memcpy(res + o, wk.spans[i].repl, wk.spans[i].repl_len);
		o += wk.spans[i].repl_len;
		at = wk.spans[i].off + wk.spans[i].len;
		free(wk.spans[i].owned);
	}
	memcpy(res + o, in + at, len - at);
	o += len - at;
	res[o] = '\0';
	free(wk.spans);
	*out = res;
	*outlen = o;
	return count;
}

/*
 * The stored copy of message m (the caller's, taken): m itself when
 * nothing was redacted, else a new message with the redacted bytes,
 * MSG_REDACTED, and wire_size the length forwarded.  A redacted message
 * keeps no SHA-256: with every other byte of the message in the row, the
 * hash of the original would let anyone test guesses of the secret.  A
 * message cut at the record cap keeps its hash: that covers bytes the row
 * does not hold, so it tests nothing.
 */
struct msg *
redact_msg(const struct redact *r, struct msg *m)
{
	char		*out;
	size_t		 outlen;

	if (redact_buf(r, m->raw, m->len, &out, &outlen) == 0)
		return m;
	return redact_msg_replace(m, out, outlen);
}

/*
 * A new message holding out (taken: outlen bytes) in place of m's bytes,
 * with m's times, size on the wire, digest and identity, marked redacted;
 * m is freed.
 */
struct msg *
redact_msg_replace(struct msg *m, char *out, size_t outlen)
{
	struct msg	*n;

	n = msg_alloc(m->dir, outlen);
	memcpy(n->raw, out, outlen);
	free(out);
	n->ts_ns = m->ts_ns;
	n->mono_ns = m->mono_ns;
	n->sse_id = m->sse_id;
	m->sse_id = NULL;
	n->wire_size = m->wire_size >= 0 ? m->wire_size : (int64_t)m->len;
	n->flags = m->flags | MSG_REDACTED;
	n->fault = m->fault;
	n->fault_role = m->fault_role;
	if (m->flags & MSG_TRUNCATED) {
		n->sha256 = m->sha256;
		m->sha256 = NULL;
	}
	n->ident = m->ident;
	n->ident_len = m->ident_len;
	m->ident = NULL;
	n->fault = m->fault;
	n->fault_role = m->fault_role;
	msg_free(m);
	return n;
}
