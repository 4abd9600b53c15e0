/*
 * HTTP/1.1 framing: heads arriving in pieces, malformed and oversized
 * heads, body framing by RFC 9112 6.3, and bodies (chunked, by length,
 * until close) decoded from input split at every byte boundary without
 * touching a pipelined message behind them.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <event2/buffer.h>

#include "transport.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* What a pipelined next message looks like behind the one under test. */
#define HTTP_TEST_NEXT	"GET /next HTTP/1.1\r\nHost: x\r\n\r\n"

/* A new evbuffer holding the len bytes at s. */
static struct evbuffer *
http_test_buf(const void *s, size_t len)
{
	struct evbuffer	*buf = evbuffer_new();

	cr_assert_not_null(buf);
	cr_assert_eq(evbuffer_add(buf, s, len), 0);
	return buf;
}

/* Whether buf holds exactly the len bytes at s. */
static int
http_test_holds(struct evbuffer *buf, const void *s, size_t len)
{
	if (evbuffer_get_length(buf) != len)
		return 0;
	return (len == 0 || memcmp(evbuffer_pullup(buf, -1), s, len) == 0);
}

/* Parse text (all of it) as one head; return http_head_parse's result. */
static int
http_test_parse(const char *text, int is_request, struct http_head *head,
    char **cause)
{
	struct evbuffer	*buf = http_test_buf(text, strlen(text));
	size_t		 scanned = 0;
	int		 rc;

	*cause = NULL;
	rc = http_head_parse(buf, is_request, &scanned, head, cause);
	evbuffer_free(buf);
	return rc;
}

struct head_case {
	const char	*text;
	int		 is_request;
	const char	*method;	/* requests */
	const char	*target;
	int		 version;
	int		 status;	/* responses */
	const char	*reason;
	size_t		 nheaders;
	const char	*name;		/* a field to look up, or NULL */
	const char	*value;
};

static const struct head_case head_cases[] = {
	{ "GET /mcp HTTP/1.1\r\nHost: example.com\r\n"
	  "Accept: text/event-stream\r\n\r\n", 1, "GET", "/mcp", 11, 0,
	  NULL, 2, "accept", "text/event-stream" },
	{ "POST /mcp?x=1 HTTP/1.0\nHost: a\nContent-Length:  5 \n\n", 1,
	  "POST", "/mcp?x=1", 10, 0, NULL, 2, "Content-Length", "5" },
	{ "OPTIONS * HTTP/1.1\r\n\r\n", 1, "OPTIONS", "*", 11, 0, NULL, 0,
	  NULL, NULL },
	{ "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 1, "GET", "/", 11, 0,
	  NULL, 1, "HOST", "h" },
	{ "\nDELETE /mcp HTTP/1.1\nMcp-Session-Id: abc\n\n", 1, "DELETE",
	  "/mcp", 11, 0, NULL, 1, "mcp-session-id", "abc" },
	{ "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", 0,
	  NULL, NULL, 11, 200, "OK", 1, "content-type",
	  "text/event-stream" },
	{ "HTTP/1.1 204\r\n\r\n", 0, NULL, NULL, 11, 204, "", 0, NULL,
	  NULL },
	{ "HTTP/1.0 404 \r\nX: \t y z \t\r\n\r\n", 0, NULL, NULL, 10, 404,
	  "", 1, "x", "y z" },
	{ "HTTP/1.1 500 Internal Server Error\nmcp-session-id:abc\r\n"
	  "Empty:\n\n", 0, NULL, NULL, 11, 500, "Internal Server Error", 2,
	  "Empty", "" },
	{ "HTTP/1.1 202 Accepted\r\nA: 1\r\na: 2\r\n\r\n", 0, NULL, NULL,
	  11, 202, "Accepted", 2, "A", "1" },
};

/* Check head against the case it was parsed from. */
static void
head_check(const struct head_case *hc, const struct http_head *head)
{
	const char	*v;

	cr_assert_eq(head->len, strlen(hc->text), "len %zu for \"%s\"",
	    head->len, hc->text);
	cr_assert_eq(head->is_request, hc->is_request);
	cr_assert_eq(head->version, hc->version);
	cr_assert_eq(head->nheaders, hc->nheaders, "\"%s\"", hc->text);
	if (hc->is_request) {
		cr_assert_str_eq(head->method, hc->method);
		cr_assert_str_eq(head->target, hc->target);
	} else {
		cr_assert_eq(head->status, hc->status);
		cr_assert_str_eq(head->reason, hc->reason);
	}
	if (hc->name != NULL) {
		v = http_head_get(head, hc->name);
		cr_assert_not_null(v, "no %s in \"%s\"", hc->name, hc->text);
		cr_assert_str_eq(v, hc->value);
	}
}

/* Each head parses whole, with a pipelined message behind it left alone. */
Test(http_head, whole, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*buf;
	size_t			 i, n, scanned;
	char			*cause = NULL;

	for (i = 0; i < nitems(head_cases); i++) {
		n = strlen(head_cases[i].text);
		buf = http_test_buf(head_cases[i].text, n);
		cr_assert_eq(evbuffer_add(buf, HTTP_TEST_NEXT,
		    strlen(HTTP_TEST_NEXT)), 0);
		scanned = 0;
		cr_assert_eq(http_head_parse(buf, head_cases[i].is_request,
		    &scanned, &head, &cause), 1, "case %zu: %s", i,
		    cause != NULL ? cause : "");
		cr_assert_eq(scanned, 0);
		head_check(&head_cases[i], &head);
		cr_assert_eq(evbuffer_get_length(buf),
		    n + strlen(HTTP_TEST_NEXT), "head was drained");
		http_head_clear(&head);
		cr_assert_null(head.headers);
		cr_assert_eq(head.nheaders, 0);
		evbuffer_free(buf);
	}
}

/* A head added one byte at a time is complete only at its last byte. */
Test(http_head, byte_at_a_time, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*buf;
	size_t			 i, j, n, scanned;
	char			*cause = NULL;
	int			 rc = 0;

	for (i = 0; i < nitems(head_cases); i++) {
		n = strlen(head_cases[i].text);
		buf = evbuffer_new();
		scanned = 0;
		for (j = 0; j < n; j++) {
			cr_assert_eq(evbuffer_add(buf, head_cases[i].text + j,
			    1), 0);
			rc = http_head_parse(buf, head_cases[i].is_request,
			    &scanned, &head, &cause);
			if (rc != 0)
				break;
			cr_assert_leq(scanned, j + 1);
		}
		cr_assert_eq(rc, 1, "case %zu: rc %d after %zu bytes", i, rc,
		    j + 1);
		cr_assert_eq(j, n - 1, "case %zu: complete early", i);
		head_check(&head_cases[i], &head);
		http_head_clear(&head);
		evbuffer_free(buf);
	}
}

/* Split in two at every byte boundary, a head parses the same. */
Test(http_head, every_split, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*buf;
	size_t			 i, k, n, scanned;
	char			*cause = NULL;

	for (i = 0; i < nitems(head_cases); i++) {
		n = strlen(head_cases[i].text);
		for (k = 1; k < n; k++) {
			buf = http_test_buf(head_cases[i].text, k);
			scanned = 0;
			cr_assert_eq(http_head_parse(buf,
			    head_cases[i].is_request, &scanned, &head,
			    &cause), 0, "case %zu split %zu", i, k);
			cr_assert_eq(evbuffer_add(buf, head_cases[i].text + k,
			    n - k), 0);
			cr_assert_eq(evbuffer_add(buf, "HTTP", 4), 0);
			cr_assert_eq(http_head_parse(buf,
			    head_cases[i].is_request, &scanned, &head,
			    &cause), 1, "case %zu split %zu", i, k);
			head_check(&head_cases[i], &head);
			http_head_clear(&head);
			evbuffer_free(buf);
		}
	}
}

struct bad_head {
	const char	*text;
	int		 is_request;
	const char	*want;		/* part of the error message */
};

static const struct bad_head bad_heads[] = {
	{ "GET /x HTTP/2.0\r\n\r\n", 1, "unsupported HTTP version" },
	{ "GET /x HTTP/1.2\r\n\r\n", 1, "unsupported HTTP version" },
	{ "GET /x http/1.1\r\n\r\n", 1, "malformed HTTP version" },
	{ "GET /x HTTP/1.1 \r\n\r\n", 1, "malformed HTTP version" },
	{ "GET  /x HTTP/1.1\r\n\r\n", 1, "malformed HTTP request line" },
	{ "GET /x\r\n\r\n", 1, "malformed HTTP request line" },
	{ "G@T /x HTTP/1.1\r\n\r\n", 1, "malformed HTTP request line" },
	{ "GET /\x01 HTTP/1.1\r\n\r\n", 1, "malformed HTTP request line" },
	{ "\r\n\r\nGET / HTTP/1.1\r\n\r\n", 1,
	  "malformed HTTP request line" },
	{ "GET /x HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 1,
	  "obsolete line folding" },
	{ "GET /x HTTP/1.1\r\n\tHost: a\r\n\r\n", 1,
	  "obsolete line folding" },
	{ "GET /x HTTP/1.1\r\nHost : a\r\n\r\n", 1,
	  "white space before the colon" },
	{ "GET /x HTTP/1.1\nHost\t: a\n\n", 1,
	  "white space before the colon" },
	{ "GET /x HTTP/1.1\r\nHo(st: a\r\n\r\n", 1,
	  "invalid character in the field name" },
	{ "GET /x HTTP/1.1\r\nHo st: a\r\n\r\n", 1,
	  "invalid character in the field name" },
	{ "GET /x HTTP/1.1\r\nHost a\r\n\r\n", 1, "has no colon" },
	{ "GET /x HTTP/1.1\r\n: a\r\n\r\n", 1, "empty field name" },
	{ "GET /x HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 1, "control character" },
	{ "GET /x HTTP/1.1\r\nX: a\rb\r\n\r\n", 1, "control character" },
	{ "HTTP/1.1 20 OK\r\n\r\n", 0, "malformed HTTP status line" },
	{ "HTTP/1.1 200OK\r\n\r\n", 0, "malformed HTTP status line" },
	{ "HTTP/1.1 099 Low\r\n\r\n", 0, "malformed HTTP status line" },
	{ "HTTP/1.1\r\n\r\n", 0, "malformed HTTP status line" },
	{ "HTTP/1.1 200 O\x7fK\r\n\r\n", 0, "malformed HTTP status line" },
	{ "HTTP/2 200 OK\r\n\r\n", 0, "malformed HTTP version" },
	{ "HTTP/3.0 200 OK\r\n\r\n", 0, "unsupported HTTP version" },
	{ "ICY 200 OK\r\n\r\n", 0, "malformed HTTP version" },
};

/* Each malformed head fails with a message saying what is wrong. */
Test(http_head, malformed, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*buf;
	size_t			 i, scanned;
	char			*cause;

	for (i = 0; i < nitems(bad_heads); i++) {
		buf = http_test_buf(bad_heads[i].text,
		    strlen(bad_heads[i].text));
		scanned = 5;
		cause = NULL;
		cr_assert_eq(http_head_parse(buf, bad_heads[i].is_request,
		    &scanned, &head, &cause), -1, "case %zu accepted", i);
		cr_assert_not_null(cause);
		cr_assert_not_null(strstr(cause, bad_heads[i].want),
		    "case %zu: \"%s\" lacks \"%s\"", i, cause,
		    bad_heads[i].want);
		cr_assert_eq(scanned, 0);
		cr_assert_null(head.headers);
		cr_assert_null(head.method);
		cr_assert_null(head.reason);
		free(cause);
		evbuffer_free(buf);
	}
}

/* A head of len bytes in all, padded with one long field value. */
static char *
http_test_big_head(size_t len)
{
	const char	*start = "GET / HTTP/1.1\r\nX: ";
	char		*text = malloc(len + 1);
	size_t		 n = strlen(start);

	cr_assert_not_null(text);
	cr_assert_geq(len, n + 4);
	memcpy(text, start, n);
	memset(text + n, 'a', len - n - 4);
	memcpy(text + len - 4, "\r\n\r\n", 4);
	text[len] = '\0';
	return text;
}

/* A head of HTTP_HEAD_MAX bytes is taken; one byte more is refused. */
Test(http_head, size_limit, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*buf;
	size_t			 scanned = 0, off;
	char			*text, *cause = NULL;
	int			 rc = 0;

	text = http_test_big_head(HTTP_HEAD_MAX);
	cr_assert_eq(http_test_parse(text, 1, &head, &cause), 1);
	cr_assert_eq(head.len, HTTP_HEAD_MAX);
	cr_assert_eq(strlen(http_head_get(&head, "x")), HTTP_HEAD_MAX - 23);
	http_head_clear(&head);
	free(text);

	text = http_test_big_head(HTTP_HEAD_MAX + 1);
	cr_assert_eq(http_test_parse(text, 1, &head, &cause), -1);
	cr_assert_not_null(strstr(cause, "larger than"), "%s", cause);
	free(cause);
	cause = NULL;

	/* Arriving in pieces, it fails once HTTP_HEAD_MAX bytes are in. */
	buf = evbuffer_new();
	for (off = 0; off < strlen(text); off += 1000) {
		cr_assert_eq(evbuffer_add(buf, text + off,
		    strlen(text) - off < 1000 ? strlen(text) - off : 1000), 0);
		rc = http_head_parse(buf, 1, &scanned, &head, &cause);
		if (rc != 0)
			break;
	}
	cr_assert_eq(rc, -1);
	cr_assert_geq(evbuffer_get_length(buf), HTTP_HEAD_MAX);
	cr_assert_lt(evbuffer_get_length(buf), HTTP_HEAD_MAX + 1000);
	free(cause);
	evbuffer_free(buf);
	free(text);
}

/* A head of n fields named F0, F1, ... */
static char *
http_test_fields(size_t n)
{
	struct evbuffer	*buf = evbuffer_new();
	char		*text;
	size_t		 i, len;

	evbuffer_add_printf(buf, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(buf, "F%zu: %zu\r\n", i, i);
	evbuffer_add_printf(buf, "\r\n");
	len = evbuffer_get_length(buf);
	text = malloc(len + 1);
	cr_assert_not_null(text);
	evbuffer_remove(buf, text, len);
	text[len] = '\0';
	evbuffer_free(buf);
	return text;
}

/* HTTP_HEADERS_MAX fields are taken; one more is refused. */
Test(http_head, field_limit, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	char			*text, *cause = NULL;

	text = http_test_fields(HTTP_HEADERS_MAX);
	cr_assert_eq(http_test_parse(text, 0, &head, &cause), 1);
	cr_assert_eq(head.nheaders, HTTP_HEADERS_MAX);
	cr_assert_str_eq(http_head_get(&head, "f255"), "255");
	http_head_clear(&head);
	free(text);

	text = http_test_fields(HTTP_HEADERS_MAX + 1);
	cr_assert_eq(http_test_parse(text, 0, &head, &cause), -1);
	cr_assert_not_null(strstr(cause, "more than"), "%s", cause);
	free(cause);
	free(text);
}

/* http_head_get finds the first field of a name in any case, or NULL. */
Test(http_head, get, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	char			*cause = NULL;

	cr_assert_eq(http_test_parse("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\n"
	    "set-cookie: b=2\r\nX-Empty:\r\n\r\n", 0, &head, &cause), 1);
	cr_assert_str_eq(http_head_get(&head, "SET-COOKIE"), "a=1");
	cr_assert_str_eq(http_head_get(&head, "x-empty"), "");
	cr_assert_null(http_head_get(&head, "Set-Cooki"));
	cr_assert_null(http_head_get(&head, "Content-Length"));
	http_head_clear(&head);
}

struct token_case {
	const char	*fields;	/* header lines, each ending "\r\n" */
	const char	*name;
	const char	*token;
	int		 want;
};

static const struct token_case token_cases[] = {
	{ "Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding",
	  "chunked", 1 },
	{ "Transfer-Encoding: gzip, chunked\r\n", "transfer-encoding",
	  "gzip", 1 },
	{ "Connection: keep-alive, Close\r\n", "Connection", "close", 1 },
	{ "Connection: keep-alive\r\n", "Connection", "close", 0 },
	{ "Connection: closed\r\n", "Connection", "close", 0 },
	{ "Connection: xclose\r\n", "Connection", "close", 0 },
	{ "Connection: a\r\nConnection: b,close\r\n", "Connection", "close",
	  1 },
	{ "Connection: ,, close ,,\r\n", "connection", "CLOSE", 1 },
	{ "Connection: \r\n", "Connection", "close", 0 },
	{ "Upgrade: close\r\n", "Connection", "close", 0 },
	{ "Accept: application/json, text/event-stream\r\n", "Accept",
	  "text/event-stream", 1 },
	{ "Accept: application/json , text/event-stream\r\n", "Accept",
	  "application/json", 1 },
};

/* http_head_has_token looks at each comma-separated element. */
Test(http_head, has_token, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	char			*text, *cause = NULL;
	size_t			 i;

	for (i = 0; i < nitems(token_cases); i++) {
		cr_assert_geq(asprintf(&text, "GET / HTTP/1.1\r\n%s\r\n",
		    token_cases[i].fields), 0);
		cr_assert_eq(http_test_parse(text, 1, &head, &cause), 1,
		    "case %zu: %s", i, cause != NULL ? cause : "");
		cr_assert_eq(http_head_has_token(&head, token_cases[i].name,
		    token_cases[i].token), token_cases[i].want,
		    "case %zu: %s in \"%s\"", i, token_cases[i].token,
		    token_cases[i].fields);
		http_head_clear(&head);
		free(text);
	}
}

struct kind_case {
	const char		*text;
	int			 is_request;
	const char		*method;	/* of the request answered */
	int			 rc;
	enum http_body_kind	 kind;
	uint64_t		 length;
};

static const struct kind_case kind_cases[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", 0, "HEAD", 0,
	  HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "HEAD",
	  0, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", 0, "GET",
	  0, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 304 Not Modified\r\n\r\n", 0, "GET", 0, HTTP_BODY_NONE,
	  0 },
	{ "HTTP/1.1 100 Continue\r\n\r\n", 0, "POST", 0, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 101 Switching Protocols\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 Connection established\r\n\r\n", 0, "CONNECT", 0,
	  HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 407 Auth\r\nContent-Length: 3\r\n\r\n", 0, "CONNECT", 0,
	  HTTP_BODY_LENGTH, 3 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "POST",
	  0, HTTP_BODY_CHUNKED, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", 0,
	  "GET", 0, HTTP_BODY_CHUNKED, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_CHUNKED, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_CLOSE, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 0,
	  "GET", 0, HTTP_BODY_CLOSE, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	  0, "GET", -1, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	  "Content-Length: 5\r\n\r\n", 0, "GET", 0, HTTP_BODY_CHUNKED, 0 },
	{ "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "GET",
	  0, HTTP_BODY_CLOSE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_LENGTH, 42 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\n\r\n", 0, "GET", 0, HTTP_BODY_CLOSE, 0 },
	{ "HTTP/1.1 200 OK\r\n\r\n", 0, NULL, 0, HTTP_BODY_CLOSE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", 0, "GET", -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 1, NULL,
	  0, HTTP_BODY_CHUNKED, 0 },
	{ "POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 1, NULL,
	  -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	  1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	  "Content-Length: 5\r\n\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 1, NULL,
	  -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5\r\n"
	  "Content-Length: 5\r\n\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_LENGTH, 5 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
	  "Content-Length: 5\r\n\r\n", 0, "GET", 0, HTTP_BODY_LENGTH, 5 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5\r\n"
	  "Content-Length: 6\r\n\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5,6\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length:\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: ,\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n"
	  "\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 1, NULL, 0,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 0012\r\n\r\n", 1, NULL, 0,
	  HTTP_BODY_LENGTH, 12 },
	{ "GET /mcp HTTP/1.1\r\n\r\n", 1, NULL, 0, HTTP_BODY_NONE, 0 },
	/*
	 * Lengths that wrap a 64-bit number if it is multiplied before it
	 * is checked (2^64 to 0, 2^64 + 5 to 5), and the limit itself.
	 */
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n"
	  "\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 18446744073709551621\r\n"
	  "\r\n", 1, NULL, -1, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
	  0, "GET", -1, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 36893488147419103237\r\n\r\n",
	  0, "GET", -1, HTTP_BODY_NONE, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387904\r\n\r\n",
	  0, "GET", 0, HTTP_BODY_LENGTH, (uint64_t)1 << 62 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387905\r\n\r\n",
	  0, "GET", -1, HTTP_BODY_NONE, 0 },
	/* A request's is one run of digits: no empty list elements. */
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5,\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: , 5\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: 5 ,\r\n\r\n", 1, NULL, -1,
	  HTTP_BODY_NONE, 0 },
	{ "POST /mcp HTTP/1.1\r\nContent-Length: \t5 \r\n\r\n", 1, NULL, 0,
	  HTTP_BODY_LENGTH, 5 },
	/* A response's may still be a list of equal values. */
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5,\r\n\r\n", 0, "GET", 0,
	  HTTP_BODY_LENGTH, 5 },
};

/* Body framing follows RFC 9112 6.3, requests more strictly. */
Test(http_body, kind, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause;
	size_t			 i;
	int			 rc;

	for (i = 0; i < nitems(kind_cases); i++) {
		cause = NULL;
		cr_assert_eq(http_test_parse(kind_cases[i].text,
		    kind_cases[i].is_request, &head, &cause), 1);
		length = 99;
		rc = http_body_kind(&head, kind_cases[i].method, &kind,
		    &length, &cause);
		cr_assert_eq(rc, kind_cases[i].rc, "case %zu: rc %d (%s)", i,
		    rc, cause != NULL ? cause : "no error");
		if (rc == 0) {
			cr_assert_eq(kind, kind_cases[i].kind,
			    "case %zu: kind %d", i, kind);
			cr_assert_eq(length, kind_cases[i].length,
			    "case %zu: length %llu", i,
			    (unsigned long long)length);
		} else {
			cr_assert_not_null(cause);
			cr_assert_gt(strlen(cause), 10);
			free(cause);
		}
		http_head_clear(&head);
	}
}

struct reframe_case {
	const char	*text;
	const char	*out;		/* NULL: passed on as it came */
};

static const struct reframe_case reframe_cases[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", NULL },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", NULL },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: "
	  "chunked\r\nX: y\r\n\r\n",
	  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\ncontent-length: "
	  "7, 7\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n"
	  "\r\n" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nA: b\r\n"
	  "Content-Length: 5\r\n\r\n",
	  "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nA: b\r\n\r\n" },
	{ "HTTP/1.0 404 \r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
	  "HTTP/1.0 404 \r\nContent-Length: 0\r\n\r\n" },
};

/* A response head with ambiguous framing is passed on made plain. */
Test(http_head, reframe, .timeout = UNIT_TIMEOUT)
{
	struct http_head	 head;
	struct evbuffer		*out;
	char			*cause = NULL, *got;
	size_t			 i, len;

	for (i = 0; i < nitems(reframe_cases); i++) {
		cr_assert_eq(http_test_parse(reframe_cases[i].text, 0, &head,
		    &cause), 1);
		cr_assert_eq(http_head_needs_reframe(&head),
		    reframe_cases[i].out != NULL, "case %zu", i);
		if (reframe_cases[i].out != NULL) {
			out = evbuffer_new();
			http_head_write_reframed(out, &head);
			len = evbuffer_get_length(out);
			got = xmalloc(len + 1);
			evbuffer_remove(out, got, len);
			got[len] = '\0';
			cr_assert_str_eq(got, reframe_cases[i].out,
			    "case %zu", i);
			free(got);
			evbuffer_free(out);
		}
		http_head_clear(&head);
	}
}

struct chunked_case {
	const char	*encoded;
	const char	*decoded;
};

static const struct chunked_case chunked_cases[] = {
	{ "4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n",
	  "Wikipedia in\r\n\r\nchunks." },
	{ "4\nWiki\n5\npedia\n0\n\n", "Wikipedia" },
	{ "4;name=value\r\nWiki\r\n5 ; a=\"b;c\";d\r\npedia\r\n0;last\r\n\r\n",
	  "Wikipedia" },
	{ "0004\r\nWiki\r\nA\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
	  "Wiki0123456789abcdefghij" },
	{ "3\r\nabc\r\n0\r\nExpires: never\r\nX-Trailer:  1 \r\n\r\n",
	  "abc" },
	{ "3\nabc\r\n0\nServer-Timing: x;dur=1\n\n", "abc" },
	{ "0\r\n\r\n", "" },
	{ "1\r\n\n\r\n1\r\n\r\r\n0\r\n\r\n", "\n\r" },
};

/* Decode all of src as a body of the given kind; return the result. */
static int
http_test_decode(struct http_body *body, struct evbuffer *src,
    struct evbuffer *dst, int eof, char **cause)
{
	*cause = NULL;
	return http_body_decode(body, src, dst, eof, cause);
}

/* Chunked bodies split at every byte boundary decode the same. */
Test(http_body, chunked_every_split, .timeout = UNIT_TIMEOUT)
{
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	const char		*enc, *dec;
	size_t			 i, k, n, nnext = strlen(HTTP_TEST_NEXT);
	char			*cause;
	int			 rc;

	for (i = 0; i < nitems(chunked_cases); i++) {
		enc = chunked_cases[i].encoded;
		dec = chunked_cases[i].decoded;
		n = strlen(enc);
		for (k = 0; k < n; k++) {
			src = http_test_buf(enc, k);
			dst = evbuffer_new();
			http_body_init(&body, HTTP_BODY_CHUNKED, 0);
			rc = http_test_decode(&body, src, dst, 0, &cause);
			cr_assert_eq(rc, 0, "case %zu split %zu: %d %s", i, k,
			    rc, cause != NULL ? cause : "");
			cr_assert_eq(evbuffer_add(src, enc + k, n - k), 0);
			cr_assert_eq(evbuffer_add(src, HTTP_TEST_NEXT, nnext),
			    0);
			rc = http_test_decode(&body, src, dst, 0, &cause);
			cr_assert_eq(rc, 1, "case %zu split %zu: %d %s", i, k,
			    rc, cause != NULL ? cause : "");
			cr_assert(http_test_holds(dst, dec, strlen(dec)),
			    "case %zu split %zu: wrong data", i, k);
			cr_assert(http_test_holds(src, HTTP_TEST_NEXT, nnext),
			    "case %zu split %zu: next message touched", i, k);
			cr_assert_eq(body.total, strlen(dec));
			/* Complete stays complete and takes nothing more. */
			cr_assert_eq(http_test_decode(&body, src, dst, 1,
			    &cause), 1);
			cr_assert_eq(evbuffer_get_length(src), nnext);
			evbuffer_free(src);
			evbuffer_free(dst);
		}
	}
}

/* Chunked bodies added a byte at a time complete at their last byte. */
Test(http_body, chunked_byte_at_a_time, .timeout = UNIT_TIMEOUT)
{
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	const char		*enc, *dec;
	size_t			 i, k, n;
	char			*cause;
	int			 rc = 0;

	for (i = 0; i < nitems(chunked_cases); i++) {
		enc = chunked_cases[i].encoded;
		dec = chunked_cases[i].decoded;
		n = strlen(enc);
		src = evbuffer_new();
		dst = evbuffer_new();
		http_body_init(&body, HTTP_BODY_CHUNKED, 0);
		for (k = 0; k < n; k++) {
			cr_assert_eq(evbuffer_add(src, enc + k, 1), 0);
			rc = http_test_decode(&body, src, dst, 0, &cause);
			if (rc != 0)
				break;
		}
		cr_assert_eq(rc, 1, "case %zu: %d after %zu bytes", i, rc,
		    k + 1);
		cr_assert_eq(k, n - 1, "case %zu: complete early", i);
		cr_assert(http_test_holds(dst, dec, strlen(dec)));
		cr_assert_eq(evbuffer_get_length(src), 0);
		evbuffer_free(src);
		evbuffer_free(dst);
	}
}

struct bad_body {
	const char	*encoded;
	int		 eof;
	const char	*want;		/* part of the error message */
};

static const struct bad_body bad_bodies[] = {
	{ "z\r\n", 0, "malformed HTTP chunk-size line" },
	{ "\r\n", 0, "malformed HTTP chunk-size line" },
	{ " 5\r\nhello\r\n", 0, "malformed HTTP chunk-size line" },
	{ "5x\r\nhello\r\n", 0, "malformed HTTP chunk-size line" },
	{ "5\r5\r\nhello\r\n", 0, "malformed HTTP chunk-size line" },
	{ "-5\r\nhello\r\n", 0, "malformed HTTP chunk-size line" },
	{ "0x5\r\nhello\r\n", 0, "malformed HTTP chunk-size line" },
	{ "4000000000000001\r\n", 0, "larger than 2^62" },
	{ "10000000000000000\r\n", 0, "larger than 2^62" },
	{ "ffffffffffffffffffffffff\r\n", 0, "larger than 2^62" },
	{ "3\r\nabcX\r\n0\r\n\r\n", 0, "not followed by a line ending" },
	{ "3\r\nabc\rX0\r\n\r\n", 0, "not followed by a line ending" },
	{ "0\r\nbad trailer\r\n\r\n", 0, "has no colon" },
	{ "0\r\n folded: x\r\n\r\n", 0, "obsolete line folding" },
	{ "", 1, "truncated" },
	{ "5", 1, "truncated" },
	{ "5\r", 1, "truncated" },
	{ "5\r\nab", 1, "truncated" },
	{ "5\r\nabcde", 1, "truncated" },
	{ "5\r\nabcde\r", 1, "truncated" },
	{ "5\r\nabcde\r\n", 1, "truncated" },
	{ "5\r\nabcde\r\n0\r\n", 1, "truncated" },
	{ "5\r\nabcde\r\n0\r\nX: y\r\n", 1, "truncated" },
};

/* Malformed or truncated chunked bodies fail with a reason. */
Test(http_body, chunked_malformed, .timeout = UNIT_TIMEOUT)
{
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	size_t			 i;
	char			*cause;

	for (i = 0; i < nitems(bad_bodies); i++) {
		src = http_test_buf(bad_bodies[i].encoded,
		    strlen(bad_bodies[i].encoded));
		dst = evbuffer_new();
		http_body_init(&body, HTTP_BODY_CHUNKED, 0);
		cr_assert_eq(http_test_decode(&body, src, dst,
		    bad_bodies[i].eof, &cause), -1, "case %zu accepted", i);
		cr_assert_not_null(cause);
		cr_assert_not_null(strstr(cause, bad_bodies[i].want),
		    "case %zu: \"%s\" lacks \"%s\"", i, cause,
		    bad_bodies[i].want);
		free(cause);
		evbuffer_free(src);
		evbuffer_free(dst);
	}
}

/* Long chunk-size lines and trailer sections are refused, huge sizes not. */
Test(http_body, chunked_limits, .timeout = UNIT_TIMEOUT)
{
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	char			*cause, *big;
	size_t			 i;

	/* 2^62 itself is a (hopeful) size: wait for its data. */
	src = http_test_buf("4000000000000000\r\nab", 20);
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 0);
	cr_assert_eq(body.total, 2);
	evbuffer_free(src);
	evbuffer_free(dst);

	/* A chunk-size line of extensions that never ends. */
	src = http_test_buf("1;", 2);
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	big = malloc(1024);
	cr_assert_not_null(big);
	memset(big, 'a', 1024);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(evbuffer_add(src, big, 1024), 0);
		if (http_test_decode(&body, src, dst, 0, &cause) != 0)
			break;
	}
	cr_assert_lt(i, 8);
	cr_assert_not_null(strstr(cause, "chunk-size line longer"), "%s",
	    cause);
	free(cause);
	evbuffer_free(src);
	evbuffer_free(dst);

	/* Trailer fields without end. */
	src = http_test_buf("0\r\n", 3);
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	memcpy(big, "X-Pad: ", 7);
	memcpy(big + 1022, "\r\n", 2);
	for (i = 0; i < 64; i++) {
		cr_assert_eq(evbuffer_add(src, big, 1024), 0);
		if (http_test_decode(&body, src, dst, 0, &cause) != 0)
			break;
	}
	cr_assert_lt(i, 64);
	cr_assert_not_null(strstr(cause, "trailer section larger"), "%s",
	    cause);
	free(cause);
	free(big);
	evbuffer_free(src);
	evbuffer_free(dst);
}

/* A Content-Length body split anywhere ends at its length. */
Test(http_body, length, .timeout = UNIT_TIMEOUT)
{
	const char		*text = "{\"jsonrpc\":\"2.0\",\"id\":1}";
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	size_t			 k, n = strlen(text);
	size_t			 nnext = strlen(HTTP_TEST_NEXT);
	char			*cause;

	for (k = 0; k < n; k++) {
		src = http_test_buf(text, k);
		dst = evbuffer_new();
		http_body_init(&body, HTTP_BODY_LENGTH, n);
		cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 0);
		cr_assert_eq(body.total, k);
		cr_assert_eq(body.remaining, n - k);
		cr_assert_eq(evbuffer_add(src, text + k, n - k), 0);
		cr_assert_eq(evbuffer_add(src, HTTP_TEST_NEXT, nnext), 0);
		cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 1);
		cr_assert(http_test_holds(dst, text, n));
		cr_assert(http_test_holds(src, HTTP_TEST_NEXT, nnext));
		cr_assert_eq(body.total, n);
		evbuffer_free(src);
		evbuffer_free(dst);
	}

	/* Cut short by the end of input. */
	src = http_test_buf(text, 5);
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_LENGTH, n);
	cr_assert_eq(http_test_decode(&body, src, dst, 1, &cause), -1);
	cr_assert_not_null(strstr(cause, "truncated"), "%s", cause);
	cr_assert_not_null(strstr(cause, "after 5 bytes"), "%s", cause);
	free(cause);
	evbuffer_free(src);
	evbuffer_free(dst);
}

/* A body read until close ends only at the end of input; none at once. */
Test(http_body, close_and_none, .timeout = UNIT_TIMEOUT)
{
	struct http_body	 body;
	struct evbuffer		*src, *dst;
	char			*cause;

	src = http_test_buf("first part, ", 12);
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_CLOSE, 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 0);
	cr_assert_eq(evbuffer_get_length(src), 0);
	cr_assert_eq(evbuffer_add(src, "second", 6), 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 1, &cause), 1);
	cr_assert(http_test_holds(dst, "first part, second", 18));
	cr_assert_eq(body.total, 18);

	/* A body with nothing in it takes nothing. */
	cr_assert_eq(evbuffer_add(src, HTTP_TEST_NEXT, 10), 0);
	http_body_init(&body, HTTP_BODY_NONE, 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 1);
	cr_assert_eq(evbuffer_get_length(src), 10);
	http_body_init(&body, HTTP_BODY_LENGTH, 0);
	cr_assert_eq(http_test_decode(&body, src, dst, 0, &cause), 1);
	cr_assert_eq(evbuffer_get_length(src), 10);
	cr_assert_eq(evbuffer_get_length(dst), 18);
	evbuffer_free(src);
	evbuffer_free(dst);
}

/* http_chunk_add writes hex size, data and CRLF; nothing for no data. */
Test(http_chunk, format, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*out = evbuffer_new(), *data = evbuffer_new();
	char		*big;

	cr_assert_eq(evbuffer_add(data, "abc", 3), 0);
	http_chunk_add(out, data);
	cr_assert_eq(evbuffer_get_length(data), 0);
	http_chunk_add(out, data);
	big = malloc(300);
	cr_assert_not_null(big);
	memset(big, 'z', 300);
	cr_assert_eq(evbuffer_add(data, big, 300), 0);
	http_chunk_add(out, data);
	http_chunk_end(out);
	cr_assert_eq(evbuffer_get_length(out), 8 + 5 + 300 + 2 + 5);
	cr_assert_eq(memcmp(evbuffer_pullup(out, 13), "3\r\nabc\r\n12c\r\n",
	    13), 0);
	evbuffer_drain(out, 13 + 300);
	cr_assert(http_test_holds(out, "\r\n0\r\n\r\n", 7));
	free(big);
	evbuffer_free(out);
	evbuffer_free(data);
}

/* What http_chunk_add and http_chunk_end write decodes back unchanged. */
Test(http_chunk, round_trip, .timeout = UNIT_TIMEOUT)
{
	static const size_t	 sizes[] = { 1, 15, 16, 0, 255, 4096, 70000,
				     1, 1 << 20 };
	struct http_body	 body;
	struct evbuffer		*out, *data, *dst, *want;
	unsigned char		*piece;
	size_t			 i, j;
	char			*cause;

	out = evbuffer_new();
	data = evbuffer_new();
	dst = evbuffer_new();
	want = evbuffer_new();
	for (i = 0; i < nitems(sizes); i++) {
		piece = malloc(sizes[i] + 1);
		cr_assert_not_null(piece);
		for (j = 0; j < sizes[i]; j++)
			piece[j] = (unsigned char)(i * 31 + j * 7);
		cr_assert_eq(evbuffer_add(data, piece, sizes[i]), 0);
		cr_assert_eq(evbuffer_add(want, piece, sizes[i]), 0);
		http_chunk_add(out, data);
		cr_assert_eq(evbuffer_get_length(data), 0);
		free(piece);
	}
	http_chunk_end(out);
	cr_assert_eq(evbuffer_add(out, HTTP_TEST_NEXT,
	    strlen(HTTP_TEST_NEXT)), 0);

	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	cr_assert_eq(http_test_decode(&body, out, dst, 0, &cause), 1);
	cr_assert_eq(evbuffer_get_length(dst), evbuffer_get_length(want));
	cr_assert_eq(body.total, evbuffer_get_length(want));
	cr_assert_eq(memcmp(evbuffer_pullup(dst, -1),
	    evbuffer_pullup(want, -1), evbuffer_get_length(want)), 0);
	cr_assert(http_test_holds(out, HTTP_TEST_NEXT,
	    strlen(HTTP_TEST_NEXT)));
	evbuffer_free(out);
	evbuffer_free(data);
	evbuffer_free(dst);
	evbuffer_free(want);
}

/* A 4 MB chunk arriving in 1 KiB reads is moved out as it comes. */
Test(http_chunk, big_in_pieces, .timeout = UNIT_TIMEOUT)
{
	const size_t		 big = 4u * 1024 * 1024, piece = 1024;
	struct http_body	 body;
	struct evbuffer		*enc, *src, *dst, *data;
	unsigned char		*bytes, *in;
	size_t			 i, off, n, len;
	char			*cause;
	int			 rc = 0;

	bytes = malloc(big);
	cr_assert_not_null(bytes);
	for (i = 0; i < big; i++)
		bytes[i] = (unsigned char)(i * 131 + 7);
	enc = evbuffer_new();
	data = http_test_buf(bytes, big);
	http_chunk_add(enc, data);
	http_chunk_end(enc);
	len = evbuffer_get_length(enc);
	in = evbuffer_pullup(enc, -1);

	src = evbuffer_new();
	dst = evbuffer_new();
	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	for (off = 0; off < len; off += n) {
		n = len - off < piece ? len - off : piece;
		cr_assert_eq(evbuffer_add(src, in + off, n), 0);
		rc = http_test_decode(&body, src, dst, 0, &cause);
		if (rc != 0)
			break;
		cr_assert_leq(evbuffer_get_length(src), piece + 16,
		    "chunk data held back");
	}
	cr_assert_eq(rc, 1);
	cr_assert_eq(off + n, len);
	cr_assert_eq(body.total, big);
	cr_assert(http_test_holds(dst, bytes, big));
	free(bytes);
	evbuffer_free(enc);
	evbuffer_free(data);
	evbuffer_free(src);
	evbuffer_free(dst);
}

/*
 * Trailer fields are kept as sent (one CRLF line each) when the caller
 * asks, and written back after the last chunk unchanged.
 */
Test(http_body, trailers_kept, .timeout = UNIT_TIMEOUT)
{
	static const char	 enc[] = "3\r\nabc\r\n0\r\nExpires: never\r\n"
	    "X-Sum:  1 \nGrpc-Status: 0\r\n\r\nNEXT";
	struct http_body	 body;
	struct evbuffer		*src, *dst, *tr, *out;
	struct http_head	 h;
	char			*cause = NULL, got[256];
	size_t			 i, n;

	src = evbuffer_new();
	dst = evbuffer_new();
	tr = evbuffer_new();
	/* Byte by byte: a trailer line split anywhere is kept whole. */
	http_body_init(&body, HTTP_BODY_CHUNKED, 0);
	body.trailers = tr;
	for (i = 0; i < sizeof enc - 1; i++) {
		evbuffer_add(src, enc + i, 1);
		if (http_body_decode(&body, src, dst, 0, &cause) == 1)
			break;
	}
	cr_assert_null(cause, "%s", cause);
	cr_assert_eq(evbuffer_get_length(dst), 3);
	n = evbuffer_copyout(tr, got, sizeof got - 1);
	got[n] = '\0';
	cr_assert_str_eq(got, "Expires: never\r\nX-Sum:  1 \r\n"
	    "Grpc-Status: 0\r\n");
	cr_assert_eq(http_fields_parse(tr, &h, &cause), 0);
	cr_assert_eq(h.nheaders, 3);
	cr_assert_str_eq(h.headers[1].name, "X-Sum");
	cr_assert_str_eq(h.headers[1].value, "1");
	http_head_clear(&h);

	out = evbuffer_new();
	http_chunk_end_trailers(out, tr, NULL);
	n = evbuffer_copyout(out, got, sizeof got - 1);
	got[n] = '\0';
	cr_assert_str_eq(got, "0\r\nExpires: never\r\nX-Sum:  1 \r\n"
	    "Grpc-Status: 0\r\n\r\n");
	cr_assert_eq(evbuffer_get_length(tr), n - 5, "trailers are copied");
	evbuffer_free(out);
	evbuffer_free(src);
	evbuffer_free(dst);
	evbuffer_free(tr);
}

/*
 * Framing, routing and hop-by-hop fields are never passed on in trailers
 * (RFC 9110 6.5.1), and are named to be noted; the rest go byte for byte.
 */
Test(http_chunk, trailers_forbidden, .timeout = UNIT_TIMEOUT)
{
	static const char	 in[] = "X-A:  1 \r\nContent-Length: 5\r\n"
	    "transfer-encoding: chunked\r\nHost: evil\r\nX-B: 2\r\n"
	    "Connection: close\r\nTE: trailers\r\nTrailer: X-A\r\n"
	    "Keep-Alive: 1\r\nUpgrade: h2c\r\nContent-Type: x/y\r\n";
	struct evbuffer		*tr, *out;
	char			 got[512], *dropped;
	size_t			 n;

	tr = evbuffer_new();
	out = evbuffer_new();
	evbuffer_add(tr, in, sizeof in - 1);
	http_chunk_end_trailers(out, tr, &dropped);
	n = evbuffer_copyout(out, got, sizeof got - 1);
	got[n] = '\0';
	cr_assert_str_eq(got, "0\r\nX-A:  1 \r\nX-B: 2\r\n\r\n");
	cr_assert_not_null(dropped);
	cr_assert_str_eq(dropped, "Content-Length, transfer-encoding, Host, "
	    "Connection, TE, Trailer, Keep-Alive, Upgrade, Content-Type");
	free(dropped);

	/* Nothing dropped: nothing to note. */
	evbuffer_drain(out, evbuffer_get_length(out));
	evbuffer_drain(tr, evbuffer_get_length(tr));
	evbuffer_add(tr, "X-A: 1\r\n", 8);
	http_chunk_end_trailers(out, tr, &dropped);
	cr_assert_null(dropped);
	cr_assert_eq(evbuffer_get_length(out), 3 + 8 + 2);
	evbuffer_free(tr);
	evbuffer_free(out);
}
