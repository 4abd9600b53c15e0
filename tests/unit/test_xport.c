/*
 * The pure parts of the client transports: the headers a caller may add
 * to every request (xport.c) and the legacy SSE endpoint's URL
 * (xport_sse_endpoint.c).
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <event2/event.h>

#include "transport.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

struct header_case {
	const char	*in;
	const char	*out;		/* NULL: refused */
	const char	*cause;		/* refused: a part of the reason */
};

static const struct header_case header_cases[] = {
	{ "Authorization: Bearer abc", "Authorization: Bearer abc", NULL },
	{ "X-Key:abc", "X-Key: abc", NULL },
	{ "X-Key: \t abc \t ", "X-Key: abc", NULL },
	{ "X-Key:", "X-Key: ", NULL },
	{ "X-Key: a: b", "X-Key: a: b", NULL },
	{ "X-Key: a\tb", "X-Key: a\tb", NULL },
	{ "X-Key: \xc3\xa9t\xc3\xa9", "X-Key: \xc3\xa9t\xc3\xa9", NULL },
	{ "x!#$%&'*+-.^_`|~9: v", "x!#$%&'*+-.^_`|~9: v", NULL },
	{ "Authorization Bearer abc", NULL, "colon" },
	{ ": v", NULL, "empty" },
	{ "X Key: v", NULL, "bad header name" },
	{ "X-Key : v", NULL, "bad header name" },
	{ "X(Key): v", NULL, "bad header name" },
	{ "X-Key: a\r\nHost: evil", NULL, "line break" },
	{ "X-Key: a\nb", NULL, "line break" },
	{ "X-Key: a\rb", NULL, "line break" },
	{ "X-Key: a\x01" "b", NULL, "control" },
	{ "X-Key: a\x7f" "b", NULL, "control" },
	{ "Host: evil", NULL, "sets it itself" },
	{ "content-length: 5", NULL, "sets it itself" },
	{ "Transfer-Encoding: chunked", NULL, "sets it itself" },
	{ "CONNECTION: keep-alive", NULL, "sets it itself" },
	{ "Mcp-Session-Id: s", NULL, "sets it itself" },
	{ "mcp-protocol-version: 2025-06-18", NULL, "sets it itself" },
	{ "Content-Type: text/plain", NULL, "sets it itself" },
	{ "Accept: */*", NULL, "sets it itself" },
	{ "Upgrade: h2c", NULL, "sets it itself" },
	{ "TE: trailers", NULL, "sets it itself" },
	{ "Last-Event-ID: 3", NULL, "sets it itself" },
	{ "Hostx: fine", "Hostx: fine", NULL },
};

/* Each header line is taken as sent, or refused with a reason. */
Test(xport, header_parse, .timeout = UNIT_TIMEOUT)
{
	char	*out, *cause;
	size_t	 i;

	for (i = 0; i < nitems(header_cases); i++) {
		cause = NULL;
		out = xport_header_parse(header_cases[i].in, &cause);
		if (header_cases[i].out == NULL) {
			cr_expect_null(out, "case %zu taken: %s", i, out);
			cr_assert_not_null(cause, "case %zu: no cause", i);
			cr_expect_not_null(strstr(cause, header_cases[i].cause),
			    "case %zu: cause '%s'", i, cause);
		} else {
			cr_assert_not_null(out, "case %zu refused: %s", i,
			    cause);
			cr_expect_str_eq(out, header_cases[i].out,
			    "case %zu", i);
		}
		free(out);
		free(cause);
	}
}

/* A refused value is never repeated in the reason (it may be a key). */
Test(xport, header_cause_hides_value, .timeout = UNIT_TIMEOUT)
{
	char	*cause = NULL;

	cr_assert_null(xport_header_parse("Authorization: sec\nret",
	    &cause));
	cr_expect_null(strstr(cause, "sec"), "cause: %s", cause);
	free(cause);
}

static void
noop_message(const char *b, size_t l, void *a)
{
}

static void
noop_event(const char *t, const char *b, size_t l, void *a)
{
}

static void
noop_closed(const char *why, void *a)
{
}

/* Headers are set all or nothing, replace the last set, and are bounded. */
Test(xport, set_headers, .timeout = UNIT_TIMEOUT)
{
	struct event_base	*base = event_base_new();
	struct xport_cbs	 cbs = { noop_message, noop_event, noop_closed,
				    NULL };
	struct xport		*x;
	const char		*good[] = { "A: 1", "B:2" };
	const char		*bad[] = { "C: 3", "Host: x" };
	const char		*many[XPORT_HEADERS_MAX + 1];
	char			*cause = NULL, *big;
	size_t			 i;

	x = xport_http(base, "http://127.0.0.1:9/mcp", NULL, 0, 0, &cbs,
	    NULL, &cause);
	cr_assert_not_null(x, "%s", cause);
	cr_assert_eq(xport_set_headers(x, good, 2, &cause), 0, "%s", cause);
	cr_assert_not_null(x->headers);
	cr_expect_str_eq(x->headers[0], "A: 1");
	cr_expect_str_eq(x->headers[1], "B: 2");
	cr_expect_null(x->headers[2]);

	cr_expect_eq(xport_set_headers(x, bad, 2, &cause), -1);
	cr_expect_not_null(strstr(cause, "Host"));
	free(cause);
	cause = NULL;
	cr_expect_str_eq(x->headers[0], "A: 1", "a refused set changes "
	    "nothing");

	for (i = 0; i < nitems(many); i++)
		many[i] = "X: y";
	cr_expect_eq(xport_set_headers(x, many, nitems(many), &cause), -1);
	free(cause);
	cause = NULL;
	cr_expect_eq(xport_set_headers(x, many, XPORT_HEADERS_MAX, &cause),
	    0, "%s", cause);

	big = malloc(XPORT_HEADERS_BYTES);
	memset(big, 'v', XPORT_HEADERS_BYTES - 1);
	memcpy(big, "X: ", 3);
	big[XPORT_HEADERS_BYTES - 1] = '\0';
	many[0] = big;
	cr_expect_eq(xport_set_headers(x, many, 2, &cause), -1);
	cr_expect_not_null(strstr(cause, "too long"));
	free(cause);
	cause = NULL;
	free(big);

	cr_expect_eq(xport_set_headers(x, NULL, 0, &cause), 0);
	cr_expect_null(x->headers);
	xport_free(x);
	event_base_free(base);
}

struct endpoint_case {
	const char	*base;
	const char	*ref;
	const char	*out;		/* NULL: refused */
	const char	*cause;		/* refused: a part of the reason */
};

static const struct endpoint_case endpoint_cases[] = {
	/* What servers send: a path and a session id. */
	{ "http://h:3001/sse", "/message?sessionId=abc",
	    "/message?sessionId=abc", NULL },
	{ "http://h:3001/sse", "/messages/?session_id=9f",
	    "/messages/?session_id=9f", NULL },
	{ "http://h:3001/sse", "http://h:3001/message?sessionId=abc",
	    "/message?sessionId=abc", NULL },
	{ "http://h:3001/sse", "HTTP://H:3001/m", "/m", NULL },
	{ "http://h/sse", "http://h:80/m", "/m", NULL },
	{ "https://h/sse", "https://h:443/m", "/m", NULL },
	{ "http://h:3001/sse", "//h:3001/m?x", "/m?x", NULL },
	/* Relative references, RFC 3986 5.2. */
	{ "http://h/a/sse", "message?s=1", "/a/message?s=1", NULL },
	{ "http://h/a/sse/", "message", "/a/sse/message", NULL },
	{ "http://h/sse", "message", "/message", NULL },
	{ "http://h", "message", "/message", NULL },
	{ "http://h/a/b/sse", "../m", "/a/m", NULL },
	{ "http://h/a/b/sse", "./m/./n/../o", "/a/b/m/o", NULL },
	{ "http://h/sse", "../../m", "/m", NULL },
	{ "http://h/sse", "/../x/./m?s=1", "/x/m?s=1", NULL },
	{ "http://h/a/sse?k=v", "?s=1", "/a/sse?s=1", NULL },
	{ "http://h/a/sse?k=v", "", "/a/sse?k=v", NULL },
	{ "http://h/a/sse?k=v", "#f", "/a/sse?k=v", NULL },
	{ "http://h/a/sse", "/m#frag", "/m", NULL },
	{ "http://h/a/sse", "/m?q=a/../b", "/m?q=a/../b", NULL },
	{ "http://h/a/sse", "/m/.", "/m/", NULL },
	{ "http://h/a/sse", "/m/..", "/", NULL },
	{ "http://h/a/sse", "http://h", "/", NULL },
	{ "http://h/a/sse", "http://h?s=1", "/?s=1", NULL },
	/* Another origin, another scheme, what a request line can't carry. */
	{ "http://h:3001/sse", "http://evil:3001/m", NULL, "another origin" },
	{ "http://h:3001/sse", "http://h:3002/m", NULL, "another origin" },
	{ "http://h:3001/sse", "https://h:3001/m", NULL, "another origin" },
	{ "http://h/sse", "//evil/m", NULL, "another origin" },
	{ "http://h/sse", "http://h.evil/m", NULL, "another origin" },
	{ "http://h/sse", "http://u@h/m", NULL, "origin is not one" },
	{ "http://h/sse", "javascript:alert(1)", NULL, "scheme" },
	{ "http://h/sse", "ftp://h/m", NULL, "scheme" },
	{ "http://h/sse", "http:/m", NULL, "no //host" },
	{ "http://h/sse", "/m?s=a b", NULL, "0x20" },
	{ "http://h/sse", "/m\r\nHost: evil", NULL, "0x0d" },
	{ "http://h/sse", "/m\n", NULL, "0x0a" },
	{ "http://h/sse", "/m\x7f", NULL, "0x7f" },
	{ "http://h/sse", "/\xc3\xa9", NULL, "0xc3" },
	/* The stream's URL is held to it too (its GET is built from it). */
	{ "http://h/a b", "", NULL, "0x20" },
	{ "http://h/a\r\nX: y", "?s=1", NULL, "0x0d" },
	{ "http://h/sse?a b", "", NULL, "0x20" },
};

/* An endpoint event's URL resolves to a target on the same origin. */
Test(xport, sse_endpoint, .timeout = UNIT_TIMEOUT)
{
	char	*out, *cause;
	size_t	 i;
	int	 rc;

	for (i = 0; i < nitems(endpoint_cases); i++) {
		cause = NULL;
		out = NULL;
		rc = xport_sse_endpoint(endpoint_cases[i].base,
		    endpoint_cases[i].ref, &out, &cause);
		if (endpoint_cases[i].out == NULL) {
			cr_expect_eq(rc, -1, "case %zu taken: %s", i, out);
			cr_assert_not_null(cause, "case %zu: no cause", i);
			cr_expect_not_null(strstr(cause,
			    endpoint_cases[i].cause), "case %zu: cause '%s'",
			    i, cause);
		} else {
			cr_assert_eq(rc, 0, "case %zu refused: %s", i, cause);
			cr_expect_str_eq(out, endpoint_cases[i].out,
			    "case %zu", i);
		}
		free(out);
		free(cause);
	}
}

/* An endpoint URL longer than the bound is refused, not copied. */
Test(xport, sse_endpoint_long, .timeout = UNIT_TIMEOUT)
{
	char	*ref = malloc(20000), *out = NULL, *cause = NULL;

	memset(ref, 'a', 19999);
	ref[0] = '/';
	ref[19999] = '\0';
	cr_expect_eq(xport_sse_endpoint("http://h/sse", ref, &out, &cause),
	    -1);
	cr_expect_not_null(strstr(cause, "too long"), "%s", cause);
	cr_expect_null(out);
	free(cause);
	free(ref);
}
