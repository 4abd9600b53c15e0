/*
 * What MCP says per revision (protocol/): the revisions, the method table
 * and findings.  Cases are data.
 */

#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "protocol.h"
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
	  PROTO_SERVER, "tools", "CallToolResult", "2025-06-18 server/tools" },
	{ "resources/subscribe", PROTO_V_2024_11_05, PROTO_REQUEST,
	  PROTO_CLIENT, PROTO_SERVER, "resources.subscribe", "EmptyResult",
	  "2024-11-05 server/resources" },
	{ "resources/subscribe", PROTO_V_2026_07_28, NONE, 0, 0, NULL, NULL,
	  NULL },
	{ "sampling/createMessage", PROTO_V_2025_03_26, PROTO_REQUEST,
	  PROTO_SERVER, PROTO_CLIENT, "sampling", "CreateMessageResult",
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
	  PROTO_SERVER, PROTO_CLIENT, "elicitation", "ElicitResult",
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
