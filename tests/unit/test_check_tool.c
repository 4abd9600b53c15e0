/* check/tools.c: tools' inputSchema and outputSchema applied to calls,
   the answer to an unknown tool or to bad arguments, per revision, a
   passing and a failing session per rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "check.h"
#include "check_util.h"

#define V0 "2024-11-05"
#define V1 "2025-03-26"
#define V3 "2025-06-18"
#define V4 "2025-11-25"
#define SC "{\"tools\":{}}"
/* Tasks on both sides (2025-11-25), and a tool call made a task. */
#define TCC "{\"tasks\":{}}"
#define TSC "{\"tools\":{},\"tasks\":{\"requests\":{\"tools\":" \
	"{\"call\":{}}}}}"
#define TCALL(id) T_REQ("C", id, "tools/call", "{\"name\":\"weather\"," \
	"\"arguments\":{\"city\":\"Oslo\"},\"task\":{\"ttl\":60000}}")
#define TASKR(id) T_RES("S", id, "{\"task\":{\"taskId\":\"t1\"," \
	"\"status\":\"working\",\"createdAt\":\"2025-11-25T10:30:00Z\"," \
	"\"lastUpdatedAt\":\"2025-11-25T10:30:00Z\",\"ttl\":60000}}")
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
	{ "an unknown tool answered with a JSON-RPC error", "tool.unknown",
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
	/* Task-augmented (2025-11-25): the CreateTaskResult is not the
	   tool's result; tasks/result is, and is checked as one. */
	{ "a task-augmented call answered with a task", "", 1, {
	    T_HS(V4, TCC, TSC), LIST, { WTOOLS(""), NULL },
	    { TCALL("2"), NULL }, { TASKR("2"), NULL },
	    { T_REQ("C", "3", "tasks/result", "{\"taskId\":\"t1\"}"), NULL },
	    { GOOD("3"), NULL } } },
	{ "a task's result without structuredContent",
	  "tool.structured-content-missing", 1, {
	    T_HS(V4, TCC, TSC), LIST, { WTOOLS(""), NULL },
	    { TCALL("2"), NULL }, { TASKR("2"), NULL },
	    { T_REQ("C", "3", "tasks/result", "{\"taskId\":\"t1\"}"), NULL },
	    { T_RES("S", "3", T_CALLR), NULL } } },
	{ "a task's result against the outputSchema",
	  "tool.structured-content", 1, {
	    T_HS(V4, TCC, TSC), LIST, { WTOOLS(""), NULL },
	    { TCALL("2"), NULL }, { TASKR("2"), NULL },
	    { T_REQ("C", "3", "tasks/result", "{\"taskId\":\"t1\"}"), NULL },
	    { T_RES("S", "3", "{\"content\":[],\"structuredContent\":"
	    "{\"temp\":\"warm\"}}"), NULL } } },
	/* outputSchema and structuredContent are 2025-06-18's. */
	{ "2025-03-26: an outputSchema is not a rule yet", "", 1, {
	    T_HS(V1, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	{ "2024-11-05: an outputSchema is not a rule yet", "", 1, {
	    T_HS(V0, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	/* One fault, one finding: the shape says "not an object". */
	{ "arguments an array: the shape only", "shape.type", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "[\"Oslo\"]"), NULL }, { GOOD("2"), NULL } } },
	{ "arguments null: the shape only", "shape.type", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "null"), NULL }, { GOOD("2"), NULL } } },
	{ "structuredContent a string: the shape only", "shape.type", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", "{\"content\":[],\"structuredContent\":"
	    "\"21\"}"), NULL } } },
	{ "structuredContent null: the shape only", "shape.type", 1, {
	    T_HS(V4, "{}", SC), LIST, { WTOOLS(""), NULL },
	    { WCALL("2", "{\"city\":\"Oslo\"}"), NULL },
	    { T_RES("S", "2", "{\"content\":[],\"structuredContent\":"
	    "null}"), NULL } } },
	/* Absence needs no compiled schema. */
	{ "no structuredContent, the outputSchema invalid",
	  "tool.schema-invalid,tool.structured-content-missing", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\"},\"outputSchema\":{\"type\":\"object\","
	    "\"minLength\":-1}}]}"), NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\"}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	/* The last of two entries counts, and the repeat is said. */
	{ "2025-11-25: a name listed twice", "tool.duplicate-name", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"d\",\"inputSchema\":"
	    "{\"type\":\"object\",\"required\":[\"x\"]}},{\"name\":\"d\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}"), NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"d\",\"arguments\":"
	    "{}}"), NULL },
	    { T_RES("S", "2", T_CALLR), NULL } } },
	/* A page repeated (a cursor's fault) is not a duplicate name. */
	{ "a name again in the next page", "", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"d\",\"inputSchema\":"
	    "{\"type\":\"object\"}}],\"nextCursor\":\"c\"}"), NULL },
	    { T_REQ("C", "3", "tools/list", "{\"cursor\":\"c\"}"), NULL },
	    { T_RES("S", "3", "{\"tools\":[{\"name\":\"d\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}"), NULL } } },
	{ "names that differ after a NUL are two tools", "tool.unknown", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"a\\u0000x\","
	    "\"inputSchema\":{\"type\":\"object\",\"required\":[\"q\"]}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"a\\u0000y\","
	    "\"arguments\":{}}"), NULL },
	    { RPCERR("2"), NULL } } },
	{ "2025-11-25: an invalid inputSchema is an error (MUST)",
	  "tool.schema-invalid", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\",\"minLength\":-1}}]}"), NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"x\"}"), NULL },
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
	size_t	limit, args, other, unknown, cut, sc;
	char	last_limit[512];
};

static void
tool_count_cb(const struct check_finding *cf, void *arg)
{
	struct tool_count	*n = arg;

	if (strcmp(cf->f->rule, "tool.schema-limit") == 0) {
		n->limit++;
		snprintf(n->last_limit, sizeof n->last_limit, "%s",
		    cf->f->text);
	} else if (strcmp(cf->f->rule, "tool.unknown") == 0)
		n->unknown++;
	else if (strcmp(cf->f->rule, "check.tools-cut") == 0)
		n->cut++;
	else if (strcmp(cf->f->rule, "tool.structured-content") == 0)
		n->sc++;
	else if (strcmp(cf->f->rule, "tool.arguments") == 0)
		n->args++;
	else {
		n->other++;
		fprintf(stderr, "other finding: %s: %s\n", cf->f->rule,
		    cf->f->text);
	}
}

/* More tools than CHECK_SCHEMA_TOOLS_MAX: one note, the rest unchecked. */
Test(check_tool, tools_bounded)
{
	struct tool_count	 n;
	struct check		*chk;
	json_t			*tools, *res;
	char			*text, name[32];
	int			 i;

	memset(&n, 0, sizeof n);
	chk = check_new(tool_count_cb, &n);
	check_feed(chk, 1, 'C', T_INIT(V4, "{}"));
	check_feed(chk, 2, 'S', T_INITR(V4, SC));
	check_feed(chk, 3, 'C', T_INITD);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
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
	check_feed(chk, 5, 'S', text);
	free(text);
	json_decref(res);
	check_feed(chk, 6, 'C', T_REQB("2", "tools/call",
	    "{\"name\":\"tfirst\",\"arguments\":{}}"));
	check_feed(chk, 7, 'C', T_REQB("3", "tools/call",
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
	struct tool_count	 n;
	struct check		*chk;
	json_t			*arr, *req, *props, *list;
	char			*text;
	int			 i, k;

	cr_assert_lt(COSTLY_ITEMS, CHECK_PARSE_VALUES_MAX);
	memset(&n, 0, sizeof n);
	chk = check_new(tool_count_cb, &n);
	check_feed(chk, 1, 'C', T_INIT(V4, "{}"));
	check_feed(chk, 2, 'S', T_INITR(V4, SC));
	check_feed(chk, 3, 'C', T_INITD);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
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
	check_feed(chk, 5, 'S', text);
	free(text);
	arr = json_array();
	for (i = 0; i < COSTLY_ITEMS; i++)
		json_array_append_new(arr, json_object());
	req = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:o}}}", "jsonrpc", "2.0",
	    "id", 2, "method", "tools/call", "params", "name", "n",
	    "arguments", "a", arr);
	for (k = 0; k < 2; k++) {
		json_object_set_new(req, "id", json_integer(2 + k));
		text = json_dumps(req, JSON_COMPACT);
		check_feed(chk, 6 + k, 'C', text);
		free(text);
	}
	json_decref(req);
	check_feed(chk, 8, 'C', T_REQB("9", "tools/call",
	    "{\"name\":\"n\",\"arguments\":{\"a\":\"x\"}}"));
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note: checking stopped");
	cr_assert_eq(n.args, 0, "the tool is not checked after that");
	cr_assert_eq(n.other, 0, "no other finding");
}

/* Feed a handshake and a tools/list request (id 1) under V4. */
static struct check *
tool_start(struct tool_count *n)
{
	struct check	*chk;

	memset(n, 0, sizeof *n);
	chk = check_new(tool_count_cb, n);
	check_feed(chk, 1, 'C', T_INIT(V4, "{}"));
	check_feed(chk, 2, 'S', T_INITR(V4, SC));
	check_feed(chk, 3, 'C', T_INITD);
	return (chk);
}

/* A tools/list answer of id with these tools (stolen), fed. */
static void
tool_list(struct check *chk, int64_t seq, int id, json_t *tools)
{
	json_t	*res;
	char	*text;

	res = json_pack("{s:s, s:i, s:{s:o}}", "jsonrpc", "2.0", "id", id,
	    "result", "tools", tools);
	text = json_dumps(res, JSON_COMPACT);
	check_feed(chk, seq, 'S', text);
	free(text);
	json_decref(res);
}

/* Past CHECK_TOOLS_MAX: one note, and no tool is "unknown" then. */
Test(check_tool, tools_cut)
{
	struct tool_count	 n;
	struct check		*chk;
	json_t			*tools;
	char			 name[32];
	int			 i;

	chk = tool_start(&n);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	tools = json_array();
	for (i = 0; i <= CHECK_TOOLS_MAX; i++) {
		snprintf(name, sizeof name, "t%d", i);
		json_array_append_new(tools, json_pack("{s:s, s:{s:s}}",
		    "name", name, "inputSchema", "type", "object"));
	}
	tool_list(chk, 5, 1, tools);
	snprintf(name, sizeof name, "t%d", CHECK_TOOLS_MAX);
	check_feed(chk, 6, 'C', T_REQB("2", "tools/call",
	    "{\"name\":\"t10000\",\"arguments\":{}}"));
	check_feed(chk, 7, 'S', "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	    "{\"content\":[],\"isError\":true}}");
	check_free(chk);
	cr_assert_eq(n.cut, 1, "one note: the listing was cut");
	cr_assert_eq(n.unknown, 0, "a tool past the cut is not unknown");
	cr_assert_eq(n.limit, 1, "the schemas past 1 000 tools: one note");
	cr_assert_eq(n.other, 0, "no other finding");
}

/*
 * A long name is kept by its digest, a short one by itself: a tool named
 * with the digest of another's long name is another tool (no duplicate,
 * each checked against its own schema).
 */
Test(check_tool, digest_name_no_collision)
{
	struct tool_count	 n;
	struct check		*chk;
	struct digest		*d;
	json_t			*tools;
	char			 longname[301], *hex, *call;

	memset(longname, 'L', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	d = digest_new();
	digest_update(d, longname, strlen(longname));
	hex = digest_hex_free(d);
	chk = tool_start(&n);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	tools = json_pack("[{s:s, s:{s:s, s:[s]}}, {s:s, s:{s:s}}]",
	    "name", longname, "inputSchema", "type", "object", "required", "q",
	    "name", hex, "inputSchema", "type", "object");
	tool_list(chk, 5, 1, tools);
	/* The long-named tool keeps its schema: {} lacks "q". */
	xasprintf(&call, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":"
	    "{}}}", longname);
	check_feed(chk, 6, 'C', call);
	free(call);
	check_feed(chk, 7, 'S', "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":"
	    "{\"content\":[],\"isError\":true}}");
	/* The digest-named one is listed, with its own (empty) schema. */
	xasprintf(&call, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":"
	    "{}}}", hex);
	check_feed(chk, 8, 'C', call);
	free(call);
	check_feed(chk, 9, 'S', "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":"
	    "{\"content\":[]}}");
	check_free(chk);
	free(hex);
	cr_assert_eq(n.args, 1, "the long-named tool's schema applied once");
	cr_assert_eq(n.unknown, 0, "both tools are listed");
	cr_assert_eq(n.other, 0, "no other finding (no duplicate name)");
}

/* A name with terminal escapes is said JSON-escaped, not raw. */
Test(check_tool, names_quoted)
{
	struct check_case	 c = { "escapes", "tool.arguments", 1, {
	    T_HS(V4, "{}", SC), LIST,
	    { T_RES("S", "1", "{\"tools\":[{\"name\":\"\\u001b[2Jx\","
	    "\"inputSchema\":{\"type\":\"object\",\"required\":[\"q\"]}}]}"),
	    NULL },
	    { T_REQ("C", "2", "tools/call", "{\"name\":\"\\u001b[2Jx\","
	    "\"arguments\":{}}"), NULL },
	    { ISERR("2"), NULL } } };
	char			*rules, *detail = NULL;

	rules = check_run_rules(&c, &detail);
	cr_assert_str_eq(rules, "tool.arguments", "%s", detail);
	cr_assert(strstr(detail, "tool \"\\u001B[2Jx\"") != NULL, "%s",
	    detail);
	free(rules);
	free(detail);
}

/*
 * A tool listed again with the same costly schema stays skipped: not
 * compiled again, no new note, and after COSTLY_RELISTS listings (more
 * than CHECK_SCHEMA_COSTLY_MAX) a well-behaved tool is still checked.
 */
#define COSTLY_RELISTS	(CHECK_SCHEMA_COSTLY_MAX + 4)

/* An inputSchema of DEFS_N $defs, each allOf two $refs of the next:
   2^DEFS_N applications on "{}", just under JSCHEMA_MAX_STEPS. */
#define DEFS_N		17

static json_t *
tool_exp_schema(void)
{
	json_t	*defs;
	char	 name[16], ref[32];
	int	 i;

	defs = json_object();
	for (i = 0; i < DEFS_N; i++) {
		snprintf(name, sizeof name, "d%d", i);
		snprintf(ref, sizeof ref, "#/$defs/d%d", i + 1);
		json_object_set_new(defs, name, json_pack("{s:[{s:s},{s:s}]}",
		    "allOf", "$ref", ref, "$ref", ref));
	}
	snprintf(name, sizeof name, "d%d", DEFS_N);
	json_object_set_new(defs, name, json_pack("{s:s}", "type", "object"));
	return (json_pack("{s:s, s:s, s:o}", "type", "object", "$ref",
	    "#/$defs/d0", "$defs", defs));
}

Test(check_tool, costly_relisted)
{
	struct tool_count	 n;
	struct check		*chk;
	char			 req[128];
	int			 i, seq = 4;

	chk = tool_start(&n);
	for (i = 0; i < COSTLY_RELISTS; i++) {
		snprintf(req, sizeof req, T_REQB("%d", "tools/list", "{}"),
		    100 + i);
		check_feed(chk, seq++, 'C', req);
		tool_list(chk, seq++, 100 + i, json_pack("[{s:s, s:o}, "
		    "{s:s, s:{s:s, s:[s]}}]", "name", "c", "inputSchema",
		    tool_exp_schema(), "name", "o", "inputSchema", "type",
		    "object", "required", "a"));
		snprintf(req, sizeof req, T_REQB("%d", "tools/call",
		    "{\"name\":\"c\",\"arguments\":{}}"), 200 + i);
		check_feed(chk, seq++, 'C', req);
		snprintf(req, sizeof req, T_REQB("%d", "tools/call",
		    "{\"name\":\"o\",\"arguments\":{}}"), 300 + i);
		check_feed(chk, seq++, 'C', req);
	}
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note for the costly tool: %s",
	    n.last_limit);
	cr_assert_eq(n.args, COSTLY_RELISTS, "o checked at every listing");
	cr_assert_eq(n.other, 0, "no other finding");
}

/*
 * Many calls of a schema that costs just under JSCHEMA_MAX_STEPS on "{}"
 * (2^17 applications): the first call makes the tool costly, so the work
 * of CALLS calls is that of one.  Before, every call paid ~0.5 M steps.
 */
#define EXP_CALLS	200

Test(check_tool, costly_each_call)
{
	struct tool_count	 n;
	struct check		*chk;
	char			 req[128];
	int			 i;

	chk = tool_start(&n);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	tool_list(chk, 5, 1, json_pack("[{s:s, s:o}]", "name", "c",
	    "inputSchema", tool_exp_schema()));
	for (i = 0; i < EXP_CALLS; i++) {
		snprintf(req, sizeof req, T_REQB("%d", "tools/call",
		    "{\"name\":\"c\",\"arguments\":{}}"), 10 + i);
		check_feed(chk, 6 + i, 'C', req);
	}
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note: the tool is too costly");
	cr_assert(strstr(n.last_limit, "more work than a message this size")
	    != NULL, "%s", n.last_limit);
	cr_assert_eq(n.args + n.other, 0, "no other finding");
}

/* A $ref that loops without going into the value: a stop, not an error. */
Test(check_tool, deep_stop)
{
	struct tool_count	 n;
	struct check		*chk;

	chk = tool_start(&n);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	tool_list(chk, 5, 1, json_pack("[{s:s, s:{s:s, s:[{s:s}]}}]", "name",
	    "c", "inputSchema", "type", "object", "anyOf", "$ref", "#"));
	check_feed(chk, 6, 'C', T_REQB("2", "tools/call",
	    "{\"name\":\"c\",\"arguments\":{}}"));
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note: %s", n.last_limit);
	cr_assert(strstr(n.last_limit, "nests too deep") != NULL, "%s",
	    n.last_limit);
	cr_assert_eq(n.args + n.other, 0, "no tool.arguments for a stop");
}

/*
 * Patterns that compile large: "(a{60}){60}" is 3 600 instructions, some
 * 70 KB, from 14 bytes of text.  PAT_TOOLS tools of PAT_N each would
 * compile to over CHECK_SCHEMA_BYTES_MAX with under 50 KB of text (4 MiB
 * of it was the bound, as text, before): the compiled bytes are
 * what is counted, so one note says the budget is spent and the last
 * tool's schema is not compiled (its bad call goes unchecked).
 */
#define PAT_N		20
#define PAT_INSNS	3600	/* "(a{60}){60}", 16 bytes each at least */
#define PAT_TOOLS	(CHECK_SCHEMA_BYTES_MAX / (PAT_N * PAT_INSNS * 16) + 2)


Test(check_tool, compiled_size_bounded)
{
	struct tool_count	 n;
	struct check		*chk;
	json_t			*tools, *props;
	char			 name[32], req[128];
	int			 i, k;

	chk = tool_start(&n);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	tools = json_array();
	for (i = 0; i < PAT_TOOLS; i++) {
		props = json_object();
		for (k = 0; k < PAT_N; k++) {
			snprintf(name, sizeof name, "p%d", k);
			json_object_set_new(props, name, json_pack("{s:s}",
			    "pattern", "(a{60}){60}"));
		}
		snprintf(name, sizeof name, "t%d", i);
		json_array_append_new(tools, json_pack("{s:s, s:{s:s, s:o, "
		    "s:[s]}}", "name", name, "inputSchema", "type", "object",
		    "properties", props, "required", "z"));
	}
	tool_list(chk, 5, 1, tools);
	check_feed(chk, 6, 'C', T_REQB("2", "tools/call",
	    "{\"name\":\"t0\",\"arguments\":{}}"));
	snprintf(req, sizeof req, T_REQB("3", "tools/call",
	    "{\"name\":\"t%d\",\"arguments\":{}}"), PAT_TOOLS - 1);
	check_feed(chk, 7, 'C', req);
	check_free(chk);
	cr_assert_eq(n.limit, 1, "one note: %s", n.last_limit);
	cr_assert(strstr(n.last_limit, "bytes already") != NULL, "%s",
	    n.last_limit);
	cr_assert_eq(n.args, 1, "the first tool checked, the last not");
}

/* Severity of a refused schema, as the finding's callback sees it. */
static void
tool_sev_cb(const struct check_finding *cf, void *arg)
{
	int	*sev = arg;

	if (strcmp(cf->f->rule, "tool.schema-invalid") == 0)
		*sev = cf->f->severity;
}

/* An invalid schema under version v: the severity of its finding. */
static int
tool_invalid_sev(const char *init, const char *initr, const char *which)
{
	struct check	*chk;
	char		 res[256];
	int		 sev = -1;

	chk = check_new(tool_sev_cb, &sev);
	check_feed(chk, 1, 'C', init);
	check_feed(chk, 2, 'S', initr);
	check_feed(chk, 3, 'C', T_INITD);
	check_feed(chk, 4, 'C', T_REQB("1", "tools/list", "{}"));
	snprintf(res, sizeof res, T_RESB("1", "{\"tools\":[{\"name\":\"x\","
	    "%s\"%s\":{\"type\":\"object\",\"minLength\":-1}}]}"),
	    strcmp(which, "inputSchema") != 0 ? "\"inputSchema\":{\"type\":"
	    "\"object\"}," : "", which);
	check_feed(chk, 5, 'S', res);
	check_free(chk);
	return (sev);
}

/* 2025-11-25: an inputSchema MUST be a valid JSON Schema: an error. */
Test(check_tool, invalid_severity)
{
	cr_assert_eq(tool_invalid_sev(T_INIT(V4, "{}"), T_INITR(V4, SC),
	    "inputSchema"), PROTO_ERROR);
	cr_assert_eq(tool_invalid_sev(T_INIT(V3, "{}"), T_INITR(V3, SC),
	    "inputSchema"), PROTO_WARNING);
	cr_assert_eq(tool_invalid_sev(T_INIT(V4, "{}"), T_INITR(V4, SC),
	    "outputSchema"), PROTO_WARNING);
}
