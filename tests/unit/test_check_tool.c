/* check/tools.c: tools' inputSchema and outputSchema applied to calls,
   the answer to an unknown tool or to bad arguments, per revision, a
   passing and a failing session per rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "check.h"
#include "check_util.h"

#define V1 "2025-03-26"
#define V3 "2025-06-18"
#define V4 "2025-11-25"
#define SC "{\"tools\":{}}"
#define LIST { T_REQ("C", "1", "tools/list", "{}"), NULL }
/* weather(city: string, required) -> {temp: number}, required. */
#define WTOOLS(extra) T_RES("S", "1", "{\"tools\":[{\"name\":\"weather\"," \
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"city\":" \
	"{\"type\":\"string\"}},\"required\":[\"city\"]},\"outputSchema\":" \
	"{\"type\":\"object\",\"properties\":{\"temp\":" \
	"{\"type\":\"number\"}},\"required\":[\"temp\"]}}" extra "]}")
#define WCALL(id, args) T_REQ("C", id, "tools/call", \
	"{\"name\":\"weather\",\"arguments\":" args "}")
#define UCALL(id) T_REQ("C", id, "tools/call", \
	"{\"name\":\"nope\",\"arguments\":{}}")
#define GOOD(id) T_RES("S", id, "{\"content\":[],\"structuredContent\":" \
	"{\"temp\":21.5}}")
#define ISERR(id) T_RES("S", id, "{\"content\":[{\"type\":\"text\"," \
	"\"text\":\"bad\"}],\"isError\":true}")
#define RPCERR(id) "S:{\"jsonrpc\":\"2.0\",\"id\":" id ",\"error\":" \
	"{\"code\":-32602,\"message\":\"Unknown tool\"}}"

static const struct check_case tool_cases[] = {
	{ "arguments and structuredContent fit", "", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { GOOD("2"), NULL } } },
	{ "a required argument missing", "tool.arguments", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{}"), NULL },
	    { GOOD("2"), NULL } } },
	{ "no arguments at all, one required", "tool.arguments", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"weather\"}"), NULL },
	    { GOOD("2"), NULL } } },
	{ "an argument of the wrong type", "tool.arguments", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":5}"), NULL },
	    { GOOD("2"), NULL } } },
	{ "structuredContent against the outputSchema",
	  "tool.structured-content", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", "{\"content\":[],\"structuredContent\":"
	    "{\"temp\":\"warm\"}}"), NULL } } },
	{ "no structuredContent with an outputSchema",
	  "tool.structured-content-missing", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "isError without structuredContent is fine", "", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { ISERR("2"), NULL } } },
	{ "an unknown tool answered with a JSON-RPC error", "tools.unknown",
	  1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { UCALL("2"), NULL },
	    { RPCERR("2"), NULL } } },
	/* An unknown tool answered with isError: test_check_sem's table. */
	{ "2025-06-18: bad arguments answered with a JSON-RPC error",
	  "tool.arguments", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{}"), NULL },
	    { RPCERR("2"), NULL } } },
	{ "2025-06-18: bad arguments answered with isError",
	  "tool.arguments,tool.invalid-arguments-answer", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{}"), NULL },
	    { ISERR("2"), NULL } } },
	{ "2025-11-25: bad arguments answered with isError",
	  "tool.arguments", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{}"), NULL },
	    { ISERR("2"), NULL } } },
	{ "2025-11-25: bad arguments answered with a JSON-RPC error",
	  "tool.arguments,tool.invalid-arguments-answer", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{}"), NULL },
	    { RPCERR("2"), NULL } } },
	{ "a schema that cannot be compiled", "tool.schema-invalid", 1, {
	    T_HS(V3, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\",\"properties\":{\"a\":"
	    "{\"minLength\":-1}}}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "a schema checked in part", "tool.schema-note", 1, {
	    T_HS(V3, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\",\"unevaluatedProperties\":false}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	/* draft-07 before 2025-11-25: array "items" is a tuple there and
	   in 2020-12 alike, but "$defs" via $ref resolves in both; the
	   dialect shows on dependentRequired, a 2020-12 keyword. */
	{ "2025-06-18: dependentRequired ignored (draft-07)", "", 1, {
	    T_HS(V3, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\",\"dependentRequired\":{\"a\":[\"b\"]}}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\",\"arguments\":"
	    "{\"a\":1}}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "2025-11-25: dependentRequired applied (2020-12)", "tool.arguments",
	  1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\",\"dependentRequired\":{\"a\":[\"b\"]}}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\",\"arguments\":"
	    "{\"a\":1}}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "a second listing with the same schemas", "tool.arguments", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { T_REQ("C", "3", "tools/list", "{}"), NULL },
	    { T_RES("S", "3", "{\"tools\":[{\"name\":\"weather\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"city\":"
	    "{\"type\":\"string\"}},\"required\":[\"city\"]},\"outputSchema\":"
	    "{\"type\":\"object\",\"properties\":{\"temp\":{\"type\":"
	    "\"number\"}},\"required\":[\"temp\"]}}]}"), NULL },
	    { WCALL("2", "{}"), NULL },
	    { GOOD("2"), NULL } } },
	{ "a second listing that changed the schema", "", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { T_REQ("C", "3", "tools/list", "{}"), NULL },
	    { T_RES("S", "3", "{\"tools\":[{\"name\":\"weather\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}"), NULL },
	    { WCALL("2", "{}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "2024-11-05-style tools without outputSchema", "", 1, {
	    T_HS(V1, "{}", SC), LIST,
	    { T_RES("S", "1", T_TOOLS), NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"echo\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
};

Test(check_tool, table)
{
	check_run_table(tool_cases, sizeof tool_cases / sizeof tool_cases[0]);
}

/* The finding's path is where in the message the bad argument is. */
Test(check_tool, path)
{
	struct check_case	 c = { "path", "", 1, {
	    T_HS(V3, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":5}"), NULL },
	    { GOOD("2"), NULL } } };
	char			*rules, *detail = NULL;

	rules = check_run_rules(&c, &detail);
	cr_assert_str_eq(rules, "tool.arguments");
	cr_assert(detail != NULL && strstr(detail,
	    "$.params.arguments.city") != NULL, "%s", detail);
	free(rules);
	free(detail);
}

struct tool_count {
	size_t	limit, args, other;
};

static void
tool_count_cb(const struct check_finding *cf, void *arg)
{
	struct tool_count	*n = arg;

	if (strcmp(cf->f->rule, "tool.schema-limit") == 0)
		n->limit++;
	else if (strcmp(cf->f->rule, "tool.arguments") == 0)
		n->args++;
	else
		n->other++;
}

static void
tool_feed(struct check *chk, int64_t seq, enum dir dir, const char *text)
{
	struct check_msg	m;

	memset(&m, 0, sizeof m);
	m.seq = seq;
	m.dir = dir;
	m.raw = text;
	m.len = strlen(text);
	check_message(chk, &m);
}

/* More tools than CHECK_SCHEMA_TOOLS_MAX: one note, the rest unchecked. */
Test(check_tool, tools_bounded)
{
	struct tool_count	 n = { 0, 0, 0 };
	struct check		*chk;
	json_t			*tools, *res;
	char			*text, name[32];
	int			 i;

	chk = check_new(tool_count_cb, &n);
	tool_feed(chk, 1, DIR_C2S, T_INIT(V4, "{}"));
	tool_feed(chk, 2, DIR_S2C, T_INITR(V4, SC));
	tool_feed(chk, 3, DIR_C2S, T_INITD);
	tool_feed(chk, 4, DIR_C2S, T_REQB("1", "tools/list", "{}"));
	tools = json_array();
	for (i = 0; i < CHECK_SCHEMA_TOOLS_MAX + 5; i++) {
		if (i == 0)
			snprintf(name, sizeof name, "tfirst");
		else if (i == CHECK_SCHEMA_TOOLS_MAX + 4)
			snprintf(name, sizeof name, "tlast");
		else
			snprintf(name, sizeof name, "t%d", i);
		json_array_append_new(tools, json_pack("{s:s, s:{s:s, s:[s]}}",
		    "name", name, "inputSchema", "type", "object", "required",
		    "a"));
	}
	res = json_pack("{s:s, s:i, s:{s:o}}", "jsonrpc", "2.0", "id", 1,
	    "result", "tools", tools);
	text = json_dumps(res, JSON_COMPACT);
	tool_feed(chk, 5, DIR_S2C, text);
	free(text);
	json_decref(res);
	tool_feed(chk, 6, DIR_C2S, T_REQB("2", "tools/call",
	    "{\"name\":\"tfirst\",\"arguments\":{}}"));
	tool_feed(chk, 7, DIR_C2S, T_REQB("3", "tools/call",
	    "{\"name\":\"tlast\",\"arguments\":{}}"));
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note for the tools past the bound");
	cr_assert_eq(n.args, 1, "the first tool checked, the last not");
}

/*
 * A value that runs out of steps: one note, the tool's later calls not
 * checked again.  Items whose schema names COSTLY_PROPS properties: each
 * item object costs that many steps, so COSTLY_ITEMS of them (values few
 * enough for the message to be parsed, CHECK_PARSE_VALUES_MAX) pass
 * JSCHEMA_MAX_STEPS.
 */
#define COSTLY_PROPS	64
#define COSTLY_ITEMS	(JSCHEMA_MAX_STEPS / COSTLY_PROPS * 2)

Test(check_tool, costly_once)
{
	struct tool_count	 n = { 0, 0, 0 };
	struct check		*chk;
	json_t			*arr, *req, *props, *list;
	char			*text;
	int			 i, k;

	cr_assert_lt(COSTLY_ITEMS, CHECK_PARSE_VALUES_MAX);
	chk = check_new(tool_count_cb, &n);
	tool_feed(chk, 1, DIR_C2S, T_INIT(V4, "{}"));
	tool_feed(chk, 2, DIR_S2C, T_INITR(V4, SC));
	tool_feed(chk, 3, DIR_C2S, T_INITD);
	tool_feed(chk, 4, DIR_C2S, T_REQB("1", "tools/list", "{}"));
	props = json_object();
	for (i = 0; i < COSTLY_PROPS; i++) {
		char	name[16];

		snprintf(name, sizeof name, "p%d", i);
		json_object_set_new(props, name, json_pack("{s:s}", "type",
		    "string"));
	}
	list = json_pack("{s:s, s:i, s:{s:[{s:s, s:{s:s, s:{s:{s:s, "
	    "s:{s:o}}}}}]}}", "jsonrpc", "2.0", "id", 1, "result", "tools",
	    "name", "n", "inputSchema", "type", "object", "properties", "a", "type",
	    "array", "items", "properties", props);
	text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	tool_feed(chk, 5, DIR_S2C, text);
	free(text);
	arr = json_array();
	for (i = 0; i < COSTLY_ITEMS; i++)
		json_array_append_new(arr, json_object());
	req = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:o}}}", "jsonrpc", "2.0",
	    "id", 2, "method", "tools/call", "params", "name", "n",
	    "arguments", "a", arr);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	for (k = 0; k < 2; k++)
		tool_feed(chk, 6 + k, DIR_C2S, text);
	free(text);
	tool_feed(chk, 8, DIR_C2S, T_REQB("9", "tools/call",
	    "{\"name\":\"n\",\"arguments\":{\"a\":\"x\"}}"));
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note: checking stopped");
	cr_assert_eq(n.args, 0, "the tool is not checked after that");
}
