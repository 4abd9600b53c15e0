/*
 * The top-level JSON-RPC scanner: validates a message as JSON (RFC 8259,
 * UTF-8) without building a tree, and notes the few top-level members that
 * say what the message is.  It runs on every recorded message, so it makes
 * one pass, allocates nothing for nesting up to SCAN_STACK_BYTES * 8 levels
 * and never recurses: any depth is fine.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core.h"

/* Nesting handled without allocation (one bit a level). */
#define SCAN_STACK_BYTES 512
/* Longest decoded key we compare against our member names. */
#define SCAN_KEY_MAX 16

enum member {
	MEMBER_OTHER,
	MEMBER_METHOD,
	MEMBER_ID,
	MEMBER_RESULT,
	MEMBER_ERROR
};

/* A bit stack of open containers: 1 for an object, 0 for an array. */
struct nest {
	unsigned char	 local[SCAN_STACK_BYTES];
	unsigned char	*bits;
	size_t		 cap;		/* in bytes */
	size_t		 depth;
};

static void
nest_init(struct nest *n)
{
	n->bits = n->local;
	n->cap = sizeof n->local;
	n->depth = 0;
}

static void
nest_fini(struct nest *n)
{
	if (n->bits != n->local)
		free(n->bits);
}

static void
nest_push(struct nest *n, int is_object)
{
	size_t	byte = n->depth / 8;

	if (byte >= n->cap) {
		size_t	 ncap = n->cap * 2;
		unsigned char	*nb = xmalloc(ncap);

		memcpy(nb, n->bits, n->cap);
		if (n->bits != n->local)
			free(n->bits);
		n->bits = nb;
		n->cap = ncap;
	}
	if (is_object)
		n->bits[byte] |= (unsigned char)(1u << (n->depth % 8));
	else
		n->bits[byte] &= (unsigned char)~(1u << (n->depth % 8));
	n->depth++;
}

static int
nest_top_is_object(const struct nest *n)
{
	size_t	i = n->depth - 1;

	return (n->bits[i / 8] >> (i % 8)) & 1;
}

static const unsigned char *
skip_ws(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	return p;
}

static int
is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/*
 * Length of the UTF-8 sequence at p if it is well formed (no overlong
 * forms, no surrogates, nothing above U+10FFFF), else 0.
 */
size_t
scan_utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char	c = p[0];
	size_t		n, i;
	unsigned int	cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * Skip the bytes at p that need no look of their own in a string (ASCII
 * from 0x20, neither a quote nor a backslash), 16 at a time: most of a
 * message is such bytes, and byte by byte they cost ~12 instructions each
 * (the writer thread scans every message it records).  Returns the first
 * byte that needs a look, or p when fewer than 16 are left.
 */
static inline const unsigned char *
scan_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i	ctl = _mm_set1_epi8(0x20);
	const __m128i	quote = _mm_set1_epi8('"');
	const __m128i	bslash = _mm_set1_epi8('\\');
	__m128i		x, stop;
	unsigned int	m;

	while (end - p >= 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* Signed: below 0x20 is a control byte or one from 0x80. */
		stop = _mm_or_si128(_mm_cmplt_epi8(x, ctl),
		    _mm_or_si128(_mm_cmpeq_epi8(x, quote),
		    _mm_cmpeq_epi8(x, bslash)));
		if ((m = (unsigned int)_mm_movemask_epi8(stop)) != 0)
			return p + __builtin_ctz(m);
		p += 16;
	}
#else
	(void)end;
#endif
	return p;
}

/*
 * Scan a string whose opening quote is at p.  Returns the byte after the
 * closing quote, or NULL.  *escaped says whether it held a backslash.
 */
static const unsigned char *
scan_string(const unsigned char *p, const unsigned char *end, int *escaped)
{
	size_t	n;

	*escaped = 0;
	p++;
	while ((p = scan_plain(p, end)) < end) {
		unsigned char	c = *p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			*escaped = 1;
			if (++p >= end)
				return NULL;
			switch (*p) {
			case '"': case '\\': case '/': case 'b':
			case 'f': case 'n': case 'r': case 't':
				p++;
				break;
			case 'u':
				if (end - p < 5 || !is_hex(p[1]) ||
				    !is_hex(p[2]) || !is_hex(p[3]) ||
				    !is_hex(p[4]))
					return NULL;
				p += 5;
				break;
			default:
				return NULL;
			}
			continue;
		}
		if (c < 0x80) {
			p++;
			continue;
		}
		if ((n = scan_utf8_len(p, end)) == 0)
			return NULL;
		p += n;
	}
	return NULL;
}

static const unsigned char *
scan_digits(const unsigned char *p, const unsigned char *end)
{
	const unsigned char	*start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p == start ? NULL : p;
}

static const unsigned char *
scan_number(const unsigned char *p, const unsigned char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p >= end)
		return NULL;
	if (*p == '0')
		p++;
	else if ((p = scan_digits(p, end)) == NULL)
		return NULL;
	if (p < end && *p == '.') {
		if ((p = scan_digits(p + 1, end)) == NULL)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if ((p = scan_digits(p, end)) == NULL)
			return NULL;
	}
	return p;
}

static const unsigned char *
scan_literal(const unsigned char *p, const unsigned char *end,
    const char *word)
{
	size_t	n = strlen(word);

	if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
		return NULL;
	return p + n;
}

/*
 * Scan one JSON value of any depth starting at p (no leading white space).
 * Returns the byte after it, or NULL when it is not valid JSON.
 */
static const unsigned char *
scan_value(const unsigned char *p, const unsigned char *end)
{
	struct nest	 n;
	int		 esc, want_key = 0;

	nest_init(&n);
	for (;;) {
		p = skip_ws(p, end);
		if (p >= end)
			goto fail;
		if (want_key) {
			if (*p != '"' || (p = scan_string(p, end, &esc)) ==
			    NULL)
				goto fail;
			p = skip_ws(p, end);
			if (p >= end || *p != ':')
				goto fail;
			p = skip_ws(p + 1, end);
			if (p >= end)
				goto fail;
			want_key = 0;
		}
		switch (*p) {
		case '{':
			nest_push(&n, 1);
			p = skip_ws(p + 1, end);
			if (p < end && *p == '}') {
				p++;
				n.depth--;
				break;
			}
			want_key = 1;
			continue;
		case '[':
			nest_push(&n, 0);
			p = skip_ws(p + 1, end);
			if (p < end && *p == ']') {
				p++;
				n.depth--;
				break;
			}
			continue;
		case '"':
			p = scan_string(p, end, &esc);
			break;
		case 't':
			p = scan_literal(p, end, "true");
			break;
		case 'f':
			p = scan_literal(p, end, "false");
			break;
		case 'n':
			p = scan_literal(p, end, "null");
			break;
		default:
			p = scan_number(p, end);
			break;
		}
		if (p == NULL)
			goto fail;

		/* A value ended: close containers until one goes on. */
		for (;;) {
			if (n.depth == 0) {
				nest_fini(&n);
				return p;
			}
			p = skip_ws(p, end);
			if (p >= end)
				goto fail;
			if (*p == ',') {
				p++;
				want_key = nest_top_is_object(&n);
				break;
			}
			if (*p != (nest_top_is_object(&n) ? '}' : ']'))
				goto fail;
			p++;
			n.depth--;
		}
	}
fail:
	nest_fini(&n);
	return NULL;
}

/* Which of our members a key (its bytes between the quotes) names. */
static enum member
member_of(const unsigned char *k, size_t len, int escaped)
{
	char	buf[SCAN_KEY_MAX];
	size_t	n = len;

	if (escaped) {
		if (len > SCAN_KEY_MAX * 6)
			return MEMBER_OTHER;
		{
			char	tmp[SCAN_KEY_MAX * 6];

			if (scan_string_decode((const char *)k, len, tmp, &n)
			    != 0 || n > sizeof buf)
				return MEMBER_OTHER;
			memcpy(buf, tmp, n);
		}
	} else {
		if (len > sizeof buf)
			return MEMBER_OTHER;
		memcpy(buf, k, len);
	}
	if (n == 6 && memcmp(buf, "method", 6) == 0)
		return MEMBER_METHOD;
	if (n == 2 && memcmp(buf, "id", 2) == 0)
		return MEMBER_ID;
	if (n == 6 && memcmp(buf, "result", 6) == 0)
		return MEMBER_RESULT;
	if (n == 5 && memcmp(buf, "error", 5) == 0)
		return MEMBER_ERROR;
	return MEMBER_OTHER;
}

/*
 * Scan the members of a top-level object whose '{' is at p, filling s.
 * Duplicate keys behave as in jansson: the last one wins.
 */
static const unsigned char *
scan_object(const unsigned char *base, const unsigned char *p,
    const unsigned char *end, struct scan *s, int *method_bad,
    int *has_result, int *has_error)
{
	const unsigned char	*k, *v, *ve;
	int			 esc, vesc;
	enum member		 m;

	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		if (p >= end || *p != '"')
			return NULL;
		k = p;
		if ((p = scan_string(p, end, &esc)) == NULL)
			return NULL;
		m = member_of(k + 1, (size_t)(p - k - 2), esc);
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return NULL;
		v = skip_ws(p + 1, end);
		if (v >= end)
			return NULL;
		if (*v == '"')
			ve = scan_string(v, end, &vesc);
		else {
			ve = scan_value(v, end);
			vesc = 0;
		}
		if (ve == NULL)
			return NULL;
		switch (m) {
		case MEMBER_METHOD:
			if (*v == '"') {
				s->has_method = 1;
				*method_bad = 0;
				s->method_escaped = vesc;
				s->method_off = (size_t)(v + 1 - base);
				s->method_len = (size_t)(ve - v - 2);
			} else {
				s->has_method = 0;
				*method_bad = 1;
			}
			break;
		case MEMBER_ID:
			s->has_id = 1;
			s->id_off = (size_t)(v - base);
			s->id_len = (size_t)(ve - v);
			break;
		case MEMBER_RESULT:
			*has_result = 1;
			break;
		case MEMBER_ERROR:
			*has_error = 1;
			break;
		case MEMBER_OTHER:
			break;
		}
		p = skip_ws(ve, end);
		if (p >= end)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
}

/* Classify one message: its kind, and where its method and id are. */
void
scan_message(const void *buf, size_t len, struct scan *s)
{
	const unsigned char	*base = buf, *end, *p;
	int			 method_bad = 0, has_result = 0, has_error = 0;

	memset(s, 0, sizeof *s);
	s->kind = KIND_INVALID;
	if (len == 0)		/* buf may be NULL then: no arithmetic on it */
		return;
	end = base + len;
	p = skip_ws(base, end);
	if (p >= end)
		return;

	if (*p == '{') {
		p = scan_object(base, p, end, s, &method_bad, &has_result,
		    &has_error);
	} else {
		int	is_array = (*p == '[');

		p = scan_value(p, end);
		if (p != NULL && is_array &&
		    skip_ws(p, end) == end) {
			s->kind = KIND_BATCH;
			return;
		}
		p = NULL;
	}
	if (p == NULL || skip_ws(p, end) != end) {
		memset(s, 0, sizeof *s);
		s->kind = KIND_INVALID;
		return;
	}

	if (s->has_method)
		s->kind = s->has_id ? KIND_REQUEST : KIND_NOTIFICATION;
	else if (method_bad)
		s->kind = KIND_INVALID;
	else if (has_result && !has_error)
		s->kind = KIND_RESPONSE;
	else if (has_error && !has_result)
		s->kind = KIND_ERROR;
	else
		s->kind = KIND_INVALID;
}

/*
 * Whether buf is one JSON value of any kind and depth (white space around
 * it allowed), UTF-8 checked as every string the scanner reads.
 */
int
scan_is_json(const void *buf, size_t len)
{
	const unsigned char	*base = buf, *end = base + len, *p;
	int			 esc;

	p = skip_ws(base, end);
	if (p >= end)
		return 0;
	p = (*p == '"') ? scan_string(p, end, &esc) : scan_value(p, end);
	return p != NULL && skip_ws(p, end) == end;
}

/*
 * Call cb for each member of the JSON object that is the whole of buf
 * (white space around it allowed), in the order written, with where its
 * key and value are.  Returns 0, or -1 when buf is not one valid JSON
 * object (cb may have been called for the members before the fault) or
 * when cb returned non-zero.  Values are validated, never built, so any
 * depth and any number is fine.
 */
int
scan_members(const void *buf, size_t len, scan_member_cb cb, void *arg)
{
	const unsigned char	*base = buf, *end = base + len, *p, *k, *v;
	struct scan_member	 mb;
	int			 esc;

	p = skip_ws(base, end);
	if (p >= end || *p != '{')
		return -1;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return skip_ws(p + 1, end) == end ? 0 : -1;
	for (;;) {
		if (p >= end || *p != '"')
			return -1;
		k = p;
		if ((p = scan_string(p, end, &esc)) == NULL)
			return -1;
		mb.key_off = (size_t)(k + 1 - base);
		mb.key_len = (size_t)(p - k - 2);
		mb.key_escaped = esc;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return -1;
		v = skip_ws(p + 1, end);
		if (v >= end)
			return -1;
		if ((p = (*v == '"') ? scan_string(v, end, &esc) :
		    scan_value(v, end)) == NULL)
			return -1;
		mb.val_off = (size_t)(v - base);
		mb.val_len = (size_t)(p - v);
		if (cb(&mb, arg) != 0)
			return -1;
		p = skip_ws(p, end);
		if (p >= end)
			return -1;
		if (*p == '}')
			return skip_ws(p + 1, end) == end ? 0 : -1;
		if (*p != ',')
			return -1;
		p = skip_ws(p + 1, end);
	}
}

/*
 * Call cb for each element of the JSON array that is the whole of buf
 * (white space around it allowed), in order, with where its JSON text is.
 * Returns 0, or -1 when buf is not one valid JSON array or cb returned
 * non-zero.  Like scan_members, values are validated, never built.
 */
int
scan_elements(const void *buf, size_t len, scan_element_cb cb, void *arg)
{
	const unsigned char	*base = buf, *end = base + len, *p, *v;
	int			 esc;

	p = skip_ws(base, end);
	if (p >= end || *p != '[')
		return -1;
	p = skip_ws(p + 1, end);
	if (p < end && *p == ']')
		return skip_ws(p + 1, end) == end ? 0 : -1;
	for (;;) {
		v = p;
		if (v >= end)
			return -1;
		if ((p = (*v == '"') ? scan_string(v, end, &esc) :
		    scan_value(v, end)) == NULL)
			return -1;
		if (cb((const char *)v, (size_t)(p - v), arg) != 0)
			return -1;
		p = skip_ws(p, end);
		if (p >= end)
			return -1;
		if (*p == ']')
			return skip_ws(p + 1, end) == end ? 0 : -1;
		if (*p != ',')
			return -1;
		p = skip_ws(p + 1, end);
	}
}

/*
 * Whether a member's key (as scan_members found it) is name: escaped keys
 * are decoded first, as jansson would read them.
 */
int
scan_key_is(const void *buf, const struct scan_member *mb, const char *name)
{
	const char	*k = (const char *)buf + mb->key_off;
	size_t		 n = strlen(name), outlen;
	char		 tmp[64];

	if (!mb->key_escaped)
		return mb->key_len == n && memcmp(k, name, n) == 0;
	if (mb->key_len > sizeof tmp || scan_string_decode(k, mb->key_len,
	    tmp, &outlen) != 0)
		return 0;
	return outlen == n && memcmp(tmp, name, n) == 0;
}

/* The value of a hex digit, or -1. */
int
scan_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits at p, or -1 if one is not. */
static long
read_u4(const char *p)
{
	long	v = 0;
	int	i, h;

	for (i = 0; i < 4; i++) {
		if ((h = scan_hex_value((unsigned char)p[i])) < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/*
 * The length of the first len bytes of s without a character cut at its
 * end: where text is cut to a bound (a finding's quote, a path), the cut
 * backs up to a UTF-8 character boundary, so what is kept stays valid
 * UTF-8 if s was.  Bytes that are no UTF-8 are left as they are.
 */
size_t
scan_utf8_trim(const char *s, size_t len)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 k = len, need;

	/* Back over at most 3 continuation bytes to a lead byte. */
	while (k > 0 && len - k < 3 && (u[k - 1] & 0xc0) == 0x80)
		k--;
	if (k == 0 || u[k - 1] < 0xc0)
		return (len);	/* ASCII or no lead byte: nothing cut */
	need = u[k - 1] >= 0xf0 ? 4 : u[k - 1] >= 0xe0 ? 3 : 2;
	if (len - (k - 1) < need)
		return (k - 1);	/* the last character is incomplete */
	return (len);
}

/* Write code point cp as UTF-8 at out (room for 4); returns its length. */
size_t
scan_put_utf8(char *out, unsigned int cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * Decode the contents of a JSON string (the bytes between its quotes) into
 * out, which has room for len bytes: decoding never grows a string.  A
 * lone surrogate becomes U+FFFD.  Returns -1 on an escape JSON does not
 * have, or one cut short; other bytes are copied as they are, valid UTF-8
 * or not.
 */
int
scan_string_decode(const char *in, size_t len, char *out, size_t *outlen)
{
	size_t		i = 0, o = 0;
	long		cp, lo;

	while (i < len) {
		if (in[i] != '\\') {
			out[o++] = in[i++];
			continue;
		}
		if (i + 1 >= len)
			return -1;
		switch (in[i + 1]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			if (i + 6 > len || (cp = read_u4(in + i + 2)) < 0)
				return -1;
			i += 6;
			if (cp >= 0xd800 && cp <= 0xdbff && i + 6 <= len &&
			    in[i] == '\\' && in[i + 1] == 'u') {
				lo = read_u4(in + i + 2);
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					    (lo - 0xdc00);
					i += 6;
				}
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd;
			o += scan_put_utf8(out + o, (unsigned int)cp);
			continue;
		default:
			return -1;
		}
		i += 2;
	}
	*outlen = o;
	return 0;
}

/* The method as a NUL-terminated string (decoded), or NULL if none. */
char *
scan_method_dup(const void *buf, const struct scan *s)
{
	const char	*m;
	char		*out;
	size_t		 n;

	if (!s->has_method)
		return NULL;
	m = (const char *)buf + s->method_off;
	if (!s->method_escaped)
		return xstrndup(m, s->method_len);
	out = xmalloc(s->method_len + 1);
	if (scan_string_decode(m, s->method_len, out, &n) != 0)
		n = 0;
	out[n] = '\0';
	return out;
}

/* The id's JSON text as written, or NULL if none. */
char *
scan_id_dup(const void *buf, const struct scan *s)
{
	if (!s->has_id)
		return NULL;
	return xstrndup((const char *)buf + s->id_off, s->id_len);
}

/*
 * A copy of the C string s that is valid UTF-8, each byte that is not
 * part of a well-formed sequence written as the four characters \xNN,
 * for text put in JSON (jansson refuses a string that is not UTF-8);
 * caller frees.
 */
char *
scan_utf8_escape(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + strlen(s);
	char			*out, *o;
	size_t			 n;

	/* At most four output bytes per input byte. */
	out = o = xmalloc((size_t)(end - p) * 4 + 1);
	while (p < end) {
		if ((n = scan_utf8_len(p, end)) == 0) {
			o += snprintf(o, 5, "\\x%02x", *p++);
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}
