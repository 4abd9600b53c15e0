/*
 * The top-level scanner.  Hand-written cases say what each kind of input
 * must give; the differential test then holds the scanner to jansson's
 * reading of a corpus of real MCP messages and thousands of their
 * mutations, so a disagreement on anything jansson accepts is a failure.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "core.h"
#include "unit.h"

#define CORPUS		FIXTURES_DIR "/messages.jsonl"
/* Nesting far beyond the scanner's allocation-free stack. */
#define DEEP		100000
/* What the corpus and its mutations must at least hold. */
#define CORPUS_MIN_LINES	100
#define DIFF_MIN_ACCEPTED	40000
#define DIFF_MIN_REJECTED	50000
#define DIFF_MIN_PER_KIND	1000

/* An input with its length, so it may hold NUL bytes. */
#define RAW(s)	(s), sizeof(s) - 1

struct scan_case {
	const char	*name;
	const char	*in;
	size_t		 len;
	enum msg_kind	 kind;
	const char	*method;	/* decoded; NULL when none */
	const char	*id;		/* the id's text as written, or NULL */
};

static const struct scan_case scan_cases[] = {
	/* Requests: ids of each type, methods with escapes. */
	{ "request number id",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
	  KIND_REQUEST, "tools/list", "1" },
	{ "request string id",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}"),
	  KIND_REQUEST, "ping", "\"abc\"" },
	{ "request null id",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}"),
	  KIND_REQUEST, "ping", "null" },
	{ "request negative fraction id",
	  RAW("{\"id\":-1.5e-3,\"method\":\"ping\"}"),
	  KIND_REQUEST, "ping", "-1.5e-3" },
	{ "request object id kept as written",
	  RAW("{\"id\":{ \"a\" : [1] },\"method\":\"x\"}"),
	  KIND_REQUEST, "x", "{ \"a\" : [1] }" },
	{ "method with escaped slash",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools\\/list\"}"),
	  KIND_REQUEST, "tools/list", "2" },
	{ "method with unicode escape",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\\u0074ools/list\"}"),
	  KIND_REQUEST, "tools/list", "3" },
	{ "method with surrogate pair",
	  RAW("{\"id\":4,\"method\":\"x\\ud83d\\ude00y\"}"),
	  KIND_REQUEST, "x\xf0\x9f\x98\x80y", "4" },
	{ "method with raw UTF-8",
	  RAW("{\"id\":5,\"method\":\"caf\xc3\xa9/\xe6\x97\xa5\"}"),
	  KIND_REQUEST, "caf\xc3\xa9/\xe6\x97\xa5", "5" },
	{ "method with escaped quote and backslash",
	  RAW("{\"id\":6,\"method\":\"a\\\"b\\\\c\"}"),
	  KIND_REQUEST, "a\"b\\c", "6" },
	{ "empty method",
	  RAW("{\"id\":7,\"method\":\"\"}"),
	  KIND_REQUEST, "", "7" },
	{ "id spaced around the colon",
	  RAW("{\"method\":\"x\", \"id\" : 7 }"),
	  KIND_REQUEST, "x", "7" },
	{ "id string with escaped quote",
	  RAW("{\"method\":\"x\",\"id\":\"a\\\"b\"}"),
	  KIND_REQUEST, "x", "\"a\\\"b\"" },
	{ "id after params",
	  RAW("{\"method\":\"x\",\"params\":{\"id\":9,\"method\":\"no\"},"
	  "\"id\":8}"),
	  KIND_REQUEST, "x", "8" },

	/* Notifications. */
	{ "notification",
	  RAW("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
	  KIND_NOTIFICATION, "notifications/initialized", NULL },
	{ "notification with params",
	  RAW("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	  "\"params\":{\"progressToken\":1,\"progress\":0.5,\"id\":3}}"),
	  KIND_NOTIFICATION, "notifications/progress", NULL },
	{ "notification with result too",
	  RAW("{\"method\":\"m\",\"result\":1}"),
	  KIND_NOTIFICATION, "m", NULL },

	/* Responses and errors. */
	{ "response",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"),
	  KIND_RESPONSE, NULL, "1" },
	{ "response null result",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":null}"),
	  KIND_RESPONSE, NULL, "\"r\"" },
	{ "response without id",
	  RAW("{\"result\":[1,2]}"),
	  KIND_RESPONSE, NULL, NULL },
	{ "response with nested error member",
	  RAW("{\"id\":1,\"result\":{\"error\":1,\"method\":\"x\"}}"),
	  KIND_RESPONSE, NULL, "1" },
	{ "error",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
	  "\"message\":\"Method not found\"}}"),
	  KIND_ERROR, NULL, "1" },
	{ "error null id",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	  "\"message\":\"Parse error\"}}"),
	  KIND_ERROR, NULL, "null" },

	/* Batches: any top-level array. */
	{ "batch",
	  RAW("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},"
	  "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]"),
	  KIND_BATCH, NULL, NULL },
	{ "empty batch", RAW("[]"), KIND_BATCH, NULL, NULL },
	{ "empty batch spaced", RAW(" [ \r\n ] \r"), KIND_BATCH, NULL, NULL },
	{ "batch of scalars", RAW("[1,\"two\",null]"), KIND_BATCH, NULL,
	  NULL },

	/* White space: the four JSON ones, anywhere between tokens. */
	{ "trailing CR",
	  RAW("{\"method\":\"x\"}\r"),
	  KIND_NOTIFICATION, "x", NULL },
	{ "all white space",
	  RAW(" \t\r\n{ \t\"method\"\r\n:\n\"x\" , \"id\"\t:\t1\r}\n\t \r"),
	  KIND_REQUEST, "x", "1" },
	{ "form feed is not white space",
	  RAW("\f{\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "vertical tab is not white space",
	  RAW("{\"method\":\"x\"}\v"), KIND_INVALID, NULL, NULL },
	{ "no-break space is not white space",
	  RAW("\xc2\xa0{\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },

	/* Duplicate keys: the last one wins, as in jansson. */
	{ "duplicate method, last wins",
	  RAW("{\"method\":\"a\",\"method\":\"b\"}"),
	  KIND_NOTIFICATION, "b", NULL },
	{ "duplicate method, last not a string",
	  RAW("{\"method\":\"a\",\"method\":5}"),
	  KIND_INVALID, NULL, NULL },
	{ "duplicate method, last a string",
	  RAW("{\"method\":5,\"method\":\"a\"}"),
	  KIND_NOTIFICATION, "a", NULL },
	{ "duplicate id, last wins",
	  RAW("{\"id\":1,\"method\":\"a\",\"id\":\"two\"}"),
	  KIND_REQUEST, "a", "\"two\"" },
	{ "duplicate result",
	  RAW("{\"id\":1,\"result\":1,\"result\":2}"),
	  KIND_RESPONSE, NULL, "1" },

	/* Keys are compared decoded. */
	{ "method key with escape",
	  RAW("{\"m\\u0065thod\":\"x\",\"\\u0069d\":3}"),
	  KIND_REQUEST, "x", "3" },
	{ "method key all escapes",
	  RAW("{\"\\u006d\\u0065\\u0074\\u0068\\u006f\\u0064\":\"x\"}"),
	  KIND_NOTIFICATION, "x", NULL },
	{ "result key with escape",
	  RAW("{\"id\":1,\"re\\u0073ult\":true}"),
	  KIND_RESPONSE, NULL, "1" },
	{ "error key with escaped slash is another key",
	  RAW("{\"id\":1,\"error\\/\":{}}"),
	  KIND_INVALID, NULL, "1" },
	{ "method key with escaped NUL is another key",
	  RAW("{\"method\\u0000\":\"x\"}"),
	  KIND_INVALID, NULL, NULL },
	{ "keys differing in case",
	  RAW("{\"Method\":\"x\",\"ID\":1}"),
	  KIND_INVALID, NULL, NULL },
	{ "longer keys",
	  RAW("{\"methods\":\"x\",\"idx\":1,\"results\":1}"),
	  KIND_INVALID, NULL, NULL },
	{ "long escaped key",
	  RAW("{\"\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061"
	  "\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061\\u0061"
	  "\":1,\"result\":2}"),
	  KIND_RESPONSE, NULL, NULL },

	/* Numbers beyond any C type are still JSON. */
	{ "huge exponent id",
	  RAW("{\"id\":1e400,\"method\":\"x\"}"),
	  KIND_REQUEST, "x", "1e400" },
	{ "huge integer id",
	  RAW("{\"id\":123456789012345678901234567890,\"method\":\"x\"}"),
	  KIND_REQUEST, "x", "123456789012345678901234567890" },
	{ "huge negative result",
	  RAW("{\"id\":-0,\"result\":-1.0E+400}"),
	  KIND_RESPONSE, NULL, "-0" },

	/* Not JSON at all. */
	{ "empty input", RAW(""), KIND_INVALID, NULL, NULL },
	{ "only spaces", RAW("    "), KIND_INVALID, NULL, NULL },
	{ "only white space", RAW(" \t\r\n"), KIND_INVALID, NULL, NULL },
	{ "words", RAW("not json"), KIND_INVALID, NULL, NULL },
	{ "trailing garbage",
	  RAW("{\"id\":1,\"method\":\"x\"}x"), KIND_INVALID, NULL, NULL },
	{ "two objects",
	  RAW("{\"id\":1,\"method\":\"x\"}{}"), KIND_INVALID, NULL, NULL },
	{ "array then garbage", RAW("[1] ]"), KIND_INVALID, NULL, NULL },
	{ "trailing comma in object",
	  RAW("{\"method\":\"x\",}"), KIND_INVALID, NULL, NULL },
	{ "trailing comma in array",
	  RAW("[1,2,]"), KIND_INVALID, NULL, NULL },
	{ "trailing comma in params",
	  RAW("{\"method\":\"x\",\"params\":[1,]}"), KIND_INVALID, NULL,
	  NULL },
	{ "leading comma", RAW("{,\"method\":\"x\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "missing comma",
	  RAW("{\"method\":\"x\" \"id\":1}"), KIND_INVALID, NULL, NULL },
	{ "missing colon", RAW("{\"method\" \"x\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "missing value", RAW("{\"method\":}"), KIND_INVALID, NULL, NULL },
	{ "key not a string", RAW("{method:\"x\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "single quotes", RAW("{'method':'x'}"), KIND_INVALID, NULL, NULL },
	{ "unclosed object", RAW("{\"method\":\"x\""), KIND_INVALID, NULL,
	  NULL },
	{ "unclosed string", RAW("{\"method\":\"x}"), KIND_INVALID, NULL,
	  NULL },
	{ "mismatched brackets",
	  RAW("{\"method\":\"x\",\"params\":[}]"), KIND_INVALID, NULL, NULL },
	{ "leading zero",
	  RAW("{\"id\":01,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "leading zero in params",
	  RAW("{\"method\":\"x\",\"params\":[00]}"), KIND_INVALID, NULL, NULL },
	{ "lone minus", RAW("-"), KIND_INVALID, NULL, NULL },
	{ "lone minus as id",
	  RAW("{\"id\":-,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "plus sign",
	  RAW("{\"id\":+1,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "bare fraction",
	  RAW("{\"id\":.5,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "point without digits",
	  RAW("{\"id\":1.,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "exponent without digits",
	  RAW("{\"id\":1e+,\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "NaN", RAW("{\"id\":NaN,\"method\":\"x\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "Infinity", RAW("{\"result\":Infinity}"), KIND_INVALID, NULL,
	  NULL },
	{ "capital literal", RAW("{\"result\":True}"), KIND_INVALID, NULL,
	  NULL },
	{ "short literal", RAW("{\"result\":nul}"), KIND_INVALID, NULL,
	  NULL },
	{ "long literal", RAW("{\"result\":nulls}"), KIND_INVALID, NULL,
	  NULL },
	{ "byte order mark",
	  RAW("\xef\xbb\xbf{\"method\":\"x\"}"), KIND_INVALID, NULL, NULL },
	{ "comment", RAW("{\"method\":\"x\"} // hi"), KIND_INVALID, NULL,
	  NULL },

	/* Strings: bad UTF-8, control characters, bad escapes. */
	{ "invalid UTF-8 byte",
	  RAW("{\"method\":\"\xff" "\"}"), KIND_INVALID, NULL, NULL },
	{ "invalid UTF-8 in params",
	  RAW("{\"method\":\"x\",\"params\":{\"t\":\"a\x80" "b\"}}"),
	  KIND_INVALID, NULL, NULL },
	{ "overlong UTF-8",
	  RAW("{\"method\":\"\xc0\xaf" "\"}"), KIND_INVALID, NULL, NULL },
	{ "overlong three-byte UTF-8",
	  RAW("{\"method\":\"\xe0\x80\xaf" "\"}"), KIND_INVALID, NULL, NULL },
	{ "UTF-8 surrogate",
	  RAW("{\"method\":\"\xed\xa0\x80" "\"}"), KIND_INVALID, NULL, NULL },
	{ "UTF-8 above U+10FFFF",
	  RAW("{\"method\":\"\xf4\x90\x80\x80" "\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "truncated UTF-8",
	  RAW("{\"method\":\"\xe2\x82" "\"}"), KIND_INVALID, NULL, NULL },
	{ "UTF-8 cut by the end",
	  RAW("{\"method\":\"\xe2\x82"), KIND_INVALID, NULL, NULL },
	{ "raw tab in string",
	  RAW("{\"method\":\"a\tb\"}"), KIND_INVALID, NULL, NULL },
	{ "raw newline in string",
	  RAW("{\"method\":\"a\nb\"}"), KIND_INVALID, NULL, NULL },
	{ "raw control char in string",
	  RAW("{\"method\":\"x\",\"params\":\"\x01\"}"), KIND_INVALID, NULL,
	  NULL },
	{ "raw unit separator in string",
	  RAW("{\"method\":\"a\x1f" "b\"}"), KIND_INVALID, NULL, NULL },
	{ "DEL is allowed in a string",
	  RAW("{\"method\":\"a\x7f" "b\"}"), KIND_NOTIFICATION, "a\x7f" "b",
	  NULL },
	{ "raw NUL in string",
	  RAW("{\"method\":\"a\0b\"}"), KIND_INVALID, NULL, NULL },
	{ "raw NUL after message",
	  RAW("{\"method\":\"a\"}\0"), KIND_INVALID, NULL, NULL },
	{ "raw NUL before message",
	  RAW("\0{\"method\":\"a\"}"), KIND_INVALID, NULL, NULL },
	{ "unknown escape",
	  RAW("{\"method\":\"\\x41\"}"), KIND_INVALID, NULL, NULL },
	{ "short unicode escape",
	  RAW("{\"method\":\"\\u12\"}"), KIND_INVALID, NULL, NULL },
	{ "non-hex unicode escape",
	  RAW("{\"method\":\"\\u12g4\"}"), KIND_INVALID, NULL, NULL },
	{ "backslash at the end",
	  RAW("{\"method\":\"\\"), KIND_INVALID, NULL, NULL },

	/* JSON, but no JSON-RPC shape. */
	{ "both result and error",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}"),
	  KIND_INVALID, NULL, "1" },
	{ "neither result nor error",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1}"), KIND_INVALID, NULL, "1" },
	{ "empty object", RAW("{}"), KIND_INVALID, NULL, NULL },
	{ "members only nested",
	  RAW("{\"params\":{\"method\":\"x\",\"id\":1}}"), KIND_INVALID, NULL,
	  NULL },
	{ "method a number",
	  RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}"), KIND_INVALID,
	  NULL, "1" },
	{ "method null", RAW("{\"method\":null}"), KIND_INVALID, NULL, NULL },
	{ "method an object beside a result",
	  RAW("{\"method\":{},\"result\":1}"), KIND_INVALID, NULL, NULL },
	{ "method an array", RAW("{\"method\":[\"x\"]}"), KIND_INVALID, NULL,
	  NULL },
	{ "top-level number", RAW("42"), KIND_INVALID, NULL, NULL },
	{ "top-level string", RAW("\"str\""), KIND_INVALID, NULL, NULL },
	{ "top-level true", RAW(" true "), KIND_INVALID, NULL, NULL },
	{ "top-level null", RAW("null"), KIND_INVALID, NULL, NULL },
};

/* A malloc'd copy of len bytes, exactly that big, so over-reads trap. */
static unsigned char *
scan_test_copy(const void *p, size_t len)
{
	unsigned char	*c = malloc(len == 0 ? 1 : len);

	cr_assert_not_null(c);
	if (len != 0)
		memcpy(c, p, len);
	return c;
}

/* Every hand-written case gives its kind, method and id text. */
Test(scan, cases, .timeout = UNIT_TIMEOUT)
{
	const struct scan_case	*c;
	struct scan		 s;
	unsigned char		*buf;
	char			*method, *id;
	size_t			 i;

	for (i = 0; i < sizeof scan_cases / sizeof scan_cases[0]; i++) {
		c = &scan_cases[i];
		buf = scan_test_copy(c->in, c->len);
		scan_message(buf, c->len, &s);
		cr_assert_eq(s.kind, c->kind, "%s: kind %s, want %s", c->name,
		    kind_name(s.kind), kind_name(c->kind));

		method = scan_method_dup(buf, &s);
		if (c->method == NULL)
			cr_assert_null(method, "%s: method '%s', want none",
			    c->name, method);
		else {
			cr_assert_not_null(method, "%s: no method", c->name);
			cr_assert_str_eq(method, c->method, "%s: method '%s'",
			    c->name, method);
		}

		id = scan_id_dup(buf, &s);
		if (c->id == NULL)
			cr_assert_null(id, "%s: id '%s', want none", c->name,
			    id);
		else {
			cr_assert_not_null(id, "%s: no id", c->name);
			cr_assert_str_eq(id, c->id, "%s: id '%s'", c->name, id);
			cr_assert_eq(s.id_len, strlen(c->id));
		}
		free(method);
		free(id);
		free(buf);
	}
}

struct decode_case {
	const char	*in;
	size_t		 len;
	int		 rc;
	const char	*out;
	size_t		 outlen;
};

static const struct decode_case decode_cases[] = {
	{ RAW("plain"), 0, RAW("plain") },
	{ RAW(""), 0, RAW("") },
	{ RAW("a\\nb\\tc"), 0, RAW("a\nb\tc") },
	{ RAW("\\\"\\\\\\/\\b\\f\\n\\r\\t"), 0, RAW("\"\\/\b\f\n\r\t") },
	{ RAW("\\u0041\\u00e9\\u20AC"), 0, RAW("A\xc3\xa9\xe2\x82\xac") },
	{ RAW("\\ud83d\\ude00"), 0, RAW("\xf0\x9f\x98\x80") },
	{ RAW("\\uDBFF\\uDFFF"), 0, RAW("\xf4\x8f\xbf\xbf") },
	{ RAW("\\ud800"), 0, RAW("\xef\xbf\xbd") },
	{ RAW("\\udc00x"), 0, RAW("\xef\xbf\xbdx") },
	{ RAW("\\ud800\\u0041"), 0, RAW("\xef\xbf\xbd" "A") },
	{ RAW("\\ud800\\ud800\\udc00"), 0,
	  RAW("\xef\xbf\xbd\xf0\x90\x80\x80") },
	{ RAW("\\u0000"), 0, RAW("\0") },
	{ RAW("caf\xc3\xa9"), 0, RAW("caf\xc3\xa9") },
	{ RAW("\\"), -1, NULL, 0 },
	{ RAW("\\u12"), -1, NULL, 0 },
	{ RAW("\\q"), -1, NULL, 0 },
};

/* Decoding gives the right bytes and never writes past len. */
Test(scan, string_decode, .timeout = UNIT_TIMEOUT)
{
	const struct decode_case	*c;
	char				*out;
	size_t				 i, n;
	int				 rc;

	for (i = 0; i < sizeof decode_cases / sizeof decode_cases[0]; i++) {
		c = &decode_cases[i];
		out = malloc(c->len == 0 ? 1 : c->len);
		cr_assert_not_null(out);
		n = 12345;
		rc = scan_string_decode(c->in, c->len, out, &n);
		cr_assert_eq(rc, c->rc, "case %zu: rc %d", i, rc);
		if (rc == 0) {
			cr_assert_eq(n, c->outlen, "case %zu: %zu bytes", i,
			    n);
			cr_assert_leq(n, c->len);
			cr_assert_eq(memcmp(out, c->out, n), 0, "case %zu", i);
		}
		free(out);
	}
}

/*
 * Build a request whose params nest depth levels of open (a string of one
 * or more bytes repeated) and then close, with extra appended.
 */
static unsigned char *
scan_test_deep(const char *open, const char *close, size_t depth,
    size_t nclose, const char *inner, size_t *len)
{
	const char	*head = "{\"jsonrpc\":\"2.0\",\"id\":1,"
			    "\"method\":\"deep\",\"params\":";
	size_t		 ol = strlen(open), cl = strlen(close);
	size_t		 total, i;
	unsigned char	*buf, *p;

	total = strlen(head) + depth * ol + strlen(inner) + nclose * cl + 1;
	p = buf = malloc(total);
	cr_assert_not_null(buf);
	memcpy(p, head, strlen(head));
	p += strlen(head);
	for (i = 0; i < depth; i++, p += ol)
		memcpy(p, open, ol);
	memcpy(p, inner, strlen(inner));
	p += strlen(inner);
	for (i = 0; i < nclose; i++, p += cl)
		memcpy(p, close, cl);
	*p++ = '}';
	*len = (size_t)(p - buf);
	cr_assert_eq(*len, total);
	return buf;
}

/* Deep nesting is valid and does not crash; unbalanced nesting is not. */
Test(scan, deep_nesting, .timeout = UNIT_TIMEOUT)
{
	struct scan	 s;
	unsigned char	*buf;
	size_t		 len;
	char		*method;

	buf = scan_test_deep("[", "]", DEEP, DEEP, "", &len);
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_REQUEST);
	method = scan_method_dup(buf, &s);
	cr_assert_str_eq(method, "deep");
	free(method);
	free(buf);

	buf = scan_test_deep("{\"a\":[", "]}", DEEP, DEEP, "1", &len);
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_REQUEST);
	free(buf);

	/* One bracket short, one too many, and the wrong closer. */
	buf = scan_test_deep("[", "]", DEEP, DEEP - 1, "", &len);
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	cr_assert_eq(s.has_method, 0);
	free(buf);

	buf = scan_test_deep("[", "]", DEEP, DEEP + 1, "", &len);
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	free(buf);

	buf = scan_test_deep("[", "}", DEEP, DEEP, "", &len);
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	free(buf);

	/* Only opening, to the end of the input. */
	buf = scan_test_deep("[", "", DEEP, 0, "", &len);
	scan_message(buf, len - 1, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	free(buf);
}

/* A deep top-level array is a batch; cut anywhere it is nothing. */
Test(scan, deep_batch, .timeout = UNIT_TIMEOUT)
{
	struct scan	 s;
	unsigned char	*buf;
	size_t		 i, len = 2 * DEEP;

	buf = malloc(len);
	cr_assert_not_null(buf);
	for (i = 0; i < DEEP; i++) {
		buf[i] = '[';
		buf[len - 1 - i] = ']';
	}
	scan_message(buf, len, &s);
	cr_assert_eq(s.kind, KIND_BATCH);
	scan_message(buf, len - 1, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	scan_message(buf, DEEP, &s);
	cr_assert_eq(s.kind, KIND_INVALID);
	free(buf);
}

/*
 * The reference: the kind jansson's tree has under the scanner's rules.
 * An array is a batch; an object with a string "method" is a request or a
 * notification by whether it has "id"; a "method" of another type makes
 * it invalid; otherwise exactly one of "result" and "error" decides.
 */
static enum msg_kind
ref_kind(json_t *v)
{
	json_t	*m;
	int	 r, e;

	if (json_is_array(v))
		return KIND_BATCH;
	if (!json_is_object(v))
		return KIND_INVALID;
	if ((m = json_object_get(v, "method")) != NULL) {
		if (!json_is_string(m))
			return KIND_INVALID;
		if (json_object_get(v, "id") != NULL)
			return KIND_REQUEST;
		return KIND_NOTIFICATION;
	}
	r = json_object_get(v, "result") != NULL;
	e = json_object_get(v, "error") != NULL;
	if (r && !e)
		return KIND_RESPONSE;
	if (e && !r)
		return KIND_ERROR;
	return KIND_INVALID;
}

/* What the differential test compared, so it can tell it compared enough. */
struct diff_stats {
	size_t	inputs;
	size_t	accepted;
	size_t	kinds[KIND_MAX];
};

/*
 * Scan one input and, if jansson accepts it, require the same kind, the
 * same decoded method and an id equal to jansson's.  Where jansson rejects
 * the input the scanner only has to survive it.
 */
static void
diff_check(const void *in, size_t len, struct diff_stats *st)
{
	unsigned char	*buf = scan_test_copy(in, len);
	struct scan	 s;
	json_error_t	 jerr;
	json_t		*tree, *jm, *jid, *sid;
	enum msg_kind	 want;
	char		*method, *id, *dec;
	size_t		 n;
	int		 show = len > 300 ? 300 : (int)len;

	st->inputs++;
	scan_message(buf, len, &s);
	method = scan_method_dup(buf, &s);
	id = scan_id_dup(buf, &s);
	if (s.has_method)
		cr_assert_leq(s.method_off + s.method_len, len);
	if (s.has_id)
		cr_assert_leq(s.id_off + s.id_len, len);

	tree = json_loadb((const char *)buf, len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &jerr);
	if (tree == NULL)
		goto out;
	st->accepted++;

	want = ref_kind(tree);
	st->kinds[want]++;
	cr_assert_eq(s.kind, want, "kind %s, jansson's %s: %.*s",
	    kind_name(s.kind), kind_name(want), show, (const char *)buf);

	jm = json_is_object(tree) ? json_object_get(tree, "method") : NULL;
	if (jm != NULL && json_is_string(jm)) {
		cr_assert(s.has_method, "no method: %.*s", show,
		    (const char *)buf);
		dec = malloc(s.method_len + 1);
		cr_assert_not_null(dec);
		cr_assert_eq(scan_string_decode((const char *)buf +
		    s.method_off, s.method_len, dec, &n), 0);
		cr_assert_eq(n, json_string_length(jm), "method length: %.*s",
		    show, (const char *)buf);
		cr_assert_eq(memcmp(dec, json_string_value(jm), n), 0,
		    "method differs: %.*s", show, (const char *)buf);
		if (memchr(dec, '\0', n) == NULL)
			cr_assert_str_eq(method, json_string_value(jm));
		free(dec);
	} else
		cr_assert_not(s.has_method, "method found: %.*s", show,
		    (const char *)buf);

	jid = json_is_object(tree) ? json_object_get(tree, "id") : NULL;
	if (jid != NULL) {
		cr_assert(s.has_id, "no id: %.*s", show, (const char *)buf);
		sid = json_loadb(id, s.id_len, JSON_DECODE_ANY |
		    JSON_ALLOW_NUL, &jerr);
		cr_assert_not_null(sid, "id text '%s' is not JSON", id);
		cr_assert(json_equal(sid, jid), "id '%s' differs: %.*s", id,
		    show, (const char *)buf);
		json_decref(sid);
	} else
		cr_assert_not(s.has_id, "id found: %.*s", show,
		    (const char *)buf);
	json_decref(tree);
out:
	free(method);
	free(id);
	free(buf);
}

/* A run of bytes: diff_check_pieces joins several into one input. */
struct piece {
	const void	*p;
	size_t		 len;
};

/* Check the input made of the n pieces one after another. */
static void
diff_check_pieces(const struct piece *pc, size_t n, struct diff_stats *st)
{
	unsigned char	*buf;
	size_t		 i, len = 0;

	for (i = 0; i < n; i++)
		len += pc[i].len;
	buf = malloc(len + 1);
	cr_assert_not_null(buf);
	len = 0;
	for (i = 0; i < n; i++) {
		memcpy(buf + len, pc[i].p, pc[i].len);
		len += pc[i].len;
	}
	diff_check(buf, len, st);
	free(buf);
}

/* Check the input made of a, then b, then c (any may be empty). */
static void
diff_check3(const void *a, size_t al, const void *b, size_t bl,
    const void *c, size_t cl, struct diff_stats *st)
{
	struct piece	pc[3] = { { a, al }, { b, bl }, { c, cl } };

	diff_check_pieces(pc, 3, st);
}

/* Bytes put in place of or between others: structure, and worse. */
static const char mutation_bytes[] =
    "{}[],:\"\\ 0-e.u\r\n\t\x01\x1f\x7f\x80\xc3\xff";
#define MUTATION_NBYTES	(sizeof mutation_bytes - 1)
/* Positions mutated in each line, spread over it. */
#define MUTATION_SPOTS	24

/* What the members we care about are renamed to. */
static const struct {
	const char	*from;
	const char	*to;
} renames[] = {
	{ "\"method\"", "\"methox\"" },
	{ "\"method\"", "\"m\\u0065thod\"" },
	{ "\"method\"", "\"id\"" },
	{ "\"method\"", "\"result\"" },
	{ "\"method\"", "\"error\"" },
	{ "\"id\"", "\"ix\"" },
	{ "\"id\"", "\"\\u0069d\"" },
	{ "\"id\"", "\"method\"" },
	{ "\"id\"", "\"error\"" },
	{ "\"result\"", "\"resulx\"" },
	{ "\"result\"", "\"r\\u0065sult\"" },
	{ "\"result\"", "\"error\"" },
	{ "\"result\"", "\"method\"" },
	{ "\"error\"", "\"errox\"" },
	{ "\"error\"", "\"\\u0065rror\"" },
	{ "\"error\"", "\"result\"" },
	{ "\"error\"", "\"id\"" },
	{ "\"params\"", "\"method\"" },
	{ "\"params\"", "\"id\"" },
	{ "\"jsonrpc\"", "\"method\"" },
};

/* Members added at the front or the back of an object: duplicate keys. */
static const char *added_members[] = {
	"\"method\":5", "\"method\":\"dup\"", "\"method\":null",
	"\"id\":null", "\"id\":\"x\"", "\"result\":1", "\"error\":{}",
	"\"m\\u0065thod\":\"esc\"", "\"method\":\"a\\u0000b\"",
};

/* Run every mutation of one corpus line through diff_check. */
static void
diff_mutate(const char *line, size_t len, struct diff_stats *st)
{
	struct piece	 front[4] = { { "{", 1 }, { NULL, 0 }, { ",", 1 },
			    { NULL, 0 } };
	struct piece	 back[4] = { { NULL, 0 }, { ",", 1 }, { NULL, 0 },
			    { "}", 1 } };
	const char	*p;
	size_t		 i, j, k, pos, fl, tl;
	uint32_t	 seed = (uint32_t)len * 2654435761u;
	char		 b;

	/* Truncations at eighths, and one and two bytes short. */
	for (i = 1; i < 8; i++)
		diff_check(line, len * i / 8, st);
	diff_check(line, len - 1, st);
	if (len > 2)
		diff_check(line, len - 2, st);

	/* Replace, insert before, and delete bytes at spread positions. */
	for (i = 0; i < MUTATION_SPOTS && len > 0; i++) {
		seed = seed * 1103515245u + 12345u;
		pos = (i < 2) ? (i == 0 ? 0 : len - 1) : (seed >> 8) % len;
		for (j = 0; j < MUTATION_NBYTES; j++) {
			b = mutation_bytes[j];
			diff_check3(line, pos, &b, 1, line + pos + 1,
			    len - pos - 1, st);
			diff_check3(line, pos, &b, 1, line + pos, len - pos,
			    st);
		}
		diff_check3(line, pos, "", 0, line + pos + 1, len - pos - 1,
		    st);
	}

	/* Rename each occurrence of our members, up to four of each. */
	for (i = 0; i < sizeof renames / sizeof renames[0]; i++) {
		fl = strlen(renames[i].from);
		tl = strlen(renames[i].to);
		p = line;
		for (k = 0; k < 4; k++) {
			p = memmem(p, len - (size_t)(p - line), renames[i].from,
			    fl);
			if (p == NULL)
				break;
			diff_check3(line, (size_t)(p - line), renames[i].to,
			    tl, p + fl, len - (size_t)(p - line) - fl, st);
			p += fl;
		}
	}

	/* Duplicate members at the front and the back of the object. */
	if (len > 1 && line[0] == '{' && line[len - 1] == '}') {
		for (i = 0; i < sizeof added_members / sizeof added_members[0];
		    i++) {
			fl = strlen(added_members[i]);
			front[1].p = back[2].p = added_members[i];
			front[1].len = back[2].len = fl;
			front[3].p = line + 1;
			front[3].len = len - 1;
			back[0].p = line;
			back[0].len = len - 1;
			diff_check_pieces(front, 4, st);
			diff_check_pieces(back, 4, st);
		}
	}

	/* Wrapped in a batch, in white space, and twice on one line. */
	diff_check3("[", 1, line, len, "]", 1, st);
	diff_check3("[", 1, line, len, ",{}]", 4, st);
	diff_check3(" \t\r\n", 4, line, len, "\r", 1, st);
	diff_check3(line, len, "", 0, line, len, st);
	diff_check3(line, len, ",", 1, line, len, st);
}

/*
 * The scanner against jansson, over the corpus and its mutations.  The
 * counts make sure the comparison really ran: enough inputs accepted (of
 * each kind) and rejected.
 */
Test(scan, differential_jansson, .timeout = UNIT_TIMEOUT)
{
	struct diff_stats	 st;
	FILE			*f;
	char			*line = NULL;
	size_t			 cap = 0, lines = 0, len, rejected;
	size_t			 before, invalid;
	ssize_t			 n;
	int			 k;

	memset(&st, 0, sizeof st);
	f = fopen(CORPUS, "r");
	cr_assert_not_null(f, "cannot open %s", CORPUS);
	while ((n = getline(&line, &cap, f)) != -1) {
		len = (size_t)n;
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (len == 0)
			continue;
		lines++;
		/* The corpus itself must be valid JSON-RPC. */
		before = st.accepted;
		invalid = st.kinds[KIND_INVALID];
		diff_check(line, len, &st);
		cr_assert_eq(st.accepted, before + 1,
		    "corpus line %zu is not JSON", lines);
		cr_assert_eq(st.kinds[KIND_INVALID], invalid,
		    "corpus line %zu is no JSON-RPC", lines);
		diff_mutate(line, len, &st);
	}
	free(line);
	fclose(f);

	rejected = st.inputs - st.accepted;
	cr_log_info("%zu corpus lines, %zu inputs, %zu accepted by jansson, "
	    "%zu rejected", lines, st.inputs, st.accepted, rejected);
	for (k = 0; k < KIND_MAX; k++)
		cr_log_info("accepted %s: %zu", kind_name(k), st.kinds[k]);
	cr_assert_geq(lines, CORPUS_MIN_LINES);
	cr_assert_geq(st.accepted, DIFF_MIN_ACCEPTED, "only %zu accepted",
	    st.accepted);
	cr_assert_geq(rejected, DIFF_MIN_REJECTED, "only %zu rejected",
	    rejected);
	for (k = 0; k < KIND_MAX; k++)
		cr_assert_geq(st.kinds[k], DIFF_MIN_PER_KIND,
		    "only %zu accepted inputs of kind %s", st.kinds[k],
		    kind_name(k));
}

/* A zero-length message may come as NULL (an empty blob): invalid, safely. */
Test(scan, empty_message_from_null, .timeout = UNIT_TIMEOUT)
{
	struct scan	sc;

	scan_message(NULL, 0, &sc);
	cr_assert_eq(sc.kind, KIND_INVALID);
	cr_assert_null(scan_method_dup(NULL, &sc));
	cr_assert_null(scan_id_dup(NULL, &sc));
}

/* What scan_elements_cb collects: each element's text, joined by '|'. */
struct elements {
	char	buf[256];
	size_t	len;
};

static int
scan_elements_cb(const char *p, size_t len, void *arg)
{
	struct elements	*e = arg;

	if (e->len + len + 1 >= sizeof e->buf)
		return -1;
	memcpy(e->buf + e->len, p, len);
	e->len += len;
	e->buf[e->len++] = '|';
	e->buf[e->len] = '\0';
	return 0;
}

/* The elements of a batch, each as written; anything else is refused. */
Test(scan, elements, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*in;
		int		 rc;
		const char	*out;
	} cases[] = {
		{ " [ {\"id\":1} , \"x,]\" ,[1,[2]], null ] ", 0,
		  "{\"id\":1}|\"x,]\"|[1,[2]]|null|" },
		{ "[]", 0, "" },
		{ " [ ] ", 0, "" },
		{ "[1,]", -1, NULL },
		{ "[1 2]", -1, NULL },
		{ "[1", -1, NULL },
		{ "{\"a\":1}", -1, NULL },
		{ "[1] x", -1, NULL },
		{ "", -1, NULL },
	};
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct elements	e = { "", 0 };
		int		rc;

		rc = scan_elements(cases[i].in, strlen(cases[i].in),
		    scan_elements_cb, &e);
		cr_assert_eq(rc, cases[i].rc, "%s: rc %d", cases[i].in, rc);
		if (cases[i].out != NULL)
			cr_assert_str_eq(e.buf, cases[i].out, "%s",
			    cases[i].in);
	}
}
