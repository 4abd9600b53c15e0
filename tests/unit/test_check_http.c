/* check/: the Streamable HTTP rules, a passing and a failing session per
   rule, per revision where the rule differs. */
#include <string.h>

#include <criterion/criterion.h>

#include "check_util.h"

#define V2 "2025-03-26"
#define V3 "2025-06-18"
#define ACCEPT "[\"Accept\",\"application/json, text/event-stream\"]"
#define JSONCT "[[\"Content-Type\",\"application/json\"]]"
#define SID "[\"Mcp-Session-Id\",\"s-1\"]"
#define PV3 "[\"MCP-Protocol-Version\",\"2025-06-18\"]"

/* Exchanges: id, method, path, request headers, response headers, status. */
#define X(n, req, resp, status) \
	static const struct check_http n = { __LINE__, "POST", "/mcp", req, \
	    resp, status, 0 }

X(x_init, "[" ACCEPT "]", "[[\"Content-Type\",\"application/json\"]," SID "]",
    200);
X(x_init_nosid, "[" ACCEPT "]", JSONCT, 200);
X(x_done, "[" ACCEPT "," SID "," PV3 "]", "[]", 202);
X(x_done_v2, "[" ACCEPT "," SID "]", "[]", 202);
X(x_done_nosid, "[" ACCEPT "," PV3 "]", "[]", 202);
X(x_done_200, "[" ACCEPT "," SID "," PV3 "]", JSONCT, 200);
X(x_list, "[" ACCEPT "," SID "," PV3 "]", JSONCT, 200);
X(x_list_v2, "[" ACCEPT "," SID "]", JSONCT, 200);
X(x_list_nopv, "[" ACCEPT "," SID "]", JSONCT, 200);
X(x_list_badpv, "[" ACCEPT "," SID ",[\"MCP-Protocol-Version\","
    "\"2025-03-26\"]]", JSONCT, 200);
X(x_list_nosid, "[" ACCEPT "," PV3 "]", JSONCT, 200);
X(x_list_othersid, "[" ACCEPT ",[\"Mcp-Session-Id\",\"s-2\"]," PV3 "]",
    JSONCT, 200);
X(x_list_202, "[" ACCEPT "," SID "," PV3 "]", "[]", 202);
X(x_list_html, "[" ACCEPT "," SID "," PV3 "]",
    "[[\"Content-Type\",\"text/html\"]]", 200);
X(x_list_noaccept, "[" SID "," PV3 "]", JSONCT, 200);
X(x_list_404, "[" ACCEPT "," SID "," PV3 "]", JSONCT, 404);
static const struct check_http x_sse_post = { 900, "POST",
    "/message?sessionId=a", "[]", "[]", 202, 1 };
X(x_init_401, "[" ACCEPT "]", "[]", 401);
X(x_init_401b, "[" ACCEPT "]", "[]", 401);
X(x_list_400, "[" ACCEPT "," SID "," PV3 "]", "[]", 400);
X(x_note_401, "[" ACCEPT "," SID "," PV3 "]", "[]", 401);
/* record --check: a POST's body is checked before its status comes. */
X(x_init_live, "[" ACCEPT "]", "[]", 0);
X(x_ping_live, "[" ACCEPT "," SID "," PV3 "]", "[]", 0);
X(x_ping, "[" ACCEPT "," SID "," PV3 "]", JSONCT, 200);
#define SID2 "[\"Mcp-Session-Id\",\"s-2\"]"
X(x_init2, "[" ACCEPT "]", "[[\"Content-Type\",\"application/json\"]," SID2
    "]", 200);
X(x_done2, "[" ACCEPT "," SID2 "," PV3 "]", "[]", 202);
X(x_list2, "[" ACCEPT "," SID2 "," PV3 "]", JSONCT, 200);
X(x_list_again, "[" ACCEPT "," SID "," PV3 "]", JSONCT, 200);

#define M_ACCEPT "[\"Accept\",\"application/json, text/event-stream\"]"
#define M_PV "[\"MCP-Protocol-Version\",\"2026-07-28\"]"
X(m_ok, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/call\"],"
    "[\"Mcp-Name\",\"echo\"]]", JSONCT, 200);
X(m_b64, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/call\"],"
    "[\"Mcp-Name\",\"=?base64?ZWNobw==?=\"]]", JSONCT, 200);
X(m_nomethod, "[" M_ACCEPT "," M_PV ",[\"Mcp-Name\",\"echo\"]]", JSONCT, 200);
X(m_othermethod, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/list\"],"
    "[\"Mcp-Name\",\"echo\"]]", JSONCT, 200);
X(m_noname, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/call\"]]",
    JSONCT, 200);
X(m_othername, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/call\"],"
    "[\"Mcp-Name\",\"other\"]]", JSONCT, 200);
X(m_nopv, "[" M_ACCEPT ",[\"Mcp-Method\",\"tools/call\"],"
    "[\"Mcp-Name\",\"echo\"]]", JSONCT, 200);

/* Mcp-Param-*: a tool marking "a" and "o.s" with x-mcp-header. */
#define MP_HEADS(extra) "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\"," \
	"\"tools/call\"],[\"Mcp-Name\",\"add\"]" extra "]"
X(p_list, "[" M_ACCEPT "," M_PV ",[\"Mcp-Method\",\"tools/list\"]]", JSONCT,
    200);
X(p_a2, MP_HEADS(",[\"Mcp-Param-A\",\"2\"]"), JSONCT, 200);
X(p_a3, MP_HEADS(",[\"Mcp-Param-A\",\"3\"]"), JSONCT, 200);
X(p_ared, MP_HEADS(",[\"mcp-param-a\",\"[REDACTED]\"]"), JSONCT, 200);
X(p_none, MP_HEADS(""), JSONCT, 200);
X(p_s64, MP_HEADS(",[\"Mcp-Param-A\",\"2\"],[\"Mcp-Param-S\","
    "\"=?base64?eA==?=\"]"), JSONCT, 200);
#define P_TOOLS "{\"resultType\":\"complete\",\"ttlMs\":0,\"cacheScope\":" \
	"\"private\",\"tools\":[{\"name\":" \
	"\"add\",\"inputSchema\":{\"type\":\"object\",\"properties\":{" \
	"\"a\":{\"type\":\"integer\",\"x-mcp-header\":\"A\"},\"o\":{" \
	"\"type\":\"object\",\"properties\":{\"s\":{\"type\":" \
	"\"string\",\"x-mcp-header\":\"S\"}}}}}}]}"
/* A mark longer than a fixed header-name buffer would hold. */
#define P_LONG "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM"
X(p_long, MP_HEADS(",[\"Mcp-Param-" P_LONG "\",\"2\"]"), JSONCT, 200);
#define P_TOOLS_LONG "{\"resultType\":\"complete\",\"ttlMs\":0," \
	"\"cacheScope\":\"private\",\"tools\":[{\"name\":\"add\"," \
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{" \
	"\"type\":\"integer\",\"x-mcp-header\":\"" P_LONG "\"}}}}]}"
#define PCALLT(x, tools, args) \
	{ T_REQ("C", "1", "tools/list", "{" T_META "}"), &p_list }, \
	{ T_RES("S", "1", tools), &p_list }, \
	{ T_REQ("C", "2", "tools/call", "{\"name\":\"add\",\"arguments\":" \
	  args "," T_META "}"), &x }, \
	{ T_RES("S", "2", "{\"resultType\":\"complete\",\"content\":[]}"), \
	  &x }
#define PCALL(x, args) \
	{ T_REQ("C", "1", "tools/list", "{" T_META "}"), &p_list }, \
	{ T_RES("S", "1", P_TOOLS), &p_list }, \
	{ T_REQ("C", "2", "tools/call", "{\"name\":\"add\",\"arguments\":" \
	  args "," T_META "}"), &x }, \
	{ T_RES("S", "2", "{\"resultType\":\"complete\",\"content\":[]}"), \
	  &x }

#define INIT(v) { T_INIT(v, "{}"), &x_init }, \
	{ T_INITR(v, "{\"tools\":{}}"), &x_init }
#define LIST(x) { T_REQ("C", "1", "tools/list", "{}"), &x }, \
	{ T_RES("S", "1", T_TOOLS), &x }
#define MCALL(x) { T_REQ("C", "1", "tools/call", "{\"name\":\"echo\"," \
	"\"arguments\":{}," T_META "}"), &x }, \
	{ T_RES("S", "1", "{\"resultType\":\"complete\",\"content\":[]}"), &x }

static const struct check_case http_cases[] = {
	{ "2025-06-18: every header right", "", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list) } },
	{ "2025-03-26: no MCP-Protocol-Version needed", "", 1, {
	    INIT(V2), { T_INITD, &x_done_v2 }, LIST(x_list_v2) } },
	{ "2025-06-18: MCP-Protocol-Version missing",
	  "http.protocol-version", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_nopv) } },
	{ "2025-06-18: MCP-Protocol-Version not negotiated",
	  "http.protocol-version", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_badpv) } },
	{ "Mcp-Session-Id missing", "http.session-id", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_nosid) } },
	{ "Mcp-Session-Id of another session", "http.session-id", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_othersid) } },
	{ "no session id given, none needed", "", 1, {
	    { T_INIT(V3, "{}"), &x_init_nosid },
	    { T_INITR(V3, "{\"tools\":{}}"), &x_init_nosid },
	    { T_INITD, &x_done_nosid }, LIST(x_list_nosid) } },
	{ "a notification answered 200", "http.status", 1, {
	    INIT(V3), { T_INITD, &x_done_200 }, LIST(x_list) } },
	{ "a request answered 202", "http.status", 1, {
	    INIT(V3), { T_INITD, &x_done },
	    { T_REQ("C", "1", "tools/list", "{}"), &x_list_202 } } },
	{ "HTTP+SSE: a request taken with 202 and never answered",
	  "jsonrpc.unanswered", 1, {
	    { T_INIT(V3, "{}"), &x_sse_post },
	    { T_INITR(V3, "{\"tools\":{}}"), NULL },
	    { T_INITD, &x_sse_post },
	    { T_REQ("C", "1", "tools/list", "{}"), &x_sse_post } } },
	{ "HTTP+SSE: every POST answered 202, no headers needed", "", 1, {
	    { T_INIT(V3, "{}"), &x_sse_post },
	    { T_INITR(V3, "{\"tools\":{}}"), NULL },
	    { T_INITD, &x_sse_post },
	    { T_REQ("C", "1", "tools/list", "{}"), &x_sse_post },
	    { T_RES("S", "1", T_TOOLS), NULL } } },
	{ "a request answered as text/html", "http.content-type", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_html) } },
	{ "a POST without Accept", "http.accept", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list_noaccept) } },
	{ "a session id sent again after 404", "http.expired-session", 0, {
	    INIT(V3), { T_INITD, &x_done },
	    { T_REQ("C", "1", "tools/list", "{}"), &x_list_404 },
	    { T_REQ("C", "2", "tools/list", "{}"), &x_list_again } } },
	{ "initialize refused 401, sent again with 200 (OAuth)", "", 1, {
	    { T_INIT(V3, "{}"), &x_init_401 }, INIT(V3), { T_INITD, &x_done },
	    LIST(x_list) } },
	{ "initialize refused 401 twice, never sent again", "", 1, {
	    { T_INIT(V3, "{}"), &x_init_401 },
	    { T_INIT(V3, "{}"), &x_init_401b } } },
	{ "initialized refused 401, sent again", "", 1, {
	    INIT(V3), { T_INITD, &x_note_401 }, { T_INITD, &x_done },
	    LIST(x_list) } },
	/* Live, its status unknown: sent again, it is taken as the retry
	   of a refused POST, as 'check' does once the status says so. */
	{ "live: initialize, status not yet known, sent again", "", 1, {
	    { T_INIT(V3, "{}"), &x_init_live }, INIT(V3), { T_INITD, &x_done },
	    LIST(x_list) } },
	{ "live: a request, status not yet known, sent again", "", 1, {
	    INIT(V3), { T_INITD, &x_done },
	    { T_REQ("C", "2", "ping", "{}"), &x_ping_live },
	    { T_REQ("C", "2", "ping", "{}"), &x_ping },
	    { T_RES("S", "2", "{}"), &x_ping } } },
	{ "an id reused while its POST was answered 200", "jsonrpc.duplicate-id",
	  0, {
	    INIT(V3), { T_INITD, &x_done },
	    { T_REQ("C", "2", "ping", "{}"), &x_ping },
	    { T_REQ("C", "2", "ping", "{}"), &x_ping } } },
	{ "a request refused 400, never sent again", "", 1, {
	    INIT(V3), { T_INITD, &x_done },
	    { T_REQ("C", "1", "tools/list", "{}"), &x_list_400 } } },
	{ "a new session after 404 with the same ids", "", 1, {
	    INIT(V3), { T_INITD, &x_done }, LIST(x_list),
	    { T_REQ("C", "2", "tools/list", "{}"), &x_list_404 },
	    { T_INIT(V3, "{}"), &x_init2 },
	    { T_INITR(V3, "{\"tools\":{}}"), &x_init2 },
	    { T_INITD, &x_done2 },
	    { T_REQ("C", "2", "tools/list", "{}"), &x_list2 },
	    { T_RES("S", "2", T_TOOLS), &x_list2 } } },
	{ "2026-07-28: Mcp-Method and Mcp-Name right", "", 1, {
	    MCALL(m_ok) } },
	{ "2026-07-28: Mcp-Name in base64", "", 1, { MCALL(m_b64) } },
	{ "2026-07-28: Mcp-Method missing", "http.mcp-method", 1, {
	    MCALL(m_nomethod) } },
	{ "2026-07-28: Mcp-Method not the body's", "http.mcp-method", 1, {
	    MCALL(m_othermethod) } },
	{ "2026-07-28: Mcp-Name missing", "http.mcp-name", 1, {
	    MCALL(m_noname) } },
	{ "2026-07-28: Mcp-Name not the body's", "http.mcp-name", 1, {
	    MCALL(m_othername) } },
	{ "2026-07-28: MCP-Protocol-Version missing", "http.protocol-version",
	  1, { MCALL(m_nopv) } },
	{ "2026-07-28: Mcp-Param-A as the argument", "", 1, {
	    PCALL(p_a2, "{\"a\":2}") } },
	{ "2026-07-28: Mcp-Param-A recorded redacted", "", 1, {
	    PCALL(p_ared, "{\"a\":2}") } },
	{ "2026-07-28: no marked argument, no header", "", 1, {
	    PCALL(p_none, "{\"o\":{}}") } },
	{ "2026-07-28: a nested mark, base64", "", 1, {
	    PCALL(p_s64, "{\"a\":2,\"o\":{\"s\":\"x\"}}") } },
	{ "2026-07-28: a 150-byte mark's header as the argument", "", 1, {
	    PCALLT(p_long, P_TOOLS_LONG, "{\"a\":2}") } },
	{ "2026-07-28: a 150-byte mark's header missing", "http.mcp-param", 1, {
	    PCALLT(p_none, P_TOOLS_LONG, "{\"a\":2}") } },
	{ "2026-07-28: Mcp-Param-A missing", "http.mcp-param", 1, {
	    PCALL(p_none, "{\"a\":2}") } },
	{ "2026-07-28: Mcp-Param-A not the argument", "http.mcp-param", 1, {
	    PCALL(p_a3, "{\"a\":2}") } },
	{ "2026-07-28: Mcp-Param-A without the argument", "http.mcp-param", 1, {
	    PCALL(p_a2, "{}") } },
	{ "2026-07-28: a nested mark's header missing", "http.mcp-param", 1, {
	    PCALL(p_a2, "{\"a\":2,\"o\":{\"s\":\"x\"}}") } },
};

Test(check_http, table)
{
	check_run_table(http_cases, sizeof http_cases / sizeof http_cases[0]);
}

struct gets {
	size_t	get, other;
};

static void
gets_cb(const struct check_finding *cf, void *arg)
{
	struct gets	*g = arg;

	if (strcmp(cf->f->rule, "http.get") == 0)
		g->get++;
	else
		g->other++;
}

/* A GET with no message: SSE or 405 pass, a 200 of something else not. */
Test(check_http, get_without_messages)
{
	static const struct {
		const char	*resp;
		int		 status;
		size_t		 want;
	} rows[] = {
		{ "[[\"Content-Type\",\"text/event-stream\"]]", 200, 0 },
		{ "[]", 405, 0 },
		{ "[]", 400, 0 },
		{ "[[\"Content-Type\",\"text/html\"]]", 200, 1 },
		{ "[]", 200, 1 },
	};
	const char	*hs[] = { T_INIT(V3, "{}") + 2, T_INITR(V3, "{}") + 2 };
	struct check_http h;
	struct check	*chk;
	struct gets	 g;
	size_t		 i;
	int		 k;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		memset(&g, 0, sizeof g);
		chk = check_new(gets_cb, &g);
		for (k = 0; k < 2; k++)
			check_feed(chk, k + 1, k == 0 ? 'C' : 'S', hs[k]);
		memset(&h, 0, sizeof h);
		h.exchange = 77;
		h.method = "GET";
		h.path = "/mcp";
		h.request_headers = "[[\"Accept\",\"text/event-stream\"]]";
		h.response_headers = rows[i].resp;
		h.status = rows[i].status;
		check_exchange(chk, &h);
		check_free(chk);
		cr_expect_eq(g.get, rows[i].want, "row %zu: %zu http.get", i,
		    g.get);
		cr_expect_eq(g.other, 0, "row %zu", i);
	}
}

struct sevs {
	int	sev[PROTO_SEVERITY_MAX];
};

static void
sevs_cb(const struct check_finding *cf, void *arg)
{
	struct sevs	*s = arg;

	if (strcmp(cf->f->rule, "http.protocol-version") == 0)
		s->sev[cf->f->severity]++;
}

/* MCP-Protocol-Version: missing is an error (MUST), another value than
   the negotiated one a warning (SHOULD), 2025-06-18 transports. */
Test(check_http, protocol_version_severity)
{
	static const struct tmsg nopv[] = { INIT(V3), { T_INITD, &x_done },
	    LIST(x_list_nopv) };
	static const struct tmsg badpv[] = { INIT(V3), { T_INITD, &x_done },
	    LIST(x_list_badpv) };
	const struct tmsg	*rows[] = { nopv, badpv };
	const int		 want[] = { PROTO_ERROR, PROTO_WARNING };
	struct check		*chk;
	struct sevs		 s;
	size_t			 i, k;

	for (i = 0; i < 2; i++) {
		memset(&s, 0, sizeof s);
		chk = check_new(sevs_cb, &s);
		for (k = 0; k < 5; k++)
			check_feed_http(chk, (int64_t)k + 1,
			    rows[i][k].text[0], rows[i][k].text,
			    rows[i][k].http);
		check_free(chk);
		cr_expect_eq(s.sev[want[i]], 1, "row %zu: no finding of "
		    "severity %d", i, want[i]);
		cr_expect_eq(s.sev[!want[i] ? PROTO_WARNING : PROTO_ERROR], 0,
		    "row %zu", i);
	}
}
