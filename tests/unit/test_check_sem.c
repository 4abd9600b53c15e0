/* check/: progress, cancellation, tools, pagination and 2026-07-28's
   input_required round trips, a passing and a failing session per rule. */
#include <criterion/criterion.h>

#include "check_util.h"

#define V3 "2025-06-18"
#define V4 "2025-11-25"
#define SC "{\"tools\":{}}"
#define CALL(id, name, meta) T_REQ("C", id, "tools/call", "{\"name\":\"" \
	name "\",\"arguments\":{}" meta "}")
#define TOKEN ",\"_meta\":{\"progressToken\":\"t1\"}"
#define PROG(v) T_NOTE("S", "notifications/progress", \
	"{\"progressToken\":\"t1\",\"progress\":" v "}")
#define CANCEL(dir, id) T_NOTE(dir, "notifications/cancelled", \
	"{\"requestId\":" id "}")
#define T_CACHE "\"ttlMs\":0,\"cacheScope\":\"private\""
#define MCALL(id, extra) T_REQ("C", id, "tools/call", "{\"name\":\"w\"," \
	"\"arguments\":{}" extra "," T_META "}")
#define INPUT_REQUIRED T_RES("S", "1", "{\"resultType\":\"input_required\"," \
	"\"inputRequests\":{\"k\":{\"method\":\"roots/list\",\"params\":{}}}," \
	"\"requestState\":\"s1\"}")
/* A tool name past the 256 bytes kept whole (kept as a digest). */
#define L10 "nnnnnnnnnn"
#define L100 L10 L10 L10 L10 L10 L10 L10 L10 L10 L10
#define LONGNAME L100 L100 L100
#define MCALLN(id, name, extra) T_REQ("C", id, "tools/call", "{\"name\":\"" \
	name "\",\"arguments\":{}" extra "," T_META "}")
#define MDONE(id) T_RES("S", id, "{\"resultType\":\"complete\"," \
	"\"content\":[]}")

static const struct check_case sem_cases[] = {
	{ "a listed tool called", "", 1, {
	    T_HS(V3, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { CALL("2", "echo", ""), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "a tool called that tools/list did not name", "tool.unknown", 1, {
	    T_HS(V3, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { CALL("2", "nope", ""), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "an unknown tool answered with a protocol error", "tool.unknown", 1,
	  {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { CALL("2", "nope", ""), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,"
	      "\"message\":\"no tool nope\"}}", NULL } } },
	{ "an unknown tool answered with isError",
	  "tool.unknown,tool.unknown-as-result", 1, {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { CALL("2", "nope", ""), NULL },
	    { T_RES("S", "2", "{\"content\":[],\"isError\":true}"), NULL } } },
	{ "a known tool failing with isError", "", 1, {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { CALL("2", "echo", ""), NULL },
	    { T_RES("S", "2", "{\"content\":[],\"isError\":true}"), NULL } } },
	{ "a tool called with no tools/list seen", "", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "nope", ""), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "progress increasing, before the response", "", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", TOKEN), NULL },
	    { PROG("1"), NULL },
	    { PROG("2.5"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "progress not increasing", "progress.not-increasing", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", TOKEN), NULL },
	    { PROG("2"), NULL },
	    { PROG("2"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "progress after the response", "progress.after-response", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", TOKEN), NULL },
	    { T_RES("S", "2", T_CALLR), NULL },
	    { PROG("3"), NULL } } },
	{ "progress for a token never given", "progress.unknown-token", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { PROG("1"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "a running request cancelled", "", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { CANCEL("C", "2"), NULL } } },
	{ "a cancel crossing the response", "cancel.finished", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { T_RES("S", "2", T_CALLR), NULL },
	    { CANCEL("C", "2"), NULL } } },
	{ "a cancel after an answer whose error code is a string",
	  "jsonrpc.error-code", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":"
	      "\"oops\",\"message\":\"broken\"}}", NULL },
	    { CANCEL("C", "2"), NULL } } },
	{ "a cancel after an answer with result and error",
	  "jsonrpc.result-xor-error", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{},"
	      "\"error\":{\"code\":-1,\"message\":\"m\"}}", NULL },
	    { CANCEL("C", "2"), NULL } } },
	{ "a cancel after a good error answer", "cancel.finished", 1, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":"
	      "-32000,\"message\":\"failed\"}}", NULL },
	    { CANCEL("C", "2"), NULL } } },
	{ "a cancel of a request never sent", "cancel.unknown", 1, {
	    T_HS(V3, "{}", SC),
	    { CANCEL("C", "42"), NULL } } },
	{ "a cancel of the other side's request", "cancel.unknown", 0, {
	    T_HS(V3, "{}", SC),
	    { CALL("2", "echo", ""), NULL },
	    { CANCEL("S", "2"), NULL } } },
	{ "initialize cancelled", "cancel.initialize", 0, {
	    { T_INIT(V3, "{}"), NULL },
	    { CANCEL("C", "0"), NULL } } },
	{ "pagination that moves on", "", 1, {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", "{\"tools\":[],\"nextCursor\":\"a\"}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{\"cursor\":\"a\"}"), NULL },
	    { T_RES("S", "2", "{\"tools\":[],\"nextCursor\":\"b\"}"), NULL },
	    { T_REQ("C", "3", "tools/list", "{\"cursor\":\"b\"}"), NULL },
	    { T_RES("S", "3", "{\"tools\":[]}"), NULL } } },
	{ "a cursor that comes round again", "pagination.cursor-repeat", 1, {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", "{\"tools\":[],\"nextCursor\":\"a\"}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{\"cursor\":\"a\"}"), NULL },
	    { T_RES("S", "2", "{\"tools\":[],\"nextCursor\":\"a\"}"), NULL } } },
	{ "tools of a later page are known", "", 1, {
	    T_HS(V4, "{}", SC),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", "{\"tools\":[],\"nextCursor\":\"a\"}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{\"cursor\":\"a\"}"), NULL },
	    { T_RES("S", "2", T_TOOLS), NULL },
	    { CALL("3", "echo", ""), NULL },
	    { T_RES("S", "3", T_CALLR), NULL } } },
	{ "2026-07-28: input_required answered", "", 1, {
	    { MCALL("1", ""), NULL },
	    { INPUT_REQUIRED, NULL },
	    { MCALL("2", ",\"inputResponses\":{\"k\":{\"roots\":[]}},"
	      "\"requestState\":\"s1\""), NULL },
	    { MDONE("2"), NULL } } },
	{ "2026-07-28: a retry without the answer", "mrtr.input-responses", 1,
	  {
	    { MCALL("1", ""), NULL },
	    { INPUT_REQUIRED, NULL },
	    { MCALL("2", ",\"requestState\":\"s1\""), NULL },
	    { MDONE("2"), NULL } } },
	{ "2026-07-28: a retry with another state", "mrtr.request-state", 1, {
	    { MCALL("1", ""), NULL },
	    { INPUT_REQUIRED, NULL },
	    { MCALL("2", ",\"inputResponses\":{\"k\":{\"roots\":[]}},"
	      "\"requestState\":\"s2\""), NULL },
	    { MDONE("2"), NULL } } },
	{ "2026-07-28: a long tool name's retry with another state",
	  "mrtr.request-state", 1, {
	    { MCALLN("1", LONGNAME "a", ""), NULL },
	    { INPUT_REQUIRED, NULL },
	    { MCALLN("2", LONGNAME "a", ",\"inputResponses\":{\"k\":"
	      "{\"roots\":[]}},\"requestState\":\"s2\""), NULL },
	    { MDONE("2"), NULL } } },
	{ "2026-07-28: a retry of another long tool name is not it", "", 1, {
	    { MCALLN("1", LONGNAME "a", ""), NULL },
	    { INPUT_REQUIRED, NULL },
	    { MCALLN("2", LONGNAME "b", ",\"requestState\":\"s2\""), NULL },
	    { MDONE("2"), NULL } } },
};

Test(check_sem, table)
{
	check_run_table(sem_cases, sizeof sem_cases / sizeof sem_cases[0]);
}
