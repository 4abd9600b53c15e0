/*
 * What MCP says per revision (protocol/): the revisions, the method table
 * and findings.  Cases are data.
 */

#include <sys/wait.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "core.h"
#include "protocol.h"
#include "shape_int.h"
#include "unit.h"

static const struct {
	const char		*name;
	enum proto_version	 v;
	int			 legacy;
} version_cases[] = {
	{ "2024-11-05", PROTO_V_2024_11_05, 1 },
	{ "2025-03-26", PROTO_V_2025_03_26, 1 },
	{ "2025-06-18", PROTO_V_2025_06_18, 1 },
	{ "2025-11-25", PROTO_V_2025_11_25, 1 },
	{ "2026-07-28", PROTO_V_2026_07_28, 0 },
	{ "2025-06-1", PROTO_V_UNKNOWN, 0 },		/* a prefix */
	{ "2025-06-188", PROTO_V_UNKNOWN, 0 },		/* one too long */
	{ "", PROTO_V_UNKNOWN, 0 },
	{ "DRAFT-2026-v1", PROTO_V_UNKNOWN, 0 },
};

Test(protocol, versions, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < sizeof version_cases / sizeof version_cases[0]; i++) {
		enum proto_version v = proto_version_parse(version_cases[i].name);

		cr_expect_eq(v, version_cases[i].v, "%s", version_cases[i].name);
		cr_expect_eq(proto_version_is_legacy(v),
		    version_cases[i].legacy, "%s", version_cases[i].name);
		if (v != PROTO_V_UNKNOWN)
			cr_expect_str_eq(proto_version_name(v),
			    version_cases[i].name);
	}
	cr_expect_eq(proto_version_parse(NULL), PROTO_V_UNKNOWN);
	cr_expect_str_eq(proto_version_name(PROTO_V_MAX), "unknown");
	cr_expect_eq(proto_version_parse_n("2025-03-26xyz", 10),
	    PROTO_V_2025_03_26);
	cr_expect_eq(proto_version_latest(), PROTO_V_2026_07_28);
}

#define NONE	-1	/* the revision has no such method */

static const struct {
	const char		*name;
	enum proto_version	 v;
	int			 kind;		/* enum proto_kind, or NONE */
	int			 senders;
	int			 cap_side;
	const char		*cap;
	const char		*result;
	const char		*spec;
} method_cases[] = {
	{ "tools/call", PROTO_V_2025_06_18, PROTO_REQUEST, PROTO_CLIENT,
	  PROTO_SERVER, "tools", "CallToolAnswer", "2025-06-18 server/tools" },
	{ "resources/subscribe", PROTO_V_2024_11_05, PROTO_REQUEST,
	  PROTO_CLIENT, PROTO_SERVER, "resources.subscribe", "EmptyResult",
	  "2024-11-05 server/resources" },
	{ "resources/subscribe", PROTO_V_2026_07_28, NONE, 0, 0, NULL, NULL,
	  NULL },
	{ "sampling/createMessage", PROTO_V_2025_03_26, PROTO_REQUEST,
	  PROTO_SERVER, PROTO_CLIENT, "sampling", "CreateMessageAnswer",
	  "2025-03-26 client/sampling" },
	{ "sampling/createMessage", PROTO_V_2026_07_28, PROTO_INPUT,
	  PROTO_SERVER, PROTO_CLIENT, "sampling", "CreateMessageResult",
	  "2026-07-28 client/sampling" },
	{ "notifications/tools/list_changed", PROTO_V_2024_11_05,
	  PROTO_NOTIFICATION, PROTO_SERVER, PROTO_SERVER, "tools.listChanged",
	  NULL, "2024-11-05 server/tools" },
	{ "roots/list", PROTO_V_2025_11_25, PROTO_REQUEST, PROTO_SERVER,
	  PROTO_CLIENT, "roots", "ListRootsResult", "2025-11-25 client/roots" },
	{ "notifications/roots/list_changed", PROTO_V_2025_06_18,
	  PROTO_NOTIFICATION, PROTO_CLIENT, PROTO_CLIENT, "roots.listChanged",
	  NULL, "2025-06-18 client/roots" },
	{ "notifications/roots/list_changed", PROTO_V_2026_07_28, NONE, 0, 0,
	  NULL, NULL, NULL },
	{ "elicitation/create", PROTO_V_2025_03_26, NONE, 0, 0, NULL, NULL,
	  NULL },
	{ "elicitation/create", PROTO_V_2025_06_18, PROTO_REQUEST,
	  PROTO_SERVER, PROTO_CLIENT, "elicitation", "ElicitAnswer",
	  "2025-06-18 client/elicitation" },
	{ "completion/complete", PROTO_V_2024_11_05, PROTO_REQUEST,
	  PROTO_CLIENT, 0, NULL, "CompleteResult",
	  "2024-11-05 server/utilities/completion" },
	{ "completion/complete", PROTO_V_2025_03_26, PROTO_REQUEST,
	  PROTO_CLIENT, PROTO_SERVER, "completions", "CompleteResult",
	  "2025-03-26 server/utilities/completion" },
	{ "logging/setLevel", PROTO_V_2025_11_25, PROTO_REQUEST, PROTO_CLIENT,
	  PROTO_SERVER, "logging", "EmptyResult",
	  "2025-11-25 server/utilities/logging" },
	{ "logging/setLevel", PROTO_V_2026_07_28, NONE, 0, 0, NULL, NULL,
	  NULL },
	{ "tasks/list", PROTO_V_2025_11_25, PROTO_REQUEST, PROTO_BOTH,
	  PROTO_RECEIVER, "tasks.list", "ListTasksResult",
	  "2025-11-25 basic/utilities/tasks" },
	{ "tasks/list", PROTO_V_2025_06_18, NONE, 0, 0, NULL, NULL, NULL },
	{ "initialize", PROTO_V_2025_11_25, PROTO_REQUEST, PROTO_CLIENT, 0,
	  NULL, "InitializeResult", "2025-11-25 basic/lifecycle" },
	{ "initialize", PROTO_V_2026_07_28, NONE, 0, 0, NULL, NULL, NULL },
	{ "ping", PROTO_V_2026_07_28, NONE, 0, 0, NULL, NULL, NULL },
	{ "server/discover", PROTO_V_2026_07_28, PROTO_REQUEST, PROTO_CLIENT,
	  0, NULL, "DiscoverResult", "2026-07-28 server/discover" },
	{ "server/discover", PROTO_V_2025_11_25, NONE, 0, 0, NULL, NULL,
	  NULL },
	{ "notifications/cancelled", PROTO_V_2026_07_28, PROTO_NOTIFICATION,
	  PROTO_BOTH, 0, NULL, NULL, "2026-07-28 basic/patterns/cancellation" },
	{ "tools/cal", PROTO_V_2025_06_18, NONE, 0, 0, NULL, NULL, NULL },
	{ "tools/calls", PROTO_V_2025_06_18, NONE, 0, 0, NULL, NULL, NULL },
	{ "", PROTO_V_2025_06_18, NONE, 0, 0, NULL, NULL, NULL },
};

Test(protocol, method_table, .timeout = UNIT_TIMEOUT)
{
	const struct proto_method	*m;
	size_t				 i;

	for (i = 0; i < sizeof method_cases / sizeof method_cases[0]; i++) {
		m = proto_method(method_cases[i].name, method_cases[i].v);
		if (method_cases[i].kind == NONE) {
			cr_expect_null(m, "%s in %s", method_cases[i].name,
			    proto_version_name(method_cases[i].v));
			continue;
		}
		cr_assert_not_null(m, "%s in %s", method_cases[i].name,
		    proto_version_name(method_cases[i].v));
		cr_expect_eq((int)m->kind, method_cases[i].kind, "%s",
		    m->name);
		cr_expect_eq(m->senders, method_cases[i].senders, "%s",
		    m->name);
		cr_expect_eq(m->cap_side, method_cases[i].cap_side, "%s",
		    m->name);
		if (method_cases[i].cap == NULL)
			cr_expect_null(m->cap, "%s", m->name);
		else
			cr_expect_str_eq(m->cap, method_cases[i].cap);
		if (method_cases[i].result == NULL)
			cr_expect_null(m->result, "%s", m->name);
		else
			cr_expect_str_eq(m->result, method_cases[i].result);
		cr_expect_str_eq(proto_method_spec(m, method_cases[i].v),
		    method_cases[i].spec);
	}
	/* A name given by length, as the scanner finds it in a message. */
	m = proto_method_n("tools/call\"", 10, PROTO_V_2025_06_18);
	cr_expect(m != NULL && strcmp(m->name, "tools/call") == 0);
	/* Unknown revision: the newest row. */
	m = proto_method("sampling/createMessage", PROTO_V_UNKNOWN);
	cr_expect(m != NULL && m->kind == PROTO_INPUT);
}

/* Rows of one name sit together, never overlap, and are well formed. */
Test(protocol, method_table_consistent, .timeout = UNIT_TIMEOUT)
{
	const struct proto_method	*t;
	size_t				 n, i, j;

	t = proto_methods(&n);
	cr_assert_gt(n, 30);
	for (i = 0; i < n; i++) {
		cr_expect_neq(t[i].versions, 0u, "%s", t[i].name);
		cr_expect_eq(t[i].versions & ~PROTO_VALL, 0u, "%s", t[i].name);
		cr_expect_not_null(t[i].params, "%s", t[i].name);
		cr_expect_eq(t[i].kind == PROTO_NOTIFICATION,
		    t[i].result == NULL, "%s", t[i].name);
		cr_expect_eq(t[i].cap == NULL, t[i].cap_side == 0, "%s",
		    t[i].name);
		for (j = i + 1; j < n; j++) {
			if (strcmp(t[i].name, t[j].name) != 0)
				continue;
			cr_expect_eq(t[i].versions & t[j].versions, 0u,
			    "%s rows overlap", t[i].name);
			cr_expect(j == i + 1 || strcmp(t[j - 1].name,
			    t[i].name) == 0, "%s rows apart", t[i].name);
		}
		/* Every row is found again by its own name. */
		cr_expect_eq(proto_method(t[i].name, (enum proto_version)
		    __builtin_ctz(t[i].versions)), &t[i], "%s", t[i].name);
	}
}

static const struct {
	const char	*caps;
	const char	*path;
	int		 has;
} caps_cases[] = {
	{ "{\"tools\":{}}", "tools", 1 },
	{ "{\"tools\":{}}", "tools.listChanged", 0 },
	{ "{\"tools\":{\"listChanged\":true}}", "tools.listChanged", 1 },
	{ "{\"tools\":{\"listChanged\":false}}", "tools.listChanged", 0 },
	{ "{\"tools\":true}", "tools", 1 },	/* meant; the shape check objects */
	{ "{\"tools\":null}", "tools", 0 },
	{ "{\"resources\":{\"subscribe\":true}}", "resources.subscribe", 1 },
	{ "{\"elicitation\":{\"url\":{}}}", "elicitation.url", 1 },
	{ "{}", "sampling", 0 },
	{ "{\"tasks\":{\"list\":{}}}", "tasks.list", 1 },
	{ "[]", "tools", 0 },
};

Test(protocol, caps_has, .timeout = UNIT_TIMEOUT)
{
	json_t	*caps;
	size_t	 i;

	for (i = 0; i < sizeof caps_cases / sizeof caps_cases[0]; i++) {
		caps = json_loads(caps_cases[i].caps, 0, NULL);
		cr_assert_not_null(caps);
		cr_expect_eq(proto_caps_has(caps, caps_cases[i].path),
		    caps_cases[i].has, "%s in %s", caps_cases[i].path,
		    caps_cases[i].caps);
		json_decref(caps);
	}
	cr_expect_eq(proto_caps_has(NULL, "tools"), 0);
}

Test(protocol, findings_list, .timeout = UNIT_TIMEOUT)
{
	struct proto_findings	l;
	size_t			i;

	proto_findings_init(&l);
	proto_report(proto_findings_add_cb, &l, "shape.required",
	    PROTO_ERROR, "$.params", "2025-06-18 schema.ts: CallToolRequest",
	    "the member \"%s\" is required", "name");
	cr_assert_eq(l.n, 1);
	cr_expect_str_eq(l.v[0].rule, "shape.required");
	cr_expect_str_eq(l.v[0].path, "$.params");
	cr_expect_str_eq(l.v[0].text, "the member \"name\" is required");
	cr_expect_str_eq(proto_severity_name(l.v[0].severity), "error");
	for (i = 0; i < PROTO_FINDINGS_MAX + 5; i++)
		proto_report(proto_findings_add_cb, &l, "x", PROTO_NOTE, NULL,
		    NULL, "%zu", i);
	cr_expect_eq(l.n, PROTO_FINDINGS_MAX);
	cr_expect_eq(l.dropped, 6);
	cr_expect_str_eq(l.v[1].path, "$");
	proto_findings_clear(&l);
	cr_expect_eq(l.n, 0);
}

/*
 * Messages checked under a revision: each either checks clean (rule NULL)
 * or gets exactly one finding, with this rule at this path.
 */
#define V1	PROTO_V_2024_11_05
#define V2	PROTO_V_2025_03_26
#define V3	PROTO_V_2025_06_18
#define V4	PROTO_V_2025_11_25
#define V5	PROTO_V_2026_07_28
#define VU	PROTO_V_UNKNOWN

/* The _meta every 2026-07-28 request carries. */
#define META5	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

static const struct {
	enum proto_version	 v;
	const char		*msg;
	const char		*request;	/* for a response */
	const char		*rule;		/* NULL: clean */
	const char		*path;
} message_cases[] = {
	/* jsonrpc.version */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL,
	  NULL, NULL },
	{ V3, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", NULL,
	  "jsonrpc.version", "$.jsonrpc" },
	{ V3, "{\"id\":1,\"method\":\"ping\"}", NULL, "jsonrpc.version", "$" },
	{ VU, "{\"jsonrpc\":2,\"id\":1,\"method\":\"x\"}", NULL,
	  "jsonrpc.version", "$.jsonrpc" },
	/* jsonrpc.invalid */
	{ V3, "\"ping\"", NULL, "jsonrpc.invalid", "$" },
	/* jsonrpc.method */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", NULL,
	  "jsonrpc.method", "$.method" },
	/* jsonrpc.id */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}", NULL,
	  NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", NULL,
	  "jsonrpc.id", "$.id" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", NULL,
	  "jsonrpc.id", "$.id" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", NULL,
	  "jsonrpc.id", "$.id" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}", NULL,
	  "jsonrpc.id", "$.id" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"result\":{}}", NULL, "jsonrpc.id", "$" },
	/* an error without id: allowed from 2025-11-25 on */
	{ V3, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
	  "\"x\"}}", NULL, "jsonrpc.id", "$" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
	  "\"x\"}}", NULL, NULL, NULL },
	/* jsonrpc.result-xor-error */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":"
	  "{\"code\":1,\"message\":\"x\"}}", NULL, "jsonrpc.result-xor-error",
	  "$" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1}", NULL,
	  "jsonrpc.result-xor-error", "$" },
	/* jsonrpc.error, error-code, error-message */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
	  "\"message\":\"no\",\"data\":[1]}}", NULL, NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}", NULL,
	  "jsonrpc.error", "$.error" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"-1\","
	  "\"message\":\"no\"}}", NULL, "jsonrpc.error-code", "$.error.code" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1.5,"
	  "\"message\":\"no\"}}", NULL, "jsonrpc.error-code", "$.error.code" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1}}", NULL,
	  "jsonrpc.error-message", "$.error.message" },
	/* jsonrpc.members */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"result\":"
	  "{}}", NULL, "jsonrpc.members", "$" },
	/* jsonrpc.kind */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	  "\"notifications/initialized\"}", NULL, "jsonrpc.kind", "$.id" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}", NULL,
	  "jsonrpc.kind", "$" },
	/* jsonrpc.batch: only 2025-03-26 */
	{ V2, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
	  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]",
	  NULL, NULL, NULL },
	{ V1, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", NULL,
	  "jsonrpc.batch", "$" },
	{ V3, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", NULL,
	  "jsonrpc.batch", "$" },
	{ V2, "[]", NULL, "jsonrpc.batch", "$" },
	{ V2, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},3]", NULL,
	  "jsonrpc.invalid", "$[1]" },
	/* shape.unknown-method, per revision */
	{ V2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{}}", NULL, "shape.unknown-method", "$.method" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{}}}}", NULL, NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL,
	  "shape.unknown-method", "$.method" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}",
	  NULL, "shape.unknown-method", "$.method" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/cal\"}", NULL,
	  "shape.unknown-method", "$.method" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/list\"}", NULL,
	  NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/list\"}", NULL,
	  "shape.unknown-method", "$.method" },
	/* shape.required */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	  "\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":1}}}", NULL,
	  NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	  "\"params\":{\"arguments\":{}}}", NULL, "shape.required",
	  "$.params" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", NULL,
	  "shape.required", "$" },
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}",
	  "tools/call", NULL, NULL },
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "tools/call",
	  "shape.required", "$.result" },
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", NULL, NULL,
	  NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
	  "\"a\",\"inputSchema\":{\"type\":\"object\"}},{\"inputSchema\":"
	  "{\"type\":\"object\"}}]}}", "tools/list", "shape.required",
	  "$.result.tools[1]" },
	/* resultType: required in 2026-07-28 */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}",
	  "tools/call", "shape.required", "$.result" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"content\":[]}}", "tools/call", NULL, NULL },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}",
	  "tools/call", NULL, NULL },
	/* 2026-07-28: _meta with the revision and capabilities */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	  "\"params\":{" META5 "}}", NULL, NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL,
	  "shape.required", "$" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	  "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	  "\"2026-07-28\"}}}", NULL, "shape.required", "$.params._meta" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL,
	  NULL, NULL },
	/* input_required */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"input_required\",\"inputRequests\":{\"k\":{\"method\":"
	  "\"elicitation/create\",\"params\":{\"mode\":\"form\",\"message\":"
	  "\"m\",\"requestedSchema\":{\"type\":\"object\",\"properties\":"
	  "{\"n\":{\"type\":\"string\"}}}}}},\"requestState\":\"s\"}}",
	  "tools/call", NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"input_required\",\"inputRequests\":{\"k\":{\"method\":"
	  "\"elicitation/create\",\"params\":{\"message\":\"m\"}}}}}",
	  "tools/call", "shape.required", "$.result.inputRequests.k.params" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"input_required\",\"inputRequests\":{\"k\":{\"method\":"
	  "\"ping\"}}}}", "tools/call", "shape.enum",
	  "$.result.inputRequests.k.method" },
	/* shape.type */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	  "\"params\":{\"name\":5}}", NULL, "shape.type", "$.params.name" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	  "\"params\":[]}", NULL, "shape.type", "$.params" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}", "tools/call",
	  "shape.type", "$.result" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":{}}}",
	  "tools/call", "shape.type", "$.result.content" },
	/* structuredContent: an object until 2025-11-25, anything after */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],"
	  "\"structuredContent\":{\"a\":1}}}", "tools/call", NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],"
	  "\"structuredContent\":[1]}}", "tools/call", "shape.type",
	  "$.result.structuredContent" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"content\":[],\"structuredContent\":[1]}}",
	  "tools/call", NULL, NULL },
	/* shape.enum: audio content from 2025-03-26 on */
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"audio\",\"data\":\"AAAA\",\"mimeType\":\"audio/wav\"}]}}",
	  "tools/call", "shape.enum", "$.result.content[0].type" },
	{ V2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"audio\",\"data\":\"AAAA\",\"mimeType\":\"audio/wav\"}]}}",
	  "tools/call", NULL, NULL },
	{ V2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\"}]}}",
	  "tools/call", "shape.enum", "$.result.content[0].type" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"resource_link\",\"uri\":\"file:///a\",\"name\":\"a\"}]}}",
	  "tools/call", NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"text\":\"a\"}]}}", "tools/call", "shape.required",
	  "$.result.content[0]" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"text\"}]}}", "tools/call", "shape.required",
	  "$.result.content[0]" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	  "\"params\":{\"level\":\"loud\",\"data\":1}}", NULL, "shape.enum",
	  "$.params.level" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":"
	  "\"maybe\"}}", "elicitation/create", "shape.enum",
	  "$.result.action" },
	/* shape.const */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
	  "\"a\",\"inputSchema\":{\"type\":\"array\"}}]}}", "tools/list",
	  "shape.const", "$.result.tools[0].inputSchema.type" },
	/* 2026-07-28 dropped the type of outputSchema */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"ttlMs\":0,\"cacheScope\":\"public\",\"tools\":[{"
	  "\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"},"
	  "\"outputSchema\":{\"type\":\"array\"}}]}}", "tools/list", NULL,
	  NULL },
	/* shape.integer */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	  "\"sampling/createMessage\",\"params\":{\"messages\":[],"
	  "\"maxTokens\":10.5}}", NULL, "shape.integer", "$.params.maxTokens" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	  "\"sampling/createMessage\",\"params\":{\"messages\":[],"
	  "\"maxTokens\":100}}", NULL, NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	  "\"params\":{\"progressToken\":1,\"progress\":0.5}}", NULL, NULL,
	  NULL },
	/* shape.format (a warning) */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
	  "\"params\":{\"uri\":\"not a uri\"}}", NULL, "shape.format",
	  "$.params.uri" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"image\",\"data\":\"a?b\",\"mimeType\":\"image/png\"}]}}",
	  "tools/call", "shape.format", "$.result.content[0].data" },
	/* 2025-11-25: a task instead of the result */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"taskId\":"
	  "\"t\",\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":"
	  "\"x\",\"ttl\":null}}}", "tools/call", NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"taskId\":"
	  "\"t\",\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":"
	  "\"x\",\"ttl\":null}}}", "tools/call", "shape.required",
	  "$.result" },
	/* cancelled: requestId optional only in 2025-11-25 */
	{ V4, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	  "\"params\":{}}", NULL, NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	  "\"params\":{}}", NULL, "shape.required", "$.params" },
	/* Names: title from 2025-06-18, required name from BaseMetadata */
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	  "\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
	  "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}", NULL, NULL,
	  NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	  "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
	  "\"clientInfo\":{\"version\":\"1\"}}}", NULL, "shape.required",
	  "$.params.clientInfo" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	  "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":"
	  "{\"roots\":{\"listChanged\":\"yes\"}},\"clientInfo\":{\"name\":"
	  "\"c\",\"version\":\"1\"}}}", NULL, "shape.type",
	  "$.params.capabilities.roots.listChanged" },
	/* member names that are no identifiers */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	  "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	  "3,\"io.modelcontextprotocol/clientCapabilities\":{}}}}", NULL,
	  "shape.type",
	  "$.params._meta['io.modelcontextprotocol/protocolVersion']" },
	/* shape.format passes */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
	  "\"params\":{\"uri\":\"test://static/resource/1\"}}", NULL, NULL,
	  NULL },
	/* progress message: from 2025-03-26 (an open object before: fine) */
	{ V1, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	  "\"params\":{\"progressToken\":\"t\",\"progress\":1,\"message\":"
	  "\"x\"}}", NULL, NULL, NULL },
	{ V2, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	  "\"params\":{\"progressToken\":\"t\",\"progress\":1,\"message\":"
	  "2}}", NULL, "shape.type", "$.params.message" },
	{ V2, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	  "\"params\":{\"progressToken\":true,\"progress\":1}}", NULL,
	  "shape.type", "$.params.progressToken" },
	/* tool annotations: from 2025-03-26 */
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
	  "\"a\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":"
	  "{\"readOnlyHint\":\"yes\"}}]}}", "tools/list", NULL, NULL },
	{ V2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
	  "\"a\",\"inputSchema\":{\"type\":\"object\"},\"annotations\":"
	  "{\"readOnlyHint\":\"yes\"}}]}}", "tools/list", "shape.type",
	  "$.result.tools[0].annotations.readOnlyHint" },
	/* URL-mode elicitation: 2025-11-25 on, with elicitationId there */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"mode\":\"url\",\"message\":\"m\",\"elicitationId\":"
	  "\"e\",\"url\":\"https://x.example/a\"}}", NULL, NULL, NULL },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"mode\":\"url\",\"message\":\"m\",\"url\":"
	  "\"https://x.example/a\"}}", NULL, "shape.required", "$.params" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"mode\":\"url\",\"message\":\"m\",\"elicitationId\":"
	  "\"e\",\"url\":\"https://x.example/a\"}}", NULL, "shape.required",
	  "$.params" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"mode\":\"popup\",\"message\":\"m\"}}", NULL,
	  "shape.enum", "$.params.mode" },
	/* multi-select enums: 2025-11-25 on */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"c\":{\"type\":\"array\",\"items\":"
	  "{\"type\":\"string\",\"enum\":[\"a\"]}}}}}}", NULL, NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"c\":{\"type\":\"array\",\"items\":"
	  "{\"type\":\"string\",\"enum\":[\"a\"]}}}}}}", NULL, "shape.enum",
	  "$.params.requestedSchema.properties.c.type" },
	/* task integers */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"taskId\":\"t\","
	  "\"status\":\"working\",\"createdAt\":\"x\",\"lastUpdatedAt\":\"x\","
	  "\"ttl\":60000,\"pollInterval\":0.5}}", "tasks/get", "shape.integer",
	  "$.result.pollInterval" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"taskId\":\"t\","
	  "\"status\":\"paused\",\"createdAt\":\"x\",\"lastUpdatedAt\":\"x\","
	  "\"ttl\":null}}", "tasks/get", "shape.enum", "$.result.status" },
	/* 2026-07-28: cacheable results, discover, listen */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"cacheScope\":\"public\",\"tools\":[]}}", "tools/list",
	  "shape.required", "$.result" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"ttlMs\":1.5,\"cacheScope\":\"public\",\"tools\":[]}}",
	  "tools/list", "shape.integer", "$.result.ttlMs" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"ttlMs\":0,\"cacheScope\":\"shared\",\"tools\":[]}}",
	  "tools/list", "shape.enum", "$.result.cacheScope" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"ttlMs\":0,\"cacheScope\":\"private\","
	  "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{}}}",
	  "server/discover", NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"_meta\":{}}}", "subscriptions/listen",
	  "shape.required", "$.result._meta" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"method\":"
	  "\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":"
	  "{\"io.modelcontextprotocol/subscriptionId\":\"l\"},"
	  "\"notifications\":{\"toolsListChanged\":true}}}", NULL, NULL, NULL },
	{ V4, "{\"jsonrpc\":\"2.0\",\"method\":"
	  "\"notifications/subscriptions/acknowledged\",\"params\":{}}", NULL,
	  "shape.unknown-method", "$.method" },
	/* 2026-07-28 retry with inputResponses */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	  "\"params\":{" META5 ",\"name\":\"c\",\"inputResponses\":{\"k\":"
	  "{\"action\":\"accept\",\"content\":{\"ok\":true}}},\"requestState\":"
	  "\"s\"}}", NULL, NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	  "\"params\":{" META5 ",\"name\":\"c\",\"requestState\":7}}", NULL,
	  "shape.type", "$.params.requestState" },
	/* sampling content: one block until 2025-06-18, also an array after */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"role\":"
	  "\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],"
	  "\"model\":\"m\"}}", "sampling/createMessage", "shape.type",
	  "$.result.content" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"role\":"
	  "\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"}],"
	  "\"model\":\"m\"}}", "sampling/createMessage", NULL, NULL },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"role\":"
	  "\"robot\",\"content\":{\"type\":\"text\",\"text\":\"a\"},"
	  "\"model\":\"m\"}}", "sampling/createMessage", "shape.enum",
	  "$.result.role" },
	/* strings compared by length: a NUL inside is not the end */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
	  "\"type\":\"text\\u0000x\",\"text\":\"a\"}]}}", "tools/call",
	  "shape.enum", "$.result.content[0].type" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\u0000\"}", NULL,
	  "shape.unknown-method", "$.method" },
	{ V3, "{\"jsonrpc\":\"2.0\\u0000\",\"id\":1,\"method\":\"ping\"}", NULL,
	  "jsonrpc.version", "$.jsonrpc" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
	  "\"a\",\"inputSchema\":{\"type\":\"object\\u0000\"}}]}}",
	  "tools/list", "shape.const", "$.result.tools[0].inputSchema.type" },
	/* a format fault inside a union: reported, and it does not decide
	   the alternative (found by the differential run against the SDK) */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[{"
	  "\"uri\":\"a:b\",\"blob\":\"zz-not-base64\"}]}}", "resources/read",
	  "shape.format", "$.result.contents[0].blob" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[{"
	  "\"uri\":\"nope\",\"text\":\"t\"}]}}", "resources/read",
	  "shape.format", "$.result.contents[0].uri" },
	/* the tasks capabilities' inner objects */
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":"
	  "\"2025-11-25\",\"capabilities\":{\"tasks\":{\"requests\":{\"tools\":"
	  "7}}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}",
	  "initialize", "shape.type", "$.result.capabilities.tasks.requests.tools" },
	/* shape.file-uri: a root must start with file:// (every revision) */
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"roots\":[{\"uri\":"
	  "\"file:///home/a\"}]}}", "roots/list", NULL, NULL },
	{ V1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"roots\":[{\"uri\":"
	  "\"https://a.example/\"}]}}", "roots/list", "shape.file-uri",
	  "$.result.roots[0].uri" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"input_required\",\"inputRequests\":{}}}", "tools/call", NULL,
	  NULL },
	/* an error answers any method; the unknown revision: envelope only */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
	  "\"message\":\"no\"}}", "tools/call", NULL, NULL },
	/* errors whose data has a shape: -32022 and -32021 in 2026-07-28,
	   -32042 in 2025-11-25 */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,"
	  "\"message\":\"unsupported\",\"data\":{\"supported\":"
	  "[\"2026-07-28\"],\"requested\":\"1.0\"}}}", "tools/call", NULL,
	  NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,"
	  "\"message\":\"unsupported\"}}", "tools/call", "shape.required",
	  "$.error" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,"
	  "\"message\":\"unsupported\",\"data\":{\"supported\":\"2026-07-28\","
	  "\"requested\":\"1.0\"}}}", NULL, "shape.type",
	  "$.error.data.supported" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,"
	  "\"message\":\"unsupported\"}}", NULL, NULL, NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32021,"
	  "\"message\":\"missing\",\"data\":{}}}", NULL, "shape.required",
	  "$.error.data" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32042,"
	  "\"message\":\"go to a URL\",\"data\":{\"elicitations\":[{\"mode\":"
	  "\"url\",\"message\":\"m\",\"elicitationId\":\"e\",\"url\":"
	  "\"https://a.example/\"}]}}}", NULL, NULL, NULL },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32042,"
	  "\"message\":\"go to a URL\",\"data\":{\"elicitations\":[{\"mode\":"
	  "\"url\",\"message\":\"m\",\"url\":\"https://a.example/\"}]}}}", NULL,
	  "shape.required", "$.error.data.elicitations[0]" },
	{ VU, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", NULL,
	  NULL, NULL },
	{ VU, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "tools/call",
	  NULL, NULL },
};

/* Like message_cases, and the finding's text says this. */
static const struct {
	enum proto_version	 v;
	const char		*msg;
	const char		*request;	/* for a response */
	const char		*rule;		/* NULL: clean */
	const char		*path;
	const char		*text;		/* in the text, or NULL */
} text_cases[] = {
	/* a member inherited through two bases is checked once:
	   ListToolsResult gets resultType from PaginatedResult and
	   CacheableResult, both from Result */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[],"
	  "\"ttlMs\":1,\"cacheScope\":\"public\"}}", "tools/list",
	  "shape.required", "$.result", "\"resultType\" is required" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
	  "\"params\":{\"uri\":\"file:///a\",\"_meta\":{"
	  "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
	  NULL, "shape.required", "$.params._meta",
	  "io.modelcontextprotocol/clientCapabilities" },
	/* a member taking a choice of strings is no discriminator: its
	   wrong or missing value is its own fault */
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"contents\":[],\"ttlMs\":1}}", "resources/read",
	  "shape.required", "$.result", "\"cacheScope\" is required" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":"
	  "\"complete\",\"contents\":[],\"ttlMs\":1,\"cacheScope\":"
	  "\"shared\"}}", "resources/read", "shape.enum",
	  "$.result.cacheScope", "\"shared\" is not one of" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	  "\"params\":{" META5 ",\"name\":\"c\",\"inputResponses\":{\"a\":"
	  "{\"action\":\"accepted\"}}}}", NULL, "shape.enum",
	  "$.params.inputResponses.a.action", "\"accepted\" is not one of" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"h\":{\"type\":\"string\","
	  "\"format\":\"hostname\"}}}}}", NULL, "shape.enum",
	  "$.params.requestedSchema.properties.h.format",
	  "\"hostname\" is not one of" },
	{ V4, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"h\":{\"type\":\"string\","
	  "\"format\":\"hostname\"}}}}}", NULL, "shape.enum",
	  "$.params.requestedSchema.properties.h.format",
	  "\"hostname\" is not one of" },
	/* the discriminator names one alternative: its faults are told */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"n\":{\"type\":\"integer\","
	  "\"minimum\":\"0\"}}}}}", NULL, "shape.type",
	  "$.params.requestedSchema.properties.n.minimum", NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\","
	  "\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":"
	  "\"object\",\"properties\":{\"n\":{\"type\":\"date\"}}}}}",
	  NULL, "shape.enum", "$.params.requestedSchema.properties.n.type",
	  "\"date\" is not a type" },
	/* an error code written as a whole real is that integer */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600.0,"
	  "\"message\":\"bad\"}}", NULL, NULL, NULL, NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600.5,"
	  "\"message\":\"bad\"}}", NULL, "jsonrpc.error-code", "$.error.code",
	  NULL },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1e300,"
	  "\"message\":\"bad\"}}", NULL, "jsonrpc.error-code", "$.error.code",
	  NULL },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022.0,"
	  "\"message\":\"unsupported\"}}", "tools/call", "shape.required",
	  "$.error", NULL },
	/* a null id: JSON-RPC's answer to a request it could not read */
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	  "\"message\":\"parse error\"}}", NULL, "jsonrpc.null-id", "$.id",
	  "JSON-RPC 2.0" },
	{ V5, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
	  "\"message\":\"invalid\"}}", NULL, "jsonrpc.null-id", "$.id",
	  "RequestId" },
	{ V3, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32601,"
	  "\"message\":\"no\"}}", NULL, "jsonrpc.id", "$.id", NULL },
};

/* Check one message: clean (rule NULL), or one finding as said. */
static void
check_case(const char *table, size_t i, enum proto_version v,
    const char *text, const char *request, const char *rule,
    const char *path, const char *says)
{
	struct proto_findings	 l;
	json_error_t		 err;
	json_t			*msg;
	size_t			 j, n;

	msg = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	cr_assert_not_null(msg, "%s %zu: %s", table, i, err.text);
	proto_findings_init(&l);
	n = proto_check_message(v, msg, request, proto_findings_add_cb, &l);
	cr_expect_eq(n, l.n);
	if (rule == NULL) {
		for (j = 0; j < l.n; j++)
			cr_expect_fail("%s %zu (%s): unexpected %s at %s: %s",
			    table, i, proto_version_name(v), l.v[j].rule,
			    l.v[j].path, l.v[j].text);
	} else if (l.n != 1 || strcmp(l.v[0].rule, rule) != 0 ||
	    strcmp(l.v[0].path, path) != 0 || (says != NULL &&
	    strstr(l.v[0].text, says) == NULL)) {
		cr_expect_fail("%s %zu (%s): expected one %s at %s (saying "
		    "%s), got %zu", table, i, proto_version_name(v), rule,
		    path, says != NULL ? says : "anything", l.n);
		for (j = 0; j < l.n; j++)
			cr_log_info("  %s at %s: %s (%s)", l.v[j].rule,
			    l.v[j].path, l.v[j].text, l.v[j].spec);
	}
	proto_findings_clear(&l);
	json_decref(msg);
}

/* Collect findings. */
Test(protocol, messages, .timeout = UNIT_TIMEOUT)
{
	size_t	i;

	for (i = 0; i < sizeof message_cases / sizeof message_cases[0]; i++)
		check_case("case", i, message_cases[i].v, message_cases[i].msg,
		    message_cases[i].request, message_cases[i].rule,
		    message_cases[i].path, NULL);
	for (i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++)
		check_case("text case", i, text_cases[i].v, text_cases[i].msg,
		    text_cases[i].request, text_cases[i].rule,
		    text_cases[i].path, text_cases[i].text);
}

/*
 * No silent gaps: every method of every revision has its params and (for
 * a request) its result shape, and every name they use means something
 * in that revision.  (Loading the shapes checks the same and stops the
 * program naming the line; this says it as a test.)
 */
Test(protocol, every_method_has_shapes, .timeout = UNIT_TIMEOUT)
{
	const struct shapes		*sh = defs_get();
	const struct proto_method	*t;
	size_t				 n, i, rows = 0;
	int				 v;

	t = proto_methods(&n);
	for (i = 0; i < n; i++) {
		for (v = 1; v < PROTO_V_MAX; v++) {
			if ((t[i].versions & PROTO_VBIT(v)) == 0)
				continue;
			rows++;
			cr_assert_not_null(sh->params[i], "%s", t[i].name);
			if (sh->params[i]->kind == ST_REF)
				cr_expect_neq(sh->params[i]->ref[v], -1,
				    "%s params in %s", t[i].name,
				    proto_version_name((enum proto_version)v));
			if (t[i].kind == PROTO_NOTIFICATION)
				continue;
			cr_assert_not_null(sh->result[i], "%s", t[i].name);
			if (sh->result[i]->kind == ST_REF)
				cr_expect_neq(sh->result[i]->ref[v], -1,
				    "%s result in %s", t[i].name,
				    proto_version_name((enum proto_version)v));
		}
	}
	/* 24 + 24 + 25 + 31 + 21 methods in the five revisions. */
	cr_expect_eq(rows, 125, "%zu", rows);
}

/* A shape that does not fit: each alternative of a union is tried. */
Test(protocol, shape_fits, .timeout = UNIT_TIMEOUT)
{
	const struct shapes	*sh = defs_get();
	const struct sdef	*d;
	json_t			*ok, *bad;
	struct stype		 ref;
	int			 v;

	d = defs_find(sh, "ContentBlock", PROTO_V_2025_06_18);
	cr_assert_not_null(d);
	cr_assert_null(defs_find(sh, "AudioContent", PROTO_V_2024_11_05));
	memset(&ref, 0, sizeof ref);
	ref.kind = ST_REF;
	for (v = 0; v < PROTO_V_MAX; v++)
		ref.ref[v] = (int)(d - sh->defs);
	ok = json_pack("{s:s, s:s}", "type", "text", "text", "hi");
	bad = json_pack("{s:s}", "type", "text");
	cr_expect(shape_fits(PROTO_V_2025_06_18, &ref, ok));
	cr_expect(!shape_fits(PROTO_V_2025_06_18, &ref, bad));
	json_decref(ok);
	json_decref(bad);
}

/* A name with a NUL inside is no method (found by fuzz_protocol). */
Test(protocol, method_name_with_nul, .timeout = UNIT_TIMEOUT)
{
	static const char name[] = "tools/call\0tools/call";

	cr_expect_null(proto_method_n(name, sizeof name - 1,
	    PROTO_V_2025_06_18));
	cr_expect_null(proto_method_n(name, sizeof name - 1, PROTO_V_UNKNOWN));
	cr_expect_not_null(proto_method_n(name, 10, PROTO_V_2025_06_18));
}

/*
 * A hostile message: 1000 broken tools get 100 findings (the cap), and a
 * key of 10 000 bytes a path cut to its bound.
 */
Test(protocol, hostile_bounds, .timeout = UNIT_TIMEOUT)
{
	struct proto_findings	 l;
	json_t			*msg, *tools, *args;
	char			*key;
	size_t			 i, n;

	tools = json_array();
	for (i = 0; i < 1000; i++)
		json_array_append_new(tools, json_pack("{s:{s:s}}",
		    "inputSchema", "type", "object"));
	msg = json_pack("{s:s, s:i, s:{s:o}}", "jsonrpc", "2.0", "id", 1,
	    "result", "tools", tools);
	proto_findings_init(&l);
	n = proto_check_message(PROTO_V_2025_06_18, msg, "tools/list",
	    proto_findings_add_cb, &l);
	cr_expect_eq(n, 100);
	cr_expect_eq(l.n, 100);
	cr_expect_str_eq(l.v[99].path, "$.result.tools[99]");
	proto_findings_clear(&l);
	json_decref(msg);

	key = malloc(10001);
	cr_assert_not_null(key);
	memset(key, 'k', 10000);
	key[10000] = '\0';
	args = json_object();
	json_object_set_new(args, key, json_integer(1));
	msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0",
	    "id", 1, "method", "prompts/get", "params", "name", "p",
	    "arguments", args);
	n = proto_check_message(PROTO_V_2025_06_18, msg, NULL,
	    proto_findings_add_cb, &l);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(l.v[0].rule, "shape.type");
	cr_expect_lt(strlen(l.v[0].path), 512);
	cr_expect(strlen(l.v[0].path) > 3 && strcmp(l.v[0].path +
	    strlen(l.v[0].path) - 3, "...") == 0, "%s", l.v[0].path);
	proto_findings_clear(&l);
	json_decref(msg);
	free(key);
}

/* Whether a string is well-formed UTF-8 all through. */
static int
valid_utf8(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + strlen(s);
	size_t			 n;

	while (p < end) {
		if ((n = scan_utf8_len(p, end)) == 0)
			return (0);
		p += n;
	}
	return (1);
}

/*
 * Text cut to a bound is cut between characters: a quoted value (60
 * bytes) and a path (512) of two-byte characters stay valid UTF-8.
 */
Test(protocol, utf8_cuts, .timeout = UNIT_TIMEOUT)
{
	struct proto_findings	 l;
	json_t			*msg, *args;
	char			 uri[82], *key;
	size_t			 i, n;

	/* 'a' then 40 times U+00E9: byte 60 is inside a character. */
	uri[0] = 'a';
	for (i = 0; i < 40; i++)
		memcpy(uri + 1 + 2 * i, "\xc3\xa9", 2);
	uri[81] = '\0';
	msg = json_pack("{s:s, s:i, s:s, s:{s:s}}", "jsonrpc", "2.0", "id", 1,
	    "method", "resources/read", "params", "uri", uri);
	cr_assert_not_null(msg);
	proto_findings_init(&l);
	n = proto_check_message(PROTO_V_2025_06_18, msg, NULL,
	    proto_findings_add_cb, &l);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(l.v[0].rule, "shape.format");
	cr_expect(valid_utf8(l.v[0].text), "%s", l.v[0].text);
	proto_findings_clear(&l);
	json_decref(msg);

	for (n = 0; n < 2; n++) {
		/* a key of 1 + 2 * 600 bytes; and one byte shorter,
		   so that either parity of cut is tried */
		key = malloc(1202);
		cr_assert_not_null(key);
		key[0] = 'k';
		for (i = 0; i < 600; i++)
			memcpy(key + 1 + 2 * i, "\xc3\xa9", 2);
		key[1201 - n] = '\0';
		if (n == 1)
			key[1199] = '\0';
		args = json_object();
		json_object_set_new(args, key + n, json_integer(1));
		msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc",
		    "2.0", "id", 1, "method", "prompts/get", "params", "name",
		    "p", "arguments", args);
		cr_assert_not_null(msg);
		cr_assert_eq(proto_check_message(PROTO_V_2025_06_18, msg, NULL,
		    proto_findings_add_cb, &l), 1);
		cr_expect_lt(strlen(l.v[0].path), 512);
		cr_expect(valid_utf8(l.v[0].path), "%s", l.v[0].path);
		proto_findings_clear(&l);
		json_decref(msg);
		free(key);
	}
}

/*
 * Load a text in the form of mcp.def in a child (a mistake stops the
 * program); returns what it wrote to stderr, and whether it stopped.
 */
static char *
load_bad(const char *text, int *stopped)
{
	static char	out[1024];
	int		fd[2], status;
	size_t		o = 0;
	ssize_t		r;
	pid_t		pid;

	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		defs_load_text(text);
		_exit(0);
	}
	close(fd[1]);
	while (o < sizeof out - 1 &&
	    (r = read(fd[0], out + o, sizeof out - 1 - o)) > 0)
		o += (size_t)r;
	out[o] = '\0';
	close(fd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	*stopped = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return (out);
}

/*
 * Mistakes in mcp.def stop the program naming the line: a cycle of named
 * types (which would recurse forever when walked), a member after an
 * error or type line, a reversed revision range, a name never defined.
 * A good text loads.
 */
static const struct {
	const char	*text;
	const char	*says;		/* NULL: it loads */
} load_cases[] = {
	{ "def A\n  x string\nerror 5 = string\n", NULL },
	{ "type CycA = CycB\ntype CycB = CycA\n", "line 1" },
	{ "def A\n  x U\ntype U = CycA | string\ntype CycA = CycB\n"
	  "type CycB = CycA\n", "cycle" },
	{ "def A\n  x string\nerror 5 = string\n  y string\n", "line 4" },
	{ "def A\n  x string\ntype T = string\n  y string\n", "line 4" },
	{ "def A @2025-06-18..2024-11-05\n", "near \"2025-06-18" },
	{ "def A\n  x string\n  y Nope\n", "line 3" },
};

Test(protocol, load_mistakes, .timeout = UNIT_TIMEOUT)
{
	const char	*out;
	size_t		 i;
	int		 stopped;

	for (i = 0; i < sizeof load_cases / sizeof load_cases[0]; i++) {
		out = load_bad(load_cases[i].text, &stopped);
		if (load_cases[i].says == NULL) {
			cr_expect(!stopped, "case %zu: %s", i, out);
			continue;
		}
		cr_expect(stopped, "case %zu loaded", i);
		cr_expect(strstr(out, load_cases[i].says) != NULL,
		    "case %zu: expected \"%s\" in: %s", i,
		    load_cases[i].says, out);
	}
}
