/*
 * Payload redaction (core/redact.c) as data: each case is an input, the
 * rules (the built-in set or not, --redact-key, --redact-regex) and the
 * stored bytes it must give, or NULL for "returned untouched".  Then the
 * hostile inputs: deep nesting, huge strings, invalid UTF-8, and inputs
 * built to make a careless scan quadratic.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

/* An input with its length, so it may hold NUL bytes. */
#define RAW(s)	(s), sizeof(s) - 1
/* Nesting far beyond the walk's allocation-free stack. */
#define DEEP		100000
/* The hostile inputs' size, and how long one may take (ASan included). */
#define HOSTILE_SIZE	(2 * 1024 * 1024)
#define HOSTILE_SIZE_REGEX	(64 * 1024)
#define HOSTILE_MAX_S	5.0

#define MAXRULES	3
/* What a case must give: bytes (maybe with NULs), or untouched. */
#define W(s)		(s), sizeof(s) - 1
#define NOWANT		NULL, 0

struct redact_case {
	const char	*name;
	const char	*in;
	size_t		 len;
	int		 no_defaults;
	const char	*keys[MAXRULES];
	const char	*res[MAXRULES];
	const char	*want;		/* NULL: untouched */
	size_t		 wantlen;
	size_t		 count;		/* replacements, when want is set */
};

/* Fake but well-shaped credentials (not real ones). */
#define SK	"sk-proj-abcdefghijklmnopqrstuv0123"
#define GHP	"ghp_abcdefghijklmnopqrstuvwxyz0123456789"
#define GHO	"gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define GHPAT	"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv"
#define JWT	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." \
		"dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
#define AKIA	"AKIAIOSFODNN7EXAMPLE"
#define ASIA	"ASIAY34FZKBOKMUTVV7A"
#define XOXB	"xoxb-1234567890-abcdefghij"
#define STRIPE	"sk_live_abcdefghijklmnop1234"
#define GOOGLE	"AIzaSyA1234567890abcdefghijklmnopqrstuv"
#define R	"[REDACTED]"
#define QR	"\"[REDACTED]\""

static const struct redact_case cases[] = {
	/* Nothing to do: the input comes back untouched. */
	{ "plain request", RAW("{\"jsonrpc\":\"2.0\",\"id\":1,"
	  "\"method\":\"tools/list\"}"), 0, {0}, {0}, NOWANT, 0 },
	{ "empty input", RAW(""), 0, {0}, {0}, NOWANT, 0 },
	{ "MCP's progressToken is no token", RAW("{\"params\":{\"_meta\":"
	  "{\"progressToken\":\"abc\"},\"cursor\":\"xyz\"}}"), 0, {0}, {0},
	  NOWANT, 0 },
	{ "names as values are not keys", RAW("{\"required\":[\"password\","
	  "\"token\"],\"name\":\"api_key\"}"), 0, {0}, {0}, NOWANT, 0 },
	{ "a key that only contains a name", RAW("{\"passwordHint\":\"x\","
	  "\"my_token_count\":3}"), 0, {0}, {0}, NOWANT, 0 },
	{ "null and empty values hold nothing", RAW("{\"token\":null,"
	  "\"password\":\"\",\"secret\": null }"), 0, {0}, {0}, NOWANT, 0 },
	{ "already redacted", RAW("{\"password\":\"[REDACTED]\"}"), 0, {0},
	  {0}, NOWANT, 0 },
	{ "already redacted in strings", RAW("{\"u\":\"http://a:[REDACTED]@h\","
	  "\"k\":\"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE "
	  "KEY-----\"}"), 0, {0}, {0}, NOWANT, 0 },
	{ "no defaults, no rules", RAW("{\"password\":\"hunter2\",\"k\":\""
	  SK "\"}"), 1, {0}, {0}, NOWANT, 0 },
	{ "escapes and unicode, nothing secret", RAW("{\"text\":\"a\\nb "
	  "\\u00e9 \\\"q\\\" caf\xc3\xa9\"}"), 0, {0}, {0}, NOWANT, 0 },
	{ "token-like words that are not tokens", RAW("{\"t\":\"task-"
	  "abcdefghijklmnopqrstuvwxyz sk-short ghp_short AKIA123 bearer of "
	  "news eyJnotajwt xoxb-1 https://host/path?x=1 user@host:22\"}"),
	  0, {0}, {0}, NOWANT, 0 },
	{ "AWS id one too long", RAW("{\"t\":\"" AKIA "Q\"}"), 0, {0}, {0},
	  NOWANT, 0 },

	/* Keys: the value goes, whatever it is, at any depth. */
	{ "top-level key", RAW("{\"password\":\"hunter2\"}"), 0, {0}, {0},
	  W("{\"password\":" QR "}"), 1 },
	{ "key at depth in arrays", RAW("{\"a\":{\"b\":[1,{\"token\":\"t1\"},"
	  "[{\"c\":{\"secret\":\"s\"}}]]}}"), 0, {0}, {0},
	  W("{\"a\":{\"b\":[1,{\"token\":" QR "},[{\"c\":{\"secret\":" QR
	  "}}]]}}"), 2 },
	{ "white space kept", RAW(" { \"token\" :\t\"x\" , \"a\" : 1 }\r"),
	  0, {0}, {0}, W(" { \"token\" :\t" QR " , \"a\" : 1 }\r"), 1 },
	{ "case and separators", RAW("{\"PassWord\":\"a\",\"api-key\":\"b\","
	  "\"apiKey\":\"c\",\"API_KEY\":\"d\",\"Client_Secret\":\"e\","
	  "\"X-Api-Key\":\"f\"}"), 0, {0}, {0}, W("{\"PassWord\":" QR
	  ",\"api-key\":" QR ",\"apiKey\":" QR ",\"API_KEY\":" QR
	  ",\"Client_Secret\":" QR ",\"X-Api-Key\":" QR "}"), 6 },
	{ "escaped key", RAW("{\"pass\\u0077ord\":\"x\",\"\\u0074oken\":1}"),
	  0, {0}, {0}, W("{\"pass\\u0077ord\":" QR ",\"\\u0074oken\":" QR
	  "}"), 2 },
	{ "escaped separator in a key", RAW("{\"access\\u005ftoken\":\"x\"}"),
	  0, {0}, {0}, W("{\"access\\u005ftoken\":" QR "}"), 1 },
	{ "values of every type", RAW("{\"token\":12.5e3,\"secret\":true,"
	  "\"password\":false,\"apikey\":{\"a\":[1,\"}\"]},\"cookie\":[1,"
	  "[2,{\"x\":\"]\"}]],\"passwd\":-0}"), 0, {0}, {0},
	  W("{\"token\":" QR ",\"secret\":" QR ",\"password\":" QR
	  ",\"apikey\":" QR ",\"cookie\":" QR ",\"passwd\":" QR "}"), 6 },
	{ "an escaped quote in the value", RAW("{\"password\":\"a\\\"b\\\\\","
	  "\"n\":1}"), 0, {0}, {0}, W("{\"password\":" QR ",\"n\":1}"), 1 },
	{ "duplicate keys both go", RAW("{\"token\":\"a\",\"token\":\"b\"}"),
	  0, {0}, {0}, W("{\"token\":" QR ",\"token\":" QR "}"), 2 },
	{ "a batch", RAW("[{\"params\":{\"password\":\"p\"}},"
	  "{\"result\":{\"access_token\":\"t\"}}]"), 0, {0}, {0},
	  W("[{\"params\":{\"password\":" QR "}},{\"result\":{"
	  "\"access_token\":" QR "}}]"), 2 },
	{ "a schema's properties stay", RAW("{\"inputSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"password\":{\"type\":\"string\"},"
	  "\"token\":{\"type\":\"string\"}},\"required\":[\"password\"]}}"),
	  0, {0}, {0}, NOWANT, 0 },
	{ "a value named like a schema map still goes", RAW("{\"properties\":"
	  "{\"password\":\"hunter2\"}}"), 0, {0}, {0},
	  W("{\"properties\":{\"password\":" QR "}}"), 1 },
	{ "elicitation: schema stays, answer goes", RAW("[{\"params\":{"
	  "\"requestedSchema\":{\"properties\":{\"password\":{\"type\":"
	  "\"string\"}}}}},{\"result\":{\"action\":\"accept\",\"content\":"
	  "{\"password\":\"hunter2\"}}}]"), 0, {0}, {0}, W("[{\"params\":{"
	  "\"requestedSchema\":{\"properties\":{\"password\":{\"type\":"
	  "\"string\"}}}}},{\"result\":{\"action\":\"accept\",\"content\":"
	  "{\"password\":" QR "}}}]"), 1 },
	{ "--redact-key", RAW("{\"ssn\":\"123\",\"SSN\":4,\"ss_n\":5,"
	  "\"ssnx\":6}"), 0, {"ssn"}, {0}, W("{\"ssn\":" QR ",\"SSN\":" QR
	  ",\"ss_n\":" QR ",\"ssnx\":6}"), 3 },
	{ "--redact-key without defaults", RAW("{\"ssn\":\"1\","
	  "\"password\":\"2\"}"), 1, {"ssn"}, {0}, W("{\"ssn\":" QR
	  ",\"password\":\"2\"}"), 1 },
	{ "--redact-key non-ASCII", RAW("{\"pa\xc3\x9f\":\"1\","
	  "\"pa\\u00df\":\"2\"}"), 1, {"pa\xc3\x9f"}, {0}, W("{\"pa\xc3\x9f\":"
	  QR ",\"pa\\u00df\":" QR "}"), 2 },

	/* Each built-in value pattern, inside a string. */
	{ "OpenAI key", RAW("{\"t\":\"key " SK " end\"}"), 0, {0}, {0},
	  W("{\"t\":\"key " R " end\"}"), 1 },
	{ "Anthropic-style key", RAW("{\"t\":\"sk-ant-api03-abcdefghijklmn"
	  "opqrstuvwxyz\"}"), 0, {0}, {0}, W("{\"t\":\"" R "\"}"), 1 },
	{ "GitHub tokens", RAW("{\"t\":\"" GHP " " GHO " " GHPAT "\"}"), 0,
	  {0}, {0}, W("{\"t\":\"" R " " R " " R "\"}"), 3 },
	{ "JWT", RAW("{\"t\":\"jwt=" JWT ";\"}"), 0, {0}, {0},
	  W("{\"t\":\"jwt=" R ";\"}"), 1 },
	{ "unsigned JWT", RAW("{\"t\":\"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0."
	  "\"}"), 0, {0}, {0}, W("{\"t\":\"" R "\"}"), 1 },
	{ "AWS access key ids", RAW("{\"t\":\"" AKIA "," ASIA "\"}"), 0, {0},
	  {0}, W("{\"t\":\"" R "," R "\"}"), 2 },
	{ "Slack token", RAW("{\"t\":\"" XOXB "\"}"), 0, {0}, {0},
	  W("{\"t\":\"" R "\"}"), 1 },
	{ "Stripe key", RAW("{\"t\":\"" STRIPE "\"}"), 0, {0}, {0},
	  W("{\"t\":\"" R "\"}"), 1 },
	{ "Google API key", RAW("{\"t\":\"" GOOGLE "\"}"), 0, {0}, {0},
	  W("{\"t\":\"" R "\"}"), 1 },
	{ "Bearer token, word kept", RAW("{\"h\":\"Authorization: Bearer "
	  "abcDEF0123456789xyz\",\"g\":\"bearer  Zm9vYmFy1A==\"}"), 0, {0},
	  {0}, W("{\"h\":\"Authorization: Bearer " R "\",\"g\":\"bearer  " R
	  "\"}"), 2 },
	{ "Basic credentials, word kept", RAW("{\"h\":\"Authorization: Basic "
	  "YWxpY2U6czNjcmV0\",\"p\":\"Basic functionality\"}"), 0, {0}, {0},
	  W("{\"h\":\"Authorization: Basic " R "\",\"p\":\"Basic "
	  "functionality\"}"), 1 },
	{ "keys only: JSON in an escaped string", RAW("{\"text\":\"\\n "
	  "{\\\"ssn\\\": \\\"1\\\"}\"}"), 1, {"ssn"}, {0},
	  W("{\"text\":\"\\n {\\\"ssn\\\": \\\"[REDACTED]\\\"}\"}"), 1 },
	{ "keys only: an escaped string that is no JSON", RAW("{\"text\":\""
	  "a\\n{\\\"ssn\\\": 1}\"}"), 1, {"ssn"}, {0}, NOWANT, 0 },
	{ "Basic prose in a message stays", RAW("{\"t\":\"Basic Overview, "
	  "Basic Operations, basic dXNlcg==, Basic OnBhc3M=\"}"), 0, {0},
	  {0}, NOWANT, 0 },
	{ "JSON in a string: its members too", RAW("{\"text\":\"{\\\"api_key"
	  "\\\": \\\"k1\\\", \\\"n\\\": 1}\"}"), 0, {0}, {0},
	  W("{\"text\":\"{\\\"api_key\\\": \\\"[REDACTED]\\\", \\\"n\\\": 1}\"}"),
	  1 },
	{ "JSON in a string, no secret: untouched", RAW("{\"text\":\"{\\\"a"
	  "\\\": 1}\"}"), 0, {0}, {0}, NOWANT, 0 },
	{ "URL password", RAW("{\"url\":\"postgres://admin:s3cr3t@db:5432/x"
	  "\"}"), 0, {0}, {0}, W("{\"url\":\"postgres://admin:" R
	  "@db:5432/x\"}"), 1 },
	{ "PEM private key, lines kept", RAW("{\"f\":\"-----BEGIN RSA PRIVATE"
	  " KEY-----\\nMIIEpAIBAAKCAQEA\\n-----END RSA PRIVATE KEY-----\\n\"}"),
	  0, {0}, {0}, W("{\"f\":\"-----BEGIN RSA PRIVATE KEY-----" R
	  "-----END RSA PRIVATE KEY-----\\n\"}"), 1 },
	{ "PEM public key stays", RAW("{\"f\":\"-----BEGIN PUBLIC KEY-----"
	  "\\nMIIBIjANBg\\n-----END PUBLIC KEY-----\"}"), 0, {0}, {0}, NOWANT,
	  0 },
	{ "escaped token in an escaped string", RAW("{\"t\":\"a\\tb\\n"
	  "\\u0073k-abcdefghijklmnopqrstuvwxyz\\\"\"}"), 0, {0}, {0},
	  W("{\"t\":\"a\\tb\\n" R "\\\"\"}"), 1 },
	{ "token in a key", RAW("{\"" SK "\":1}"), 0, {0}, {0},
	  W("{\"" R "\":1}"), 1 },
	{ "a pattern under a redacted key counts once", RAW("{\"token\":\""
	  SK "\"}"), 0, {0}, {0}, W("{\"token\":" QR "}"), 1 },

	/* --redact-regex: strings only, keys too, per string, whole chars. */
	{ "regex in values", RAW("{\"a\":\"card 4111-1111 ok\","
	  "\"n\":41111111}"),
	  1, {0}, {"[0-9]{4}-[0-9]{4}"}, W("{\"a\":\"card " R " ok\","
	  "\"n\":41111111}"), 1 },
	{ "regex in keys", RAW("{\"user-1234\":\"x\"}"), 1, {0},
	  {"[0-9]{4}"}, W("{\"user-" R "\":\"x\"}"), 1 },
	{ "regex anchors per string", RAW("{\"a\":\"secret-1\",\"b\":\"x "
	  "secret-2\"}"), 1, {0}, {"^secret-[0-9]"}, W("{\"a\":\"" R "\","
	  "\"b\":\"x secret-2\"}"), 1 },
	{ "regex widened to whole UTF-8", RAW("{\"a\":\"caf\xc3\xa9!\"}"), 1,
	  {0}, {"caf."}, W("{\"a\":\"" R "!\"}"), 1 },
	{ "two regexes overlapping", RAW("{\"a\":\"abcdef\"}"), 1, {0},
	  {"abcd", "cdef"}, W("{\"a\":\"" R "\"}"), 1 },
	{ "regex matching nothing is passed over", RAW("{\"a\":\"xyz\"}"), 1,
	  {0}, {"q*"}, NOWANT, 0 },
	{ "regex on escaped text", RAW("{\"a\":\"x\\u0041BC\"}"), 1, {0},
	  {"ABC"}, W("{\"a\":\"x" R "\"}"), 1 },

	/* Not JSON: patterns over every byte, keys as far as they go. */
	{ "a text line", RAW("starting with key=" SK " and password=hunter2"),
	  0, {0}, {0}, W("starting with key=" R " and password=hunter2"), 1 },
	{ "a message cut in a value", RAW("{\"params\":{\"password\":\"hun"),
	  0, {0}, {0}, W("{\"params\":{\"password\":" QR), 1 },
	{ "a message cut in a nested value", RAW("{\"token\":{\"a\":[1,2"),
	  0, {0}, {0}, W("{\"token\":" QR), 1 },
	{ "a bare word for a value", RAW("{\"token\": oops, \"a\": 1}"),
	  0, {0}, {0}, W("{\"token\": " QR ", \"a\": 1}"), 1 },
	{ "invalid UTF-8 around a token", RAW("{\"t\":\"\xff\xfe " SK
	  " \xc3\"}"), 0, {0}, {0}, W("{\"t\":\"\xff\xfe " R " \xc3\"}"), 1 },
	{ "invalid UTF-8 in a redacted value", RAW("{\"password\":\"\xff"
	  "\xfe\"}"), 0, {0}, {0}, W("{\"password\":" QR "}"), 1 },
	{ "a NUL byte in text", RAW("a\0b " SK "\0c"), 0, {0}, {0},
	  W("a\0b " R "\0c"), 1 },
	{ "regex over a text line", RAW("id 1234-5678 \"q\""), 1, {0},
	  {"[0-9]{4}-[0-9]{4}"}, W("id " R " \"q\""), 1 },
};

/* Build the rules of a case. */
static struct redact *
case_rules(const struct redact_case *c)
{
	struct redact	*r = redact_new(!c->no_defaults);
	char		*cause = NULL;
	int		 i;

	for (i = 0; i < MAXRULES && c->keys[i] != NULL; i++) {
		cr_assert_eq(redact_add_key(r, c->keys[i], &cause), 0, "%s",
		    cause);
	}
	for (i = 0; i < MAXRULES && c->res[i] != NULL; i++) {
		cr_assert_eq(redact_add_regex(r, c->res[i], &cause), 0, "%s",
		    cause);
	}
	return r;
}

/*
 * One case: the bytes it must give, or untouched.  Failures are expected,
 * not asserted, so one run reports every case that fails.
 */
static void
case_check(const struct redact_case *c)
{
	struct redact	*r = case_rules(c);
	char		 sentinel, *out = &sentinel;
	size_t		 outlen = 12345, n;

	n = redact_buf(r, c->in, c->len, &out, &outlen);
	redact_free(r);
	if (c->want == NULL) {
		cr_expect_eq(n, 0, "%s: %zu replaced: %.*s", c->name, n,
		    (int)outlen, n != 0 ? out : "");
		if (n != 0) {
			free(out);
			return;
		}
		cr_expect_eq(out, &sentinel, "%s: out was set", c->name);
		cr_expect_eq(outlen, 12345, "%s: outlen was set", c->name);
		return;
	}
	if (n == 0) {
		cr_expect_neq(n, 0, "%s: nothing redacted", c->name);
		return;
	}
	cr_expect_eq(n, c->count, "%s: %zu replaced, want %zu", c->name, n,
	    c->count);
	cr_expect(outlen == c->wantlen && memcmp(out, c->want,
	    c->wantlen) == 0, "%s: got %zu bytes: %.*s\nwant %zu: %s",
	    c->name, outlen, (int)outlen, out, c->wantlen, c->want);
	/* JSON stays JSON. */
	if (scan_is_json(c->in, c->len))
		cr_expect(scan_is_json(out, outlen), "%s: no longer JSON: "
		    "%.*s", c->name, (int)outlen, out);
	free(out);
}

Test(redact, cases, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		case_check(&cases[i]);
}

/* Rules that cannot be built say why. */
Test(redact, bad_rules, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(0);
	char		*cause = NULL;

	cr_assert_eq(redact_add_regex(r, "a(b", &cause), -1);
	cr_assert(strstr(cause, "--redact-regex 'a(b'") != NULL, "%s", cause);
	free(cause);
	cr_assert_eq(redact_add_key(r, "_-_", &cause), -1);
	cr_assert(strstr(cause, "--redact-key") != NULL, "%s", cause);
	free(cause);
	cr_assert_eq(redact_add_key(r, "", &cause), -1);
	free(cause);
	cr_assert(redact_is_empty(r));
	cr_assert_eq(redact_add_key(r, "x", &cause), 0);
	cr_assert(!redact_is_empty(r));
	redact_free(r);
	cr_assert(redact_is_empty(NULL));
}

Test(redact, key_matches, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);

	cr_assert(redact_key_matches(r, "X-Api-Key", 9));
	cr_assert(redact_key_matches(r, "Authorization", 13));
	cr_assert(!redact_key_matches(r, "Content-Type", 12));
	cr_assert(!redact_key_matches(r, "progressToken", 13));
	redact_free(r);
}

/* A stored message: new bytes, the flag, the wire size, no SHA-256. */
Test(redact, message, .timeout = UNIT_TIMEOUT)
{
	static const char	 in[] = "{\"password\":\"hunter2\"}";
	static const char	 want[] = "{\"password\":\"[REDACTED]\"}";
	struct redact		*r = redact_new(1);
	struct msg		*m, *n;

	m = msg_new(DIR_C2S, in, sizeof in - 1);
	m->ts_ns = 11;
	m->mono_ns = 22;
	m->sse_id = xstrdup("ev1");
	m->sha256 = xstrdup("00");
	n = redact_msg(r, m);
	cr_assert_neq(n, m);
	cr_assert_eq(n->len, sizeof want - 1);
	cr_assert(memcmp(n->raw, want, n->len) == 0);
	cr_assert_eq(n->wire_size, (int64_t)(sizeof in - 1));
	cr_assert_eq(n->flags, MSG_REDACTED);
	cr_assert_null(n->sha256);
	cr_assert_str_eq(n->sse_id, "ev1");
	cr_assert_eq(n->dir, DIR_C2S);
	cr_assert_eq(n->ts_ns, 11);
	cr_assert_eq(n->mono_ns, 22);
	msg_free(n);

	/* Cut already: the wire size and the hash (of bytes not kept) stay. */
	m = msg_new(DIR_S2C, in, 14);
	m->wire_size = 1000;
	m->sha256 = xstrdup("ab");
	m->flags = MSG_TRUNCATED;
	n = redact_msg(r, m);
	cr_assert_eq(n->wire_size, 1000);
	cr_assert_eq(n->flags, MSG_TRUNCATED | MSG_REDACTED);
	cr_assert_str_eq(n->sha256, "ab");
	msg_free(n);

	/* Nothing to hide: the same message, untouched. */
	m = msg_new(DIR_S2C, RAW("{\"a\":1}"));
	cr_assert_eq(redact_msg(r, m), m);
	cr_assert_eq(m->wire_size, -1);
	cr_assert_eq(m->flags, 0);
	msg_free(m);
	redact_free(r);
}

/* DEEP levels of arrays around a secret, then objects around one. */
Test(redact, deep_nesting, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);
	size_t		 len, i, n, outlen;
	char		*buf, *out, *p;

	len = DEEP * 2 + 64;
	buf = xmalloc(len);
	p = buf;
	for (i = 0; i < DEEP; i++)
		*p++ = '[';
	p += sprintf(p, "{\"password\":\"x\"}");
	for (i = 0; i < DEEP; i++)
		*p++ = ']';
	n = redact_buf(r, buf, (size_t)(p - buf), &out, &outlen);
	cr_assert_eq(n, 1);
	cr_assert(strstr(out, "{\"password\":\"[REDACTED]\"}") != NULL);
	cr_assert(scan_is_json(out, outlen));
	free(out);
	free(buf);

	len = DEEP * 8 + 64;
	buf = xmalloc(len);
	p = buf;
	for (i = 0; i < DEEP; i++)
		p += sprintf(p, "{\"a\":");
	p += sprintf(p, "{\"token\":[[[1]]]}");
	for (i = 0; i < DEEP; i++)
		*p++ = '}';
	n = redact_buf(r, buf, (size_t)(p - buf), &out, &outlen);
	cr_assert_eq(n, 1);
	cr_assert_eq(outlen, (size_t)(p - buf) - 7 + 12);
	cr_assert(strstr(out, "{\"token\":\"[REDACTED]\"}") != NULL);
	free(out);

	/* Unbalanced: DEEP opens and no close, a cut message. */
	memset(buf, '{', DEEP);
	n = redact_buf(r, buf, DEEP, &out, &outlen);
	cr_assert_eq(n, 0);
	free(buf);
	redact_free(r);
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec	t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Fill a buffer with a repeated unit, in a JSON string or not. */
static char *
repeat(const char *unit, size_t size, int quoted, size_t *len)
{
	size_t	ul = strlen(unit), o = 0;
	char	*b = xmalloc(size + 16);

	if (quoted) {
		memcpy(b, "{\"t\":\"", 6);
		o = 6;
	}
	while (o + ul + 3 <= size) {
		memcpy(b + o, unit, ul);
		o += ul;
	}
	if (quoted) {
		memcpy(b + o, "\"}", 2);
		o += 2;
	}
	*len = o;
	return b;
}

/*
 * Inputs that make a scan that restarts at every byte quadratic: each
 * must take linear time (well under HOSTILE_MAX_S for 2 MiB).
 */
static void
hostile_run(struct redact *r, size_t size)
{
	static const char *const units[] = {
		"://", "://a:", "eyJ", "eyJaaaaaaaaaa.", "-----BEGIN ",
		"-----BEGIN PRIVATE KEY-----", "bearer ", "sk-", "\\u0041",
		"\\\\u0041", "\"", "\"password\":", "{", "[", "{\"a\":",
		"\\\\", "p_a_s_s_w_o_r_d", NULL
	};
	struct timespec	 t0;
	char		*b, *out;
	size_t		 len, outlen, n;
	int		 i, quoted;
	double		 s;

	for (i = 0; units[i] != NULL; i++) {
		for (quoted = 0; quoted <= 1; quoted++) {
			b = repeat(units[i], size, quoted, &len);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			n = redact_buf(r, b, len, &out, &outlen);
			s = seconds_since(&t0);
			cr_assert_lt(s, HOSTILE_MAX_S, "'%s' x %zu bytes took "
			    "%.2f s", units[i], len, s);
			if (n != 0)
				free(out);
			free(b);
		}
	}
}

Test(redact, hostile_inputs_are_linear, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);

	hostile_run(r, HOSTILE_SIZE);
	/*
	 * With a --redact-regex too, on less: ASan's regexec() reads the
	 * whole rest of the text at every call (glibc itself stops at the
	 * bound we give).
	 */
	cr_assert_eq(redact_add_regex(r, "[a-z]+:", NULL), 0);
	hostile_run(r, HOSTILE_SIZE_REGEX);
	redact_free(r);
}

/* A huge string: untouched without a secret, else only the secret goes. */
Test(redact, huge_string, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);
	size_t		 len = 16 * 1024 * 1024, n, outlen;
	char		*b, *out;

	b = xmalloc(len + 64);
	memcpy(b, "{\"t\":\"", 6);
	memset(b + 6, 'x', len);
	memcpy(b + 6 + len, "\"}", 2);
	n = redact_buf(r, b, len + 8, &out, &outlen);
	cr_assert_eq(n, 0);
	memcpy(b + 6 + len - strlen(SK), SK, strlen(SK));
	b[6 + len - strlen(SK) - 1] = ' ';
	n = redact_buf(r, b, len + 8, &out, &outlen);
	cr_assert_eq(n, 1);
	cr_assert_eq(outlen, len + 8 - strlen(SK) + strlen(R));
	cr_assert(memcmp(out + outlen - 2 - strlen(R), R "\"}",
	    strlen(R) + 2) == 0);
	free(out);
	free(b);
	redact_free(r);
}

/*
 * Every prefix of a message with secrets (a message cut anywhere) is
 * redacted as well as it can be: no byte of the secrets survives past
 * where the key or the token has fully arrived, and nothing crashes.
 */
Test(redact, every_prefix, .timeout = UNIT_TIMEOUT)
{
	static const char	 msgtext[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"params\":{\"arguments\":{\"password\":\"hunter2hunter2\","
	    "\"note\":\"use " SK " here\"}}}";
	struct redact		*r = redact_new(1);
	size_t			 len, n, outlen;
	char			*out;
	const char		*pw = strstr(msgtext, "hunter2");

	for (len = 1; len <= sizeof msgtext - 1; len++) {
		n = redact_buf(r, msgtext, len, &out, &outlen);
		if (n == 0) {
			/* Untouched only before the value starts. */
			cr_assert_lt(len, (size_t)(pw - msgtext) + 1,
			    "prefix of %zu bytes untouched", len);
			continue;
		}
		cr_assert(memmem(out, outlen, "hunter2", 7) == NULL,
		    "prefix of %zu: %.*s", len, (int)outlen, out);
		cr_assert(memmem(out, outlen, SK, strlen(SK)) == NULL,
		    "prefix of %zu: %.*s", len, (int)outlen, out);
		free(out);
	}
	redact_free(r);
}

/*
 * Where a token ends, for every byte after it and at every alignment (the
 * scan looks at 16 bytes at once where it can): an sk- key is replaced up
 * to exactly the first byte that is not [A-Za-z0-9_-].
 */
Test(redact, token_ends, .timeout = UNIT_TIMEOUT)
{
	struct redact	*r = redact_new(1);
	char		 in[128], want[128], *out;
	size_t		 pad, klen, len, wlen, n, outlen;
	int		 c, is_token;

	for (c = 1; c < 256; c++) {
		is_token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-';
		for (pad = 0; pad < 20; pad++) {
			for (klen = 20; klen < 40; klen += 3) {
				/* "<pad spaces>sk-<klen x 'a'><c>z" */
				memset(in, ' ', pad);
				memcpy(in + pad, "sk-", 3);
				memset(in + pad + 3, 'a', klen);
				len = pad + 3 + klen;
				in[len++] = (char)c;
				in[len++] = 'z';
				n = redact_buf(r, in, len, &out, &outlen);
				cr_assert_eq(n, 1, "byte %d pad %zu key %zu",
				    c, pad, klen);
				/* A token byte continues the key, to z. */
				memset(want, ' ', pad);
				memcpy(want + pad, R, strlen(R));
				wlen = pad + strlen(R);
				if (!is_token) {
					want[wlen++] = (char)c;
					want[wlen++] = 'z';
				}
				cr_assert(outlen == wlen && memcmp(out, want,
				    wlen) == 0, "byte %d pad %zu key %zu: %.*s",
				    c, pad, klen, (int)outlen, out);
				free(out);
			}
		}
	}
	redact_free(r);
}
