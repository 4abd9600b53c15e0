/*
 * Request targets under a path prefix (http_target.c): every form of
 * target a client may send stays under the prefix or is refused, and the
 * --upstream URL's path and query are taken apart (net.c).
 */

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "transport.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

struct target_case {
	const char	*method;
	const char	*target;
	const char	*prefix;
	const char	*upq;		/* the upstream's query, or NULL */
	int		 status;	/* 0: taken */
	const char	*out;		/* what the upstream gets */
};

static const struct target_case target_cases[] = {
	{ "POST", "/mcp", "", NULL, 0, "/mcp" },
	{ "POST", "/mcp", "/base", "k=v", 0, "/base/mcp?k=v" },
	{ "POST", "/mcp?a=1", "/base", "k=v", 0, "/base/mcp?k=v&a=1" },
	{ "POST", "/mcp?", "/base", "k=v", 0, "/base/mcp?k=v" },
	{ "POST", "/mcp?", "/base", NULL, 0, "/base/mcp?" },
	{ "POST", "/", "/base", NULL, 0, "/base/" },
	{ "GET", "http://x/mcp?a=1", "/base", NULL, 0, "/base/mcp?a=1" },
	{ "GET", "HTTP://x/../", "/base", NULL, 400, NULL },
	{ "GET", "HtTpS://x/a/./b", "/base", NULL, 0, "/base/a/b" },
	{ "GET", "http://x", "/base", NULL, 0, "/base/" },
	{ "GET", "http://x?q", "/base", NULL, 0, "/base/?q" },
	{ "GET", "ftp://x/a", "/base", NULL, 400, NULL },
	{ "GET", "http://u:p@x/a", "/base", NULL, 400, NULL },
	{ "GET", "http:///a", "/base", NULL, 400, NULL },
	{ "GET", "http://?a", "/base", NULL, 400, NULL },
	{ "GET", "mcp", "/base", NULL, 400, NULL },
	{ "GET", "../mcp", "/base", NULL, 400, NULL },
	{ "GET", "x:/a", "/base", NULL, 400, NULL },
	{ "CONNECT", "example.com:443", "/base", NULL, 501, NULL },
	{ "CONNECT", "/mcp", "/base", NULL, 501, NULL },
	{ "OPTIONS", "*", "/base", NULL, 0, "/base" },
	{ "OPTIONS", "*", "/base", "k=v", 0, "/base?k=v" },
	{ "OPTIONS", "*", "", NULL, 0, "*" },
	{ "OPTIONS", "http://x", "/base", "k=v", 0, "/base?k=v" },
	{ "OPTIONS", "http://x/", "/base", NULL, 0, "/base/" },
	{ "GET", "*", "/base", NULL, 400, NULL },
	{ "GET", "/..", "/base", NULL, 400, NULL },
	{ "GET", "/../admin", "/base", NULL, 400, NULL },
	{ "GET", "/a/../../admin", "/base", NULL, 400, NULL },
	{ "GET", "/a/../b", "/base", NULL, 0, "/base/b" },
	{ "GET", "/a/..", "/base", NULL, 0, "/base/" },
	{ "GET", "/a/.", "/base", NULL, 0, "/base/a/" },
	{ "GET", "/./a//b/", "/base", NULL, 0, "/base/a//b/" },
	{ "GET", "/%2e%2e/admin", "/base", NULL, 400, NULL },
	{ "GET", "/%2E%2E/admin", "/base", NULL, 400, NULL },
	{ "GET", "/.%2e/admin", "/base", NULL, 400, NULL },
	{ "GET", "/%2e./admin", "/base", NULL, 400, NULL },
	{ "GET", "/a/%2e/b", "/base", NULL, 0, "/base/a/b" },
	{ "GET", "/a/..;x/..;/admin", "/base", NULL, 400, NULL },
	{ "GET", "/a/.../b", "/base", NULL, 0, "/base/a/.../b" },
	{ "GET", "/a/..b/c", "/base", NULL, 0, "/base/a/..b/c" },
	{ "GET", "/a%2f..%2f..%2fadmin", "/base", NULL, 400, NULL },
	{ "GET", "/a%2F..", "/base", NULL, 400, NULL },
	{ "GET", "/a%5c..", "/base", NULL, 400, NULL },
	{ "GET", "/a\\..\\..", "/base", NULL, 400, NULL },
	{ "GET", "/mcp#frag", "/base", NULL, 400, NULL },
	{ "GET", "/mcp?a=../../x", "/base", NULL, 0, "/base/mcp?a=../../x" },
	/* What an upstream that decodes first may read as '.' or '/'. */
	{ "GET", "/..%00/x", "/base", NULL, 400, NULL },
	{ "GET", "/a%00b", "/base", NULL, 400, NULL },
	{ "GET", "/a/..%3b/..%3b/x", "/base", NULL, 400, NULL },
	{ "GET", "/a/..%3B/x", "/base", NULL, 400, NULL },
	{ "GET", "/a/..;x/b", "/base", NULL, 400, NULL },
	{ "GET", "/a/.;x/b", "/base", NULL, 400, NULL },
	{ "GET", "/a/%2e%2e%3bx/b", "/base", NULL, 400, NULL },
	{ "GET", "/%u002e%u002e/x", "/base", NULL, 400, NULL },
	{ "GET", "/a%U002fb", "/base", NULL, 400, NULL },
	{ "GET", "/%c0%ae%c0%ae/x", "/base", NULL, 400, NULL },
	{ "GET", "/%C1%9C", "/base", NULL, 400, NULL },
	{ "GET", "/%e0%80%ae", "/base", NULL, 400, NULL },
	{ "GET", "/%f0%80%80%ae", "/base", NULL, 400, NULL },
	{ "GET", "/%f8%80%80%80%ae", "/base", NULL, 400, NULL },
	{ "GET", "/a;v=1/b", "/base", NULL, 0, "/base/a;v=1/b" },
	{ "GET", "/%e2%82%ac", "/base", NULL, 0, "/base/%e2%82%ac" },
	{ "GET", "/%e0%a4%85", "/base", NULL, 0, "/base/%e0%a4%85" },
	{ "GET", "/%25", "/base", NULL, 0, "/base/%25" },
	/* An absolute-form's host becomes Host: host[:port] only. */
	{ "GET", "http://h,evil/x", "/base", NULL, 400, NULL },
	{ "GET", "http://h;x/x", "/base", NULL, 400, NULL },
	{ "GET", "http://h%2cx/x", "/base", NULL, 400, NULL },
	{ "GET", "http://h:80x/x", "/base", NULL, 400, NULL },
	{ "GET", "http://h:123456/x", "/base", NULL, 400, NULL },
	{ "GET", "http://:80/x", "/base", NULL, 400, NULL },
	{ "GET", "http://[::1/x", "/base", NULL, 400, NULL },
	{ "GET", "http://[]/x", "/base", NULL, 400, NULL },
	{ "GET", "http://[::1]x/x", "/base", NULL, 400, NULL },
	{ "GET", "http://h.example-1:8080/x", "/base", NULL, 0, "/base/x" },
	{ "GET", "http://10.0.0.1/x", "/base", NULL, 0, "/base/x" },
	{ "GET", "http://[::1]:8080/x", "/base", NULL, 0, "/base/x" },
};

/* Every form of request target stays under the prefix, or is refused. */
Test(http_target, forms, .timeout = UNIT_TIMEOUT)
{
	struct http_target	 t;
	char			*cause, *out;
	size_t			 i;
	int			 rc, status;

	for (i = 0; i < nitems(target_cases); i++) {
		cause = NULL;
		status = 0;
		rc = http_target_parse(target_cases[i].method,
		    target_cases[i].target, &t, &status, &cause);
		if (target_cases[i].status != 0) {
			cr_assert_eq(rc, -1, "case %zu (%s) taken", i,
			    target_cases[i].target);
			cr_assert_eq(status, target_cases[i].status,
			    "case %zu: status %d", i, status);
			cr_assert_not_null(cause);
			free(cause);
			continue;
		}
		cr_assert_eq(rc, 0, "case %zu (%s): %s", i,
		    target_cases[i].target, cause != NULL ? cause : "");
		/* An absolute-form's host is kept (for Host), no other's. */
		if (strstr(target_cases[i].target, "://") != NULL)
			cr_assert_not_null(t.authority, "case %zu", i);
		else
			cr_assert_null(t.authority, "case %zu", i);
		out = http_target_join(target_cases[i].prefix,
		    target_cases[i].upq, &t);
		cr_assert_str_eq(out, target_cases[i].out, "case %zu", i);
		free(out);
		http_target_clear(&t);
	}
}

struct url_case {
	const char	*text;
	int		 rc;
	const char	*prefix;
	const char	*query;		/* NULL: none */
};

static const struct url_case url_cases[] = {
	{ "http://h", 0, "", NULL },
	{ "http://h/mcp/", 0, "/mcp", NULL },
	{ "http://h/mcp?k=v", 0, "/mcp", "k=v" },
	{ "http://h?k=v", 0, "", "k=v" },
	{ "https://h:8443/a/./b/../mcp?k=v&x=/../", 0, "/a/mcp",
	  "k=v&x=/../" },
	{ "http://h/mcp#x", -1, NULL, NULL },
	{ "http://h/mcp?k=v#x", -1, NULL, NULL },
	{ "http://h/../mcp", -1, NULL, NULL },
	/* An empty query is none: no "?" or "&" is added for it. */
	{ "http://h/mcp?", 0, "/mcp", NULL },
	{ "http://h?", 0, "", NULL },
	/* The operator's encoded '/' is part of a name, not a separator. */
	{ "http://h/v1/org%2Fname/mcp", 0, "/v1/org%2Fname/mcp", NULL },
	{ "http://h/a%5cb/mcp?k=v", 0, "/a%5cb/mcp", "k=v" },
	/* A port is digits only (no sign or space), up to 65535. */
	{ "http://h:+80/mcp", -1, NULL, NULL },
	{ "http://h: 80/mcp", -1, NULL, NULL },
	{ "http://h:99999999999999999999/mcp", -1, NULL, NULL },
	{ "http://h:8080/mcp", 0, "/mcp", NULL },
};

/* --upstream: the path is the prefix, the query goes with every request. */
Test(http_target, upstream_url, .timeout = UNIT_TIMEOUT)
{
	struct url	 u;
	char		*cause;
	size_t		 i;
	int		 rc;

	for (i = 0; i < nitems(url_cases); i++) {
		cause = NULL;
		rc = net_parse_url(url_cases[i].text, &u, &cause);
		cr_assert_eq(rc, url_cases[i].rc, "case %zu: %s", i,
		    cause != NULL ? cause : "taken");
		if (rc != 0) {
			/* The URL is not repeated: its query may be a key. */
			cr_assert_null(strstr(cause, "k=v"), "case %zu", i);
			free(cause);
			continue;
		}
		cr_assert_str_eq(u.prefix, url_cases[i].prefix, "case %zu", i);
		if (url_cases[i].query == NULL)
			cr_assert_null(u.query, "case %zu", i);
		else
			cr_assert_str_eq(u.query, url_cases[i].query,
			    "case %zu", i);
		net_url_clear(&u);
	}
}

/* Origin header values: which name a page of this machine (net.c). */
Test(http_target, origin_is_loopback, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*origin;
		int		 loopback;
	} cases[] = {
		{ "http://localhost", 1 },
		{ "http://localhost:6274", 1 },
		{ "https://LOCALHOST:443", 1 },
		{ "http://app.localhost:3000", 1 },
		{ "http://127.0.0.1", 1 },
		{ "http://127.9.8.7:80", 1 },
		{ "http://[::1]:8080", 1 },
		{ "http://[::1]", 1 },
		{ "null", 0 },
		{ "", 0 },
		{ "file://", 0 },
		{ "ftp://localhost", 0 },
		{ "http://", 0 },
		{ "http://evil.example", 0 },
		{ "http://127.0.0.1.evil.example", 0 },
		{ "http://localhost.evil.example:80", 0 },
		{ "http://evillocalhost", 0 },
		{ "http://128.0.0.1", 0 },
		{ "http://[::2]:80", 0 },
		{ "http://[::1", 0 },
		{ "http://localhost:80x", 0 },
		{ "http://localhost/path", 0 },
		{ "http://localhost:", 1 },
		{ "http://user@localhost", 0 },
		{ "http://0x7f.0.0.1", 0 },
		{ "http://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.localhost", 0 },
	};
	size_t	i;

	for (i = 0; i < nitems(cases); i++)
		cr_expect_eq(net_origin_is_loopback(cases[i].origin),
		    cases[i].loopback, "%s: %d", cases[i].origin,
		    cases[i].loopback);
}

/* Addresses a connection may come in on: which are loopback (net.c). */
Test(http_target, addr_is_loopback, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		int		 family;
		const char	*addr;
		int		 loopback;
	} cases[] = {
		{ AF_INET, "127.0.0.1", 1 },
		{ AF_INET, "127.200.1.2", 1 },
		{ AF_INET, "128.0.0.1", 0 },
		{ AF_INET, "10.0.0.1", 0 },
		{ AF_INET6, "::1", 1 },
		{ AF_INET6, "::ffff:127.0.0.1", 1 },
		{ AF_INET6, "::ffff:127.3.2.1", 1 },
		{ AF_INET6, "::ffff:10.0.0.1", 0 },
		{ AF_INET6, "::2", 0 },
		{ AF_INET6, "fe80::1", 0 },
	};
	struct sockaddr_storage	ss;
	size_t			i;

	for (i = 0; i < nitems(cases); i++) {
		memset(&ss, 0, sizeof ss);
		ss.ss_family = cases[i].family;
		cr_assert_eq(inet_pton(cases[i].family, cases[i].addr,
		    cases[i].family == AF_INET ?
		    (void *)&((struct sockaddr_in *)&ss)->sin_addr :
		    (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
		cr_expect_eq(net_addr_is_loopback(&ss), cases[i].loopback,
		    "%s", cases[i].addr);
	}
}
