/*
 * The pure parts of the client transports: the headers a caller may add
 * to every request (xport.c) and the legacy SSE endpoint's URL
 * (xport_sse.c).
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
