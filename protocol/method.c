/*
 * method.c: every method of every revision, who may send it and the
 * capability it needs, as one table a person can read against the
 * specification; looked up by name through a hash built once.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "protocol.h"

#define V1	PROTO_VBIT(PROTO_V_2024_11_05)
#define V2	PROTO_VBIT(PROTO_V_2025_03_26)
#define V3	PROTO_VBIT(PROTO_V_2025_06_18)
#define V4	PROTO_VBIT(PROTO_V_2025_11_25)
#define V5	PROTO_VBIT(PROTO_V_2026_07_28)
#define LEGACY	PROTO_VLEGACY
#define ALL	PROTO_VALL

#define REQ	PROTO_REQUEST
#define NOTE	PROTO_NOTIFICATION
#define INPUT	PROTO_INPUT
#define C	PROTO_CLIENT
#define S	PROTO_SERVER
#define BOTH	PROTO_BOTH
#define RECV	PROTO_RECEIVER

/*
 * The methods.  Rows of one name are next to each other and their
 * revisions never overlap.  The capability is the one the specification
 * names for the method: a request needs the receiver to have declared it,
 * a change notification needs its sender to have.  params and result are
 * types in the notation of mcp.def (docs/protocol.md): a result "Answer"
 * is every result the request may get (a task, an input_required);
 * pages are under
 * docs/specification/<revision>/.
 */
static const struct proto_method method_table[] = {
	/* name, revisions, kind, senders, cap side, cap, params, result,
	   page */

	/* Lifecycle: the handshake of the legacy revisions. */
	{ "initialize", LEGACY, REQ, C, 0, NULL,
	  "InitializeRequestParams", "InitializeResult", "basic/lifecycle" },
	{ "notifications/initialized", LEGACY, NOTE, C, 0, NULL,
	  "NotificationParams", NULL, "basic/lifecycle" },
	{ "server/discover", V5, REQ, C, 0, NULL,
	  "RequestParams", "DiscoverResult", "server/discover" },

	/* Utilities both sides share. */
	{ "ping", LEGACY, REQ, BOTH, 0, NULL,
	  "RequestParams", "EmptyResult", "basic/utilities/ping" },
	{ "notifications/cancelled", LEGACY, NOTE, BOTH, 0, NULL,
	  "CancelledNotificationParams", NULL, "basic/utilities/cancellation" },
	{ "notifications/cancelled", V5, NOTE, BOTH, 0, NULL,
	  "CancelledNotificationParams", NULL, "basic/patterns/cancellation" },
	{ "notifications/progress", LEGACY, NOTE, BOTH, 0, NULL,
	  "ProgressNotificationParams", NULL, "basic/utilities/progress" },
	{ "notifications/progress", V5, NOTE, S, 0, NULL,
	  "ProgressNotificationParams", NULL, "basic/patterns/progress" },

	/* Resources. */
	{ "resources/list", ALL, REQ, C, S, "resources",
	  "PaginatedRequestParams", "ListResourcesResult", "server/resources" },
	{ "resources/templates/list", ALL, REQ, C, S, "resources",
	  "PaginatedRequestParams", "ListResourceTemplatesResult",
	  "server/resources" },
	{ "resources/read", ALL, REQ, C, S, "resources",
	  "ReadResourceRequestParams", "ReadResourceAnswer",
	  "server/resources" },
	{ "resources/subscribe", LEGACY, REQ, C, S, "resources.subscribe",
	  "SubscribeRequestParams", "EmptyResult", "server/resources" },
	{ "resources/unsubscribe", LEGACY, REQ, C, S, "resources.subscribe",
	  "UnsubscribeRequestParams", "EmptyResult", "server/resources" },
	{ "notifications/resources/list_changed", ALL, NOTE, S, S,
	  "resources.listChanged", "NotificationParams", NULL,
	  "server/resources" },
	{ "notifications/resources/updated", ALL, NOTE, S, S,
	  "resources.subscribe", "ResourceUpdatedNotificationParams", NULL,
	  "server/resources" },
	{ "subscriptions/listen", V5, REQ, C, 0, NULL,
	  "SubscriptionsListenRequestParams", "SubscriptionsListenResult",
	  "basic/patterns/subscriptions" },
	{ "notifications/subscriptions/acknowledged", V5, NOTE, S, 0, NULL,
	  "SubscriptionsAcknowledgedNotificationParams", NULL,
	  "basic/patterns/subscriptions" },

	/* Prompts. */
	{ "prompts/list", ALL, REQ, C, S, "prompts",
	  "PaginatedRequestParams", "ListPromptsResult", "server/prompts" },
	{ "prompts/get", ALL, REQ, C, S, "prompts",
	  "GetPromptRequestParams", "GetPromptAnswer", "server/prompts" },
	{ "notifications/prompts/list_changed", ALL, NOTE, S, S,
	  "prompts.listChanged", "NotificationParams", NULL,
	  "server/prompts" },

	/* Tools. */
	{ "tools/list", ALL, REQ, C, S, "tools",
	  "PaginatedRequestParams", "ListToolsResult", "server/tools" },
	{ "tools/call", ALL, REQ, C, S, "tools",
	  "CallToolRequestParams", "CallToolAnswer", "server/tools" },
	{ "notifications/tools/list_changed", ALL, NOTE, S, S,
	  "tools.listChanged", "NotificationParams", NULL, "server/tools" },

	/* Logging: a level set by request until 2026-07-28, then per
	   request in _meta. */
	{ "logging/setLevel", LEGACY, REQ, C, S, "logging",
	  "SetLevelRequestParams", "EmptyResult", "server/utilities/logging" },
	{ "notifications/message", ALL, NOTE, S, S, "logging",
	  "LoggingMessageNotificationParams", NULL,
	  "server/utilities/logging" },

	/* Completion: the capability came in 2025-03-26. */
	{ "completion/complete", V1, REQ, C, 0, NULL,
	  "CompleteRequestParams", "CompleteResult",
	  "server/utilities/completion" },
	{ "completion/complete", PROTO_VFROM(PROTO_V_2025_03_26), REQ, C, S,
	  "completions", "CompleteRequestParams", "CompleteResult",
	  "server/utilities/completion" },

	/* What a server asks of the client: requests in the legacy
	   revisions, input requests of an input_required result in
	   2026-07-28. */
	{ "sampling/createMessage", LEGACY, REQ, S, C, "sampling",
	  "CreateMessageRequestParams", "CreateMessageAnswer",
	  "client/sampling" },
	{ "sampling/createMessage", V5, INPUT, S, C, "sampling",
	  "CreateMessageRequestParams", "CreateMessageResult",
	  "client/sampling" },
	{ "roots/list", LEGACY, REQ, S, C, "roots",
	  "RequestParams", "ListRootsResult", "client/roots" },
	{ "roots/list", V5, INPUT, S, C, "roots",
	  "ListRootsRequest.params", "ListRootsResult", "client/roots" },
	{ "notifications/roots/list_changed", LEGACY, NOTE, C, C,
	  "roots.listChanged", "NotificationParams", NULL, "client/roots" },
	{ "elicitation/create", V3 | V4, REQ, S, C, "elicitation",
	  "ElicitRequestParams", "ElicitAnswer", "client/elicitation" },
	{ "elicitation/create", V5, INPUT, S, C, "elicitation",
	  "ElicitRequestParams", "ElicitResult", "client/elicitation" },
	{ "notifications/elicitation/complete", V4, NOTE, S, C,
	  "elicitation.url", "ElicitationCompleteNotificationParams", NULL,
	  "client/elicitation" },

	/* Tasks (2025-11-25): either side may run tasks for the other. */
	{ "tasks/get", V4, REQ, BOTH, 0, NULL,
	  "GetTaskRequestParams", "GetTaskResult", "basic/utilities/tasks" },
	{ "tasks/result", V4, REQ, BOTH, 0, NULL,
	  "GetTaskPayloadRequestParams", "GetTaskPayloadResult",
	  "basic/utilities/tasks" },
	{ "tasks/list", V4, REQ, BOTH, RECV, "tasks.list",
	  "PaginatedRequestParams", "ListTasksResult",
	  "basic/utilities/tasks" },
	{ "tasks/cancel", V4, REQ, BOTH, RECV, "tasks.cancel",
	  "CancelTaskRequestParams", "CancelTaskResult",
	  "basic/utilities/tasks" },
	{ "notifications/tasks/status", V4, NOTE, BOTH, 0, NULL,
	  "TaskStatusNotificationParams", NULL, "basic/utilities/tasks" },
};

#define METHOD_COUNT	(sizeof method_table / sizeof method_table[0])

/*
 * The hash: open addressing over a power of two at least four times the
 * rows, so a probe ends after a step or two; each slot holds the first row
 * of a name plus one (0 is empty).
 */
#define METHOD_HASH_SIZE	256

static uint16_t		 method_hash[METHOD_HASH_SIZE];
/* "<revision> <page>" for each row and revision. */
static char		*method_specs[METHOD_COUNT][PROTO_V_MAX];
static pthread_once_t	 method_once = PTHREAD_ONCE_INIT;

/* FNV-1a of a name. */
static uint32_t
method_fnv(const char *s, size_t len)
{
	uint32_t	h = 2166136261u;
	size_t		i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return (h);
}

/* Build the hash and the spec strings, once. */
static void
method_init(void)
{
	size_t		i, slot;
	int		v;

	_Static_assert(METHOD_COUNT * 4 <= METHOD_HASH_SIZE,
	    "grow METHOD_HASH_SIZE with the table");
	for (i = 0; i < METHOD_COUNT; i++) {
		const struct proto_method *m = &method_table[i];

		for (v = 1; v < PROTO_V_MAX; v++) {
			if (m->versions & PROTO_VBIT(v))
				xasprintf(&method_specs[i][v], "%s %s",
				    proto_version_name((enum proto_version)v),
				    m->page);
		}
		if (i > 0 && strcmp(method_table[i - 1].name, m->name) == 0)
			continue;
		slot = method_fnv(m->name, strlen(m->name)) &
		    (METHOD_HASH_SIZE - 1);
		while (method_hash[slot] != 0)
			slot = (slot + 1) & (METHOD_HASH_SIZE - 1);
		method_hash[slot] = (uint16_t)(i + 1);
	}
}

/*
 * The row for a method name (len bytes, not NUL-terminated) in a
 * revision, or NULL when that revision has no such method.  With
 * PROTO_V_UNKNOWN, the row of the newest revision that has it.
 */
const struct proto_method *
proto_method_n(const char *name, size_t len, enum proto_version v)
{
	const struct proto_method	*m, *found = NULL;
	size_t				 slot, i;

	pthread_once(&method_once, method_init);
	if (name == NULL)
		return (NULL);
	slot = method_fnv(name, len) & (METHOD_HASH_SIZE - 1);
	for (; method_hash[slot] != 0; slot = (slot + 1) &
	    (METHOD_HASH_SIZE - 1)) {
		m = &method_table[method_hash[slot] - 1];
		/* By length first: name may hold a NUL (a \u0000 decoded). */
		if (strlen(m->name) == len && memcmp(m->name, name, len) == 0)
			break;
	}
	if (method_hash[slot] == 0)
		return (NULL);
	for (i = method_hash[slot] - 1; i < METHOD_COUNT &&
	    strcmp(method_table[i].name, method_table[method_hash[slot] -
	    1].name) == 0; i++) {
		m = &method_table[i];
		if ((int)v > PROTO_V_UNKNOWN && v < PROTO_V_MAX) {
			if (m->versions & PROTO_VBIT(v))
				return (m);
		} else
			found = m;
	}
	return (found);
}

/* The row for a NUL-terminated method name in a revision, or NULL. */
const struct proto_method *
proto_method(const char *name, enum proto_version v)
{
	if (name == NULL)
		return (NULL);
	return (proto_method_n(name, strlen(name), v));
}

/* The whole table, for walking it (tests, docs); *n gets its length. */
const struct proto_method *
proto_methods(size_t *n)
{
	*n = METHOD_COUNT;
	return (method_table);
}

/* "2025-06-18 server/tools": where a row's method is specified. */
const char *
proto_method_spec(const struct proto_method *m, enum proto_version v)
{
	size_t	i;

	pthread_once(&method_once, method_init);
	if (m < method_table || m >= method_table + METHOD_COUNT)
		return ("");
	i = (size_t)(m - method_table);
	if ((int)v <= PROTO_V_UNKNOWN || v >= PROTO_V_MAX ||
	    method_specs[i][v] == NULL) {
		for (v = PROTO_V_MAX - 1; v > PROTO_V_UNKNOWN; v--) {
			if (method_specs[i][v] != NULL)
				break;
		}
	}
	return (method_specs[i][v]);
}

/* "request", "notification", "input request". */
const char *
proto_kind_name(enum proto_kind k)
{
	static const char *const names[PROTO_KIND_MAX] = {
		[PROTO_REQUEST] = "request",
		[PROTO_NOTIFICATION] = "notification",
		[PROTO_INPUT] = "input request",
	};

	if ((int)k < 0 || k >= PROTO_KIND_MAX)
		return ("unknown");
	return (names[k]);
}

/* "client", "server", "either side", "the receiver". */
const char *
proto_side_name(int side)
{
	switch (side) {
	case PROTO_CLIENT:
		return ("client");
	case PROTO_SERVER:
		return ("server");
	case PROTO_BOTH:
		return ("either side");
	case PROTO_RECEIVER:
		return ("the receiver");
	}
	return ("nobody");
}

/*
 * Whether a capabilities object declares a dotted path: "tools" needs
 * the member to be an object (the specification's "present"), a last
 * step such as "listChanged" or "subscribe" needs true when it is a
 * boolean, or an object when the schema makes it one ("elicitation.url").
 * It reads only what is written: what an empty "elicitation" object
 * implies ("form" alone) is the caller's rule.
 */
int
proto_caps_has(const json_t *caps, const char *path)
{
	const json_t	*cur = caps, *next;
	const char	*p = path, *dot;
	char		 key[64];
	size_t		 len;

	if (caps == NULL || path == NULL || !json_is_object(caps))
		return (0);
	for (;;) {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof key)
			return (0);
		memcpy(key, p, len);
		key[len] = '\0';
		next = json_object_get(cur, key);
		if (next == NULL)
			return (0);
		if (dot == NULL)
			return (json_is_object(next) || json_is_true(next));
		if (!json_is_object(next))
			return (0);
		cur = next;
		p = dot + 1;
	}
}
