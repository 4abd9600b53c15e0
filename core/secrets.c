/*
 * What a credential looks like: the built-in token shapes
 * (docs/redaction.md lists them), --redact-regex, and key names as they are
 * compared.  Every scan here is one pass over its text: a token is looked
 * at once, from its first byte, and what a shape looks past it is bounded.
 */

#include <sys/types.h>

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "redact_int.h"

/* Tokens shorter than these are not taken for credentials. */
#define SECRETS_SK_MIN		20	/* after sk- */
#define SECRETS_STRIPE_MIN	16	/* after sk_live_ and the like */
#define SECRETS_GH_MIN		20	/* after ghp_ ..., github_pat_ */
#define SECRETS_SLACK_MIN	10	/* after xoxb- ... */
#define SECRETS_GOOGLE_MIN	35	/* after AIza */
#define SECRETS_AWS_LEN		16	/* after AKIA / ASIA, exactly */
#define SECRETS_BEARER_MIN	16	/* a Bearer token, or 8 with a digit */
#define SECRETS_BEARER_DIGIT_MIN	8
#define SECRETS_JWT_MIN		10	/* a JWT's first part */
/*
 * A Basic credential: base64 of at least "u:pw" and padding (8 digits),
 * decoded this far at most.
 */
#define SECRETS_BASIC_MIN	8
#define SECRETS_BASIC_MAX	4096
/* How far "-----BEGIN " may be from its closing "-----". */
#define SECRETS_PEM_LABEL_MAX	64
/* The longest user:password part of a URL looked at (a bound per "://"). */
#define SECRETS_USERINFO_MAX	256
/* Text from this size is not given to regexec (its offsets are ints). */
#define SECRETS_REGEX_MAX	((size_t)1 << 30)

/* Filled once by secrets_init(), read-only after. */
unsigned char	secrets_cls[256];

/* Build the byte classes (before any thread reads them). */
void
secrets_init(void)
{
	int	c;

	if (secrets_cls['a'] != 0)
		return;
	for (c = 0; c < 256; c++) {
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9'))
			secrets_cls[c] |= C_TOKEN | C_ALNUM | C_BEARER;
		if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			secrets_cls[c] |= C_UPPERNUM;
	}
	secrets_cls['_'] |= C_TOKEN;
	secrets_cls['-'] |= C_TOKEN | C_BEARER;
	secrets_cls['.'] |= C_BEARER;
	secrets_cls['~'] |= C_BEARER;
	secrets_cls['+'] |= C_BEARER;
	secrets_cls['/'] |= C_BEARER;
	secrets_cls['='] |= C_BEARER;
	secrets_cls['s'] |= C_PSTART;
	secrets_cls['r'] |= C_PSTART;
	secrets_cls['g'] |= C_PSTART;
	secrets_cls['x'] |= C_PSTART;
	secrets_cls['A'] |= C_PSTART;
	secrets_cls['e'] |= C_PSTART;
	secrets_cls['b'] |= C_PSTART;
	secrets_cls['B'] |= C_PSTART;
	secrets_cls['-'] |= C_PSTART;
	secrets_cls['"'] |= C_MAYBE;
	secrets_cls['\\'] |= C_MAYBE;
	secrets_cls[':'] |= C_MAYBE;
	secrets_cls['/'] |= C_MAYBE;
	secrets_cls[','] |= C_STOP;
	secrets_cls['}'] |= C_STOP;
	secrets_cls[']'] |= C_STOP;
	secrets_cls[' '] |= C_STOP | C_WS;
	secrets_cls['\t'] |= C_STOP | C_WS;
	secrets_cls['\r'] |= C_STOP | C_WS;
	secrets_cls['\n'] |= C_STOP | C_WS;
}

/* The end of the run of bytes of class c from i. */
static size_t
run(const unsigned char *s, size_t i, size_t n, unsigned char c)
{
	while (i < n && (secrets_cls[s[i]] & c))
		i++;
	return i;
}

/*
 * The end of the run of token bytes ([A-Za-z0-9_-]) from i.  Most bytes a
 * check looks at are in tokens (a long base64 blob is one), so with SSE2
 * (every x86-64) 16 are looked at at once.
 */
static size_t
run_token(const unsigned char *s, size_t i, size_t n)
{
#ifdef __SSE2__
	/* x + (0x80 - lo) < -128 + k (signed): lo <= x < lo + k. */
	const __m128i	letter_off = _mm_set1_epi8((char)(0x80 - 'a'));
	const __m128i	letter_lim = _mm_set1_epi8((char)(-128 + 26));
	const __m128i	digit_off = _mm_set1_epi8((char)(0x80 - '0'));
	const __m128i	digit_lim = _mm_set1_epi8((char)(-128 + 10));
	const __m128i	case_bit = _mm_set1_epi8(0x20);
	const __m128i	under = _mm_set1_epi8('_');
	const __m128i	dash = _mm_set1_epi8('-');
	__m128i		x, tok;
	unsigned int	m;

	while (n - i >= 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		tok = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(x, case_bit),
		    letter_off), letter_lim);
		tok = _mm_or_si128(tok, _mm_cmplt_epi8(_mm_add_epi8(x,
		    digit_off), digit_lim));
		tok = _mm_or_si128(tok, _mm_cmpeq_epi8(x, under));
		tok = _mm_or_si128(tok, _mm_cmpeq_epi8(x, dash));
		m = (unsigned int)_mm_movemask_epi8(tok);
		if (m != 0xffff)
			return i + (size_t)__builtin_ctz(~m & 0xffff);
		i += 16;
	}
#endif
	return run(s, i, n, C_TOKEN);
}

static int
lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Four hex digits at p (end bounds them), or -1. */
static long
read_u4(const unsigned char *p, const unsigned char *end)
{
	long	v = 0;
	int	i, h;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = scan_hex_value(p[i])) < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/*
 * Decode the escape at *pp (a backslash) into *cp and move past it:
 * \uXXXX with surrogate pairs (a lone one is U+FFFD), and the one-letter
 * escapes.  Returns -1 when the escape is cut or malformed.
 */
static int
unescape(const unsigned char **pp, const unsigned char *end, unsigned int *cp)
{
	const unsigned char	*p = *pp;
	long			 v, lo;

	if (p + 1 >= end)
		return -1;
	switch (p[1]) {
	case 'u':
		if ((v = read_u4(p + 2, end)) < 0)
			return -1;
		p += 6;
		*cp = (unsigned int)v;
		if (*cp >= 0xd800 && *cp <= 0xdbff && end - p >= 6 &&
		    p[0] == '\\' && p[1] == 'u' &&
		    (lo = read_u4(p + 2, end)) >= 0xdc00 && lo <= 0xdfff) {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) +
			    ((unsigned int)lo - 0xdc00);
			p += 6;
		}
		if (*cp >= 0xd800 && *cp <= 0xdfff)
			*cp = 0xfffd;
		*pp = p;
		return 0;
	case 'b': *cp = '\b'; break;
	case 'f': *cp = '\f'; break;
	case 'n': *cp = '\n'; break;
	case 'r': *cp = '\r'; break;
	case 't': *cp = '\t'; break;
	default: *cp = p[1]; break;
	}
	*pp = p + 2;
	return 0;
}

/*
 * A key as it is compared: the bytes between its quotes with escapes
 * decoded, ASCII letters in lower case, '_' and '-' left out.  Writes at
 * most cap bytes to out; returns the length, or cap + 1 when it is longer
 * (no name of ours can then be it).  Any length of key costs one pass.
 */
size_t
secrets_key_norm(const unsigned char *k, size_t len, unsigned char *out,
    size_t cap)
{
	const unsigned char	*p = k, *end = k + len;
	unsigned char		 u[4];
	unsigned int		 cp;
	size_t			 o = 0, n, i;

	while (p < end) {
		if (*p == '\\') {
			if (unescape(&p, end, &cp) != 0)
				return cap + 1;
		} else if (*p >= 0x80) {
			/* UTF-8 as it is: one byte at a time. */
			if (o >= cap)
				return cap + 1;
			out[o++] = *p++;
			continue;
		} else
			cp = *p++;
		if (cp >= 0x80) {
			n = scan_put_utf8((char *)u, cp);
			for (i = 0; i < n; i++) {
				if (o >= cap)
					return cap + 1;
				out[o++] = u[i];
			}
			continue;
		}
		if (cp == '_' || cp == '-')
			continue;
		if (o >= cap)
			return cap + 1;
		out[o++] = (unsigned char)lower((int)cp);
	}
	return o;
}

/* Case-insensitive compare of n bytes with a lower-case word. */
static int
word_is(const unsigned char *s, const char *w, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (lower(s[i]) != w[i])
			return 0;
	}
	return 1;
}

static int
starts(const unsigned char *s, size_t i, size_t n, const char *p)
{
	size_t	len = strlen(p);

	return n - i >= len && memcmp(s + i, p, len) == 0;
}

/*
 * The end of the credentials of "Basic " at k: base64 whose length (with
 * its padding) is a multiple of 4 and at least SECRETS_BASIC_MIN, that
 * decodes to printable ASCII with a ':' after a user of one byte or more
 * (user:password), as Basic credentials are; or k when there are none.
 * Prose ("Basic Overview", "Basic Operations") does not decode so.
 */
static size_t
basic_end(const unsigned char *s, size_t k, size_t n)
{
	size_t		t, e, out = 0;
	unsigned int	acc = 0, b;
	int		bits = 0, v, colon = 0;

	for (t = k; t < n && t - k < SECRETS_BASIC_MAX &&
	    (v = b64_digit(s[t])) >= 0; t++) {
		acc = (acc << 6 | (unsigned int)v) & 0xffffff;
		if ((bits += 6) >= 8) {
			bits -= 8;
			b = (acc >> bits) & 0xff;
			if (b < 0x20 || b > 0x7e)
				return k;
			if (b == ':' && !colon) {
				if (out == 0)
					return k;
				colon = 1;
			}
			out++;
		}
	}
	for (e = t; e < n && e - t < 2 && s[e] == '='; e++)
		;
	if (!colon || e - k < SECRETS_BASIC_MIN || (e - k) % 4 != 0 ||
	    (e < n && (secrets_cls[s[e]] & C_TOKEN)))
		return k;
	return e;
}

/*
 * A credential shape at a token's start i (the run [i, j) of token
 * bytes; nothing of ours starts inside one).  Sets the match [*ms, *me)
 * and returns 1, else 0.
 */
static int
pattern_at(const unsigned char *s, size_t i, size_t j, size_t n, size_t *ms,
    size_t *me)
{
	size_t	len = j - i, k, t, e;
	int	digit;

	switch (s[i]) {
	case 's':
	case 'r':
		/* OpenAI/Anthropic sk-..., Stripe sk_live_ rk_test_ ... */
		if (s[i] == 's' && starts(s, i, j, "sk-") &&
		    len - 3 >= SECRETS_SK_MIN)
			goto whole;
		if ((starts(s, i, j, "sk_live_") || starts(s, i, j,
		    "sk_test_") || starts(s, i, j, "rk_live_") ||
		    starts(s, i, j, "rk_test_")) &&
		    len - 8 >= SECRETS_STRIPE_MIN)
			goto whole;
		return 0;
	case 'g':
		/* GitHub: ghp_ gho_ ghu_ ghs_ ghr_, github_pat_. */
		if (len >= 4 && s[i + 1] == 'h' && s[i + 3] == '_' &&
		    strchr("pousr", s[i + 2]) != NULL &&
		    len - 4 >= SECRETS_GH_MIN)
			goto whole;
		if (starts(s, i, j, "github_pat_") &&
		    len - 11 >= SECRETS_GH_MIN)
			goto whole;
		return 0;
	case 'x':
		/* Slack: xoxa- xoxb- xoxp- xoxr-. */
		if (len >= 5 && starts(s, i, j, "xox") &&
		    strchr("abpr", s[i + 3]) != NULL && s[i + 4] == '-' &&
		    len - 5 >= SECRETS_SLACK_MIN)
			goto whole;
		return 0;
	case 'A':
		/* AWS access key ids, Google API keys. */
		if (len == 4 + SECRETS_AWS_LEN && (starts(s, i, j, "AKIA") ||
		    starts(s, i, j, "ASIA"))) {
			for (k = i + 4; k < j; k++) {
				if (!(secrets_cls[s[k]] & C_UPPERNUM))
					return 0;
			}
			goto whole;
		}
		if (starts(s, i, j, "AIza") && len - 4 >= SECRETS_GOOGLE_MIN)
			goto whole;
		return 0;
	case 'e':
		/* A JWT: three base64url parts, the first a JSON object. */
		if (len < SECRETS_JWT_MIN || !starts(s, i, j, "eyJ") ||
		    j >= n || s[j] != '.')
			return 0;
		if ((k = run_token(s, j + 1, n)) - (j + 1) < 2 || k >= n ||
		    s[k] != '.')
			return 0;
		/* The signature may be empty (alg "none"). */
		*ms = i;
		*me = run_token(s, k + 1, n);
		return 1;
	case 'b':
	case 'B':
		/* "Basic CREDENTIALS", "Bearer TOKEN": the word stays. */
		if (len != 6 && len != 5)
			return 0;
		if (!word_is(s + i, len == 6 ? "bearer" : "basic", len))
			return 0;
		for (k = j; k < n && (s[k] == ' ' || s[k] == '\t'); k++)
			;
		if (k == j)
			return 0;
		if (len == 5) {
			if ((t = basic_end(s, k, n)) == k)
				return 0;
			*ms = k;
			*me = t;
			return 1;
		}
		t = run(s, k, n, C_BEARER);
		for (digit = 0, e = k; e < t && !digit; e++)
			digit = (s[e] >= '0' && s[e] <= '9');
		if (t - k < SECRETS_BEARER_MIN && (t - k <
		    SECRETS_BEARER_DIGIT_MIN || !digit))
			return 0;
		*ms = k;
		*me = t;
		return 1;
	case '-':
		/* A PEM private key: the base64 between its lines goes. */
		if (len != 10 || !starts(s, i, j, "-----BEGIN") || j >= n ||
		    s[j] != ' ')
			return 0;
		for (k = j + 1; k < n && k - j <= SECRETS_PEM_LABEL_MAX; k++) {
			if (s[k] == '-')
				break;
		}
		if (k >= n || n - k < 5 || memcmp(s + k, "-----", 5) != 0 ||
		    k - (j + 1) < 11 || memcmp(s + k - 11, "PRIVATE KEY",
		    11) != 0)
			return 0;
		*ms = k + 5;
		t = *ms;
		{
			const unsigned char *end_line = memmem(s + t, n - t,
			    "-----END", 8);

			*me = end_line != NULL ? (size_t)(end_line - s) : n;
		}
		return *me > *ms;
	default:
		return 0;
	}
whole:
	*ms = i;
	*me = j;
	return 1;
}

/*
 * The secret of a URL's userinfo at i ("://" or a leading "//" just
 * before it), as [*ms, *me): the password of user:password@, or all of a
 * userinfo without a ':' (a token as the user: https://TOKEN@host).
 * need_colon: only user:password (after a "//" with no scheme, where a
 * word@host may be anything).  Looks at most SECRETS_USERINFO_MAX bytes
 * on.
 */
static int
userinfo_at(const unsigned char *s, size_t i, size_t n, int need_colon,
    size_t *ms, size_t *me)
{
	size_t	k, colon = 0;

	for (k = i; k < n && k - i < SECRETS_USERINFO_MAX; k++) {
		if (s[k] == '@')
			break;
		if (strchr("/?#\"'<>\\ \t\r\n", s[k]) != NULL)
			return 0;
		if (s[k] == ':' && colon == 0)
			colon = k;
	}
	if (k >= n || s[k] != '@' || k == i || k + 1 >= n ||
	    strchr("/?#\"'<>\\ \t\r\n", s[k + 1]) != NULL)
		return 0;
	if (colon == 0) {
		if (need_colon)
			return 0;
		*ms = i;
	} else if (colon + 1 >= k)
		return 0;
	else
		*ms = colon + 1;
	*me = k;
	return 1;
}

/*
 * A userinfo after the "//" at i: "scheme://" anywhere, or "//" with no
 * scheme at a word's start ("//user:pass@host/path").
 */
int
secrets_userinfo(const unsigned char *s, size_t i, size_t n, size_t *ms,
    size_t *me)
{
	if (n - i < 3 || s[i] != '/' || s[i + 1] != '/')
		return 0;
	if (i > 0 && s[i - 1] == ':')
		return userinfo_at(s, i + 2, n, 0, ms, me);
	if (i == 0 || (secrets_cls[s[i - 1]] & C_WS) || strchr("\"'=(<",
	    s[i - 1]) != NULL)
		return userinfo_at(s, i + 2, n, 1, ms, me);
	return 0;
}

/*
 * The next built-in credential shape in s[from, n), as [*ms, *me).  One
 * pass: each token is looked at once, from its start.
 */
int
secrets_next(const unsigned char *s, size_t n, size_t from, size_t *ms,
    size_t *me)
{
	size_t	i = from, j;

	while (i < n) {
		if (secrets_cls[s[i]] & C_TOKEN) {
			j = run_token(s, i, n);
			/* Only a token's first byte can start one of ours. */
			if ((secrets_cls[s[i]] & C_PSTART) && (i == 0 ||
			    !(secrets_cls[s[i - 1]] & C_TOKEN)) &&
			    pattern_at(s, i, j, n, ms, me))
				return 1;
			i = j;
			continue;
		}
		if (s[i] == '/' && secrets_userinfo(s, i, n, ms, me))
			return 1;
		i++;
	}
	return 0;
}

/* Whether a normalized key is one of the rules' names. */
int
secrets_key_listed(const struct redact *r, const unsigned char *k, size_t n)
{
	size_t	i;

	if (n == 0)
		return 0;
	/* Only the keys that start as k does. */
	for (i = r->key_head[k[0]]; i != 0; i = r->keys[i - 1].next) {
		if (r->keys[i - 1].len == n &&
		    memcmp(r->keys[i - 1].name, k, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * Whether the key whose contents are s[i, e) (no backslash in them) is a
 * listed name: compared up to the longest one.
 */
static int
maybe_key(const struct redact *r, const unsigned char *s, size_t i, size_t e)
{
	unsigned char	kn[256];
	size_t		o = 0, cap = r->key_max < sizeof kn ? r->key_max :
			    sizeof kn;

	if (e - i < r->key_min)
		return 0;
	while (i < e && (s[i] == '_' || s[i] == '-'))
		i++;
	if (i >= e || !r->key_first[(unsigned char)lower(s[i])])
		return 0;
	for (; i < e; i++) {
		if (s[i] == '_' || s[i] == '-')
			continue;
		if (o >= cap)
			return 0;
		kn[o++] = (unsigned char)lower(s[i]);
	}
	return o > 0 && secrets_key_listed(r, kn, o);
}

/*
 * Whether s can need redacting at all, in one pass, so that most messages
 * cost only this.  Exact for text with no backslash (where a string's
 * contents are its bytes as written and quotes pair up in order): it
 * finds every credential shape a string holds and every string followed
 * by a ':' (a key, for the walk) that is a listed name.  A backslash or a
 * --redact-regex is a "may".
 */
int
secrets_maybe(const struct redact *r, const unsigned char *s, size_t n)
{
	size_t		i = 0, j, k, ms, me, open = 0;
	const int	patterns = r->patterns, keys = r->nkeys > 0;
	int		in_string = 0;
	unsigned char	c;

	if (r->nres > 0)
		return 1;
	while (i < n) {
		c = s[i];
		if (secrets_cls[c] & C_TOKEN) {
			j = run_token(s, i, n);
			if (patterns && (secrets_cls[c] & C_PSTART) &&
			    (i == 0 || !(secrets_cls[s[i - 1]] & C_TOKEN)) &&
			    pattern_at(s, i, j, n, &ms, &me))
				return 1;
			i = j;
			continue;
		}
		if (!(secrets_cls[c] & C_MAYBE)) {
			i++;
			continue;
		}
		if (c == '"') {
			if (!in_string)
				open = i;
			else if (keys) {
				for (k = i + 1; k < n &&
				    (secrets_cls[s[k]] & C_WS); k++)
					;
				if (k < n && s[k] == ':' &&
				    maybe_key(r, s, open + 1, i))
					return 1;
			}
			in_string = !in_string;
		} else if (c == '\\')
			return 1;
		else if (c == '/' && patterns &&
		    secrets_userinfo(s, i, n, &ms, &me))
			return 1;
		i++;
	}
	return 0;
}

/* Widen [*ms, *me) of s to whole UTF-8 characters. */
static void
utf8_widen(const unsigned char *s, size_t n, size_t *ms, size_t *me)
{
	while (*ms > 0 && (s[*ms] & 0xc0) == 0x80)
		(*ms)--;
	while (*me < n && (s[*me] & 0xc0) == 0x80)
		(*me)++;
}

/*
 * The next match of user regex re in s[from, n) (bytes, the C locale), as
 * [*ms, *me).  A match of no bytes is passed over.
 */
static int
regex_next(const regex_t *re, const unsigned char *s, size_t n, size_t from,
    size_t *ms, size_t *me)
{
	regmatch_t	pm;

	while (from <= n) {
		pm.rm_so = (regoff_t)from;
		pm.rm_eo = (regoff_t)n;
		if (regexec(re, (const char *)s, 1, &pm, REG_STARTEND |
		    (from > 0 ? REG_NOTBOL : 0)) != 0)
			return 0;
		if (pm.rm_eo > pm.rm_so) {
			*ms = (size_t)pm.rm_so;
			*me = (size_t)pm.rm_eo;
			utf8_widen(s, n, ms, me);
			return 1;
		}
		from = (size_t)pm.rm_so + 1;
	}
	return 0;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct range	*x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

/*
 * Every pattern match in s[0, n), merged where they overlap: a new array
 * (or NULL) and its count.
 */
struct range *
secrets_matches(const struct redact *r, const unsigned char *s, size_t n,
    size_t *count)
{
	struct range	*rg = NULL;
	size_t		 nr = 0, cap = 0, from, ms, me, i, o;
	unsigned char	*z = NULL;

	/*
	 * regexec() is given the bounds (REG_STARTEND) but reads a C
	 * string: a copy with its NUL (and regoff_t is an int).
	 */
	if (r->nres > 0 && n < SECRETS_REGEX_MAX) {
		z = xmalloc(n + 1);
		memcpy(z, s, n);
		z[n] = '\0';
	}
	for (i = 0; i <= r->nres; i++) {
		from = 0;
		for (;;) {
			if (i < r->nres) {
				if (z == NULL || !regex_next(&r->res[i], z, n,
				    from, &ms, &me))
					break;
			} else if (!r->patterns ||
			    !secrets_next(s, n, from, &ms, &me))
				break;
			from = me;
			/* Redacted already (a URL's password, a PEM body). */
			if (me - ms == sizeof REDACTED - 1 &&
			    memcmp(s + ms, REDACTED, me - ms) == 0)
				continue;
			if (nr == cap) {
				cap = cap ? cap * 2 : 4;
				rg = xreallocarray(rg, cap, sizeof *rg);
			}
			rg[nr].s = ms;
			rg[nr].e = me;
			nr++;
		}
	}
	free(z);
	if (nr > 1) {
		qsort(rg, nr, sizeof *rg, range_cmp);
		for (i = 1, o = 0; i < nr; i++) {
			if (rg[i].s < rg[o].e) {
				if (rg[i].e > rg[o].e)
					rg[o].e = rg[i].e;
			} else
				rg[++o] = rg[i];
		}
		nr = o + 1;
	}
	*count = nr;
	return rg;
}
