/* check_util.h: running a few messages through check/ in a unit test. */
#ifndef MCPREEL_TEST_CHECK_UTIL_H
#define MCPREEL_TEST_CHECK_UTIL_H

#include "check_session.h"

/* A message of a test session: "C:" or "S:" then its JSON. */
struct tmsg {
	const char		*text;
	const struct check_http	*http;
};

/* One row: a session, and the rules it must give, exactly. */
struct check_case {
	const char	*name;
	const char	*expect;	/* "rule,rule" sorted unique; "" none */
	int		 end;		/* call check_end(CLEAN) at the end */
	struct tmsg	 msgs[16];
};

/*
 * Feed one message: its seq, 'C' (from the client) or 'S', its JSON (a
 * "C:" or "S:" before it, as the tables write messages, is skipped).
 */
void	 check_feed(struct check *, int64_t, char, const char *);

/* The same, the message carried by HTTP exchange h (or NULL). */
void	 check_feed_http(struct check *, int64_t, char, const char *,
	    const struct check_http *);

/* The rule ids a session gave, sorted, unique, joined by commas. */
char	*check_run_rules(const struct check_case *, char **);

/* Run every row of a table, asserting each. */
void	 check_run_table(const struct check_case *, size_t);

#endif

/* Messages the tables share (legacy handshake of a revision). */
#define T_INIT(v, cc) "C:{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":" \
	"\"initialize\",\"params\":{\"protocolVersion\":\"" v "\"," \
	"\"capabilities\":" cc ",\"clientInfo\":{\"name\":\"c\"," \
	"\"version\":\"1\"}}}"
#define T_INITR(v, sc) "S:{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{" \
	"\"protocolVersion\":\"" v "\",\"capabilities\":" sc "," \
	"\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}"
#define T_INITD "C:{\"jsonrpc\":\"2.0\",\"method\":" \
	"\"notifications/initialized\"}"
#define T_HS(v, cc, sc) { T_INIT(v, cc), NULL }, { T_INITR(v, sc), NULL }, \
	{ T_INITD, NULL }
#define T_REQB(id, method, params) "{\"jsonrpc\":\"2.0\",\"id\":" \
	id ",\"method\":\"" method "\",\"params\":" params "}"
#define T_REQ(dir, id, method, params) dir ":" T_REQB(id, method, params)
#define T_NOTE(dir, method, params) dir ":{\"jsonrpc\":\"2.0\",\"method\":\"" \
	method "\",\"params\":" params "}"
#define T_RESB(id, result) "{\"jsonrpc\":\"2.0\",\"id\":" id \
	",\"result\":" result "}"
#define T_RES(dir, id, result) dir ":" T_RESB(id, result)
#define T_TOOLS "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":" \
	"{\"type\":\"object\"}}]}"
#define T_CALLR "{\"content\":[]}"
/* 2026-07-28's _meta of every request. */
#define T_META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
