/*
 * The fault rule language's tables: every key (selector or param) and
 * every action with what it applies to, which the text and JSON readers
 * (fault_parse.c), the help text and the messages all follow; the texts
 * made from them (lists, "did you mean"), and the canonical text a rule
 * is recorded under.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_int.h"

/* The most a counter (first, nth, after) may be. */
#define FAULT_COUNT_MAX		1000000000
/* Retry-After: up to a day, in seconds. */
#define FAULT_RETRY_AFTER_MAX	86400
/* How much of a rule or a value a message quotes. */
#define FAULT_QUOTE_MAX		80
/* Candidates offered as "did you mean". */
#define FAULT_SUGGEST_MAX	2

#define A(x)	FAULT_BIT(x)

static const char *const fault_dir_words[] = { "c2s", "s2c", NULL };
static const char *const fault_kind_words[] = { "request", "response",
	"error", "notification", NULL };
/* The kind each of fault_kind_words names. */
const enum msg_kind fault_kind_values[] = { KIND_REQUEST,
	KIND_RESPONSE, KIND_ERROR, KIND_NOTIFICATION };
/* Indexed like the modes' enums: fault_act.c relies on it. */
const char *const fault_corrupt_modes[] = { "invalid-json", "truncate",
	"stray", NULL };
const char *const fault_close_modes[] = { "pipes", "kill", "reset",
	"end-stream", NULL };
/* Over which transports each close mode can be done. */
const unsigned fault_close_transports[] = { FAULT_TRANSPORT_STDIO,
	FAULT_TRANSPORT_STDIO, FAULT_TRANSPORT_HTTP, FAULT_TRANSPORT_HTTP };
static const char *const fault_status_words[] = { "401", "404", "429",
	"500", "503", NULL };

/*
 * Every key of the rule language, selectors first: the order here is the
 * order of the canonical text.  Two rows may share a name when different
 * actions read it differently (mode).
 */
const struct fault_key fault_keys[] = {
	{ .name = "dir", .slot = FS_DIR, .part = FP_SELECTOR,
	  .type = FV_WORD, .words = fault_dir_words, .usage = "c2s|s2c",
	  .help = "the message's direction (client to server, or back)" },
	{ .name = "kind", .slot = FS_KIND, .part = FP_SELECTOR,
	  .type = FV_WORD, .words = fault_kind_words,
	  .usage = "request|response|error|notification",
	  .help = "what the message is" },
	{ .name = "method", .slot = FS_METHOD, .part = FP_SELECTOR,
	  .type = FV_GLOB, .usage = "GLOB",
	  .help = "its method (a response's or error's: its request's)" },
	{ .name = "tool", .slot = FS_TOOL, .part = FP_SELECTOR,
	  .type = FV_GLOB, .usage = "GLOB",
	  .help = "tools/call's params.name (a response: its request's)" },
	{ .name = "prompt", .slot = FS_PROMPT, .part = FP_SELECTOR,
	  .type = FV_GLOB, .usage = "GLOB",
	  .help = "prompts/get's params.name (a response: its request's)" },
	{ .name = "resource", .slot = FS_RESOURCE, .part = FP_SELECTOR,
	  .type = FV_GLOB, .usage = "GLOB",
	  .help = "params.uri of resources/read, subscribe, unsubscribe" },
	{ .name = "first", .slot = FS_FIRST, .part = FP_SELECTOR,
	  .type = FV_INT, .min = 1, .max = FAULT_COUNT_MAX, .usage = "N",
	  .help = "only the first N messages the other selectors match" },
	{ .name = "nth", .slot = FS_NTH, .part = FP_SELECTOR,
	  .type = FV_INT, .min = 1, .max = FAULT_COUNT_MAX, .usage = "N",
	  .help = "only the Nth of them" },
	{ .name = "after", .slot = FS_AFTER, .part = FP_SELECTOR,
	  .type = FV_INT, .min = 0, .max = FAULT_COUNT_MAX, .usage = "N",
	  .help = "only those after the Nth" },
	{ .name = "p", .slot = FS_P, .part = FP_SELECTOR,
	  .type = FV_PROB, .usage = "P",
	  .help = "a probability per message: 0.1 or 10% (see --seed)" },

	{ .name = "ms", .slot = FS_MS, .part = FP_PARAM,
	  .actions = A(FAULT_DELAY) | A(FAULT_TIMEOUT), .type = FV_INT,
	  .min = 0, .max = FAULT_DELAY_MAX_MS, .usage = "N",
	  .help = "milliseconds" },
	{ .name = "jitter", .slot = FS_JITTER, .part = FP_PARAM,
	  .actions = A(FAULT_DELAY), .type = FV_INT,
	  .min = 0, .max = FAULT_DELAY_MAX_MS, .usage = "N",
	  .help = "plus or minus up to N ms, uniformly" },
	{ .name = "code", .slot = FS_CODE, .part = FP_PARAM,
	  .actions = A(FAULT_ERROR), .type = FV_INT,
	  .min = INT32_MIN, .max = INT32_MAX, .usage = "N",
	  .help = "the JSON-RPC error code (default -32603)" },
	{ .name = "message", .slot = FS_MESSAGE, .part = FP_PARAM,
	  .actions = A(FAULT_ERROR), .type = FV_STRING, .usage = "TEXT",
	  .help = "the error's message" },
	{ .name = "data", .slot = FS_DATA, .part = FP_PARAM,
	  .actions = A(FAULT_ERROR), .type = FV_JSON, .usage = "JSON",
	  .help = "the error's data (any JSON)" },
	{ .name = "text", .slot = FS_TEXT, .part = FP_PARAM,
	  .actions = A(FAULT_TOOL_ERROR), .type = FV_STRING, .usage = "TEXT",
	  .help = "the text of the result's content" },
	{ .name = "mode", .slot = FS_MODE, .part = FP_PARAM,
	  .actions = A(FAULT_CORRUPT), .type = FV_WORD,
	  .words = fault_corrupt_modes, .usage = "invalid-json|truncate|stray",
	  .help = "invalid JSON (default), the first half, or a stray line "
	  "before it" },
	{ .name = "mode", .slot = FS_MODE, .part = FP_PARAM,
	  .actions = A(FAULT_CLOSE), .type = FV_WORD,
	  .words = fault_close_modes, .usage = "pipes|kill|reset|end-stream",
	  .help = "stdio: close the pipes (default) or kill the server; "
	  "HTTP: reset the connection (default) or end the SSE stream" },
	{ .name = "status", .slot = FS_STATUS, .part = FP_PARAM,
	  .actions = A(FAULT_HTTP_STATUS), .type = FV_WORD,
	  .words = fault_status_words, .usage = "401|404|429|500|503",
	  .help = "the HTTP status" },
	{ .name = "retry-after", .slot = FS_RETRY_AFTER, .part = FP_PARAM,
	  .actions = A(FAULT_HTTP_STATUS), .type = FV_INT,
	  .min = 0, .max = FAULT_RETRY_AFTER_MAX, .usage = "SECONDS",
	  .help = "a Retry-After header (429, 503)" },
	{ .name = "www-authenticate", .slot = FS_WWW_AUTHENTICATE,
	  .part = FP_PARAM, .actions = A(FAULT_HTTP_STATUS),
	  .type = FV_STRING, .usage = "TEXT",
	  .help = "a WWW-Authenticate header (401; default: Bearer "
	  "error=\"invalid_token\")" },
	{ .name = "set", .slot = FS_SET, .part = FP_PARAM,
	  .actions = A(FAULT_MUTATE), .type = FV_JPATH, .usage = "JSONPATH",
	  .help = "set every place the path matches to value=" },
	{ .name = "value", .slot = FS_VALUE, .part = FP_PARAM,
	  .actions = A(FAULT_MUTATE), .type = FV_JSON, .usage = "JSON",
	  .help = "the value set= writes" },
	{ .name = "remove", .slot = FS_REMOVE, .part = FP_PARAM,
	  .actions = A(FAULT_MUTATE), .type = FV_JPATH, .usage = "JSONPATH",
	  .help = "remove every place the path matches" },
};
const size_t fault_nkeys = sizeof fault_keys / sizeof fault_keys[0];

#define REQ(s)	FAULT_BIT(s)
#define C2S	FAULT_BIT(DIR_C2S)
#define S2C	FAULT_BIT(DIR_S2C)
#define BOTH	(FAULT_TRANSPORT_STDIO | FAULT_TRANSPORT_HTTP)

/* Every action, indexed by enum fault_action. */
const struct fault_adef fault_adefs[FAULT_ACTION_MAX] = {
	{ "delay", FAULT_DELAY, FAULT_DIRS_ANY, FAULT_DIRS_ANY,
	  FAULT_KINDS_ANY, NULL, BOTH, REQ(FS_MS),
	  "delay ms=N [jitter=N]", "hold the message N ms" },
	{ "error", FAULT_ERROR, C2S, C2S, FAULT_BIT(KIND_REQUEST), NULL,
	  BOTH, 0, "error [code=N] [message=TEXT] [data=JSON]",
	  "answer a request with a JSON-RPC error; the server never sees it" },
	{ "tool-error", FAULT_TOOL_ERROR, C2S, C2S, FAULT_BIT(KIND_REQUEST),
	  "tools/call", BOTH, 0, "tool-error [text=TEXT]",
	  "answer a tools/call with a result with isError: true" },
	{ "drop", FAULT_DROP, FAULT_DIRS_ANY, FAULT_DIRS_ANY,
	  FAULT_KINDS_ANY, NULL, BOTH, 0, "drop", "swallow the message" },
	{ "timeout", FAULT_TIMEOUT, C2S, C2S, FAULT_BIT(KIND_REQUEST), NULL,
	  BOTH, REQ(FS_MS), "timeout ms=N",
	  "forward a request, hold its answer N ms, then drop it" },
	{ "corrupt", FAULT_CORRUPT, FAULT_DIRS_ANY, S2C, FAULT_KINDS_ANY,
	  NULL, BOTH, 0, "corrupt [mode=invalid-json|truncate|stray]",
	  "replace the message by broken bytes (default: server to client)" },
	{ "close", FAULT_CLOSE, FAULT_DIRS_ANY, FAULT_DIRS_ANY,
	  FAULT_KINDS_ANY, NULL, BOTH, 0,
	  "close [mode=pipes|kill|reset|end-stream]",
	  "do not forward the message; close the transport" },
	{ "http-status", FAULT_HTTP_STATUS, C2S, C2S, FAULT_BIT(KIND_REQUEST),
	  NULL, FAULT_TRANSPORT_HTTP, REQ(FS_STATUS),
	  "http-status status=N [retry-after=SECONDS] [www-authenticate=TEXT]",
	  "(HTTP) answer a request with that status; the server never "
	  "sees it" },
	{ "mutate", FAULT_MUTATE, FAULT_DIRS_ANY, FAULT_DIRS_ANY,
	  FAULT_KINDS_ANY, NULL, BOTH, 0,
	  "mutate set=JSONPATH value=JSON | remove=JSONPATH",
	  "forward the message changed at every place the path matches" },
};

/* Which methods carry the name each name selector matches. */
const struct fault_named fault_names[FAULT_NAMES] = {
	{ FS_TOOL, "name", { "tools/call", NULL } },
	{ FS_PROMPT, "name", { "prompts/get", NULL } },
	{ FS_RESOURCE, "uri", { "resources/read", "resources/subscribe",
	    "resources/unsubscribe", NULL } },
};

/* A growing string for messages and canonical text. */
struct fault_buf {
	char	*s;
	size_t	 len, cap;
};

/* Append n bytes to b. */
static void
fault_table_add(struct fault_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		while (b->len + n + 1 > b->cap)
			b->cap = b->cap == 0 ? 64 : b->cap * 2;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Append a string to b. */
static void
fault_table_adds(struct fault_buf *b, const char *s)
{
	fault_table_add(b, s, strlen(s));
}

/* The action whose name is word, or NULL. */
const struct fault_adef *
fault_table_action(const char *word)
{
	size_t	i;

	for (i = 0; i < FAULT_ACTION_MAX; i++) {
		if (strcmp(fault_adefs[i].name, word) == 0)
			return &fault_adefs[i];
	}
	return NULL;
}

/*
 * The key row named name: a selector (adef NULL) or a param of adef; with
 * any_part, any row of that name.
 */
const struct fault_key *
fault_table_key(const char *name, enum fault_part part,
    const struct fault_adef *adef, int any_part)
{
	const struct fault_key	*k;
	size_t			 i;

	for (i = 0; i < fault_nkeys; i++) {
		k = &fault_keys[i];
		if (strcmp(k->name, name) != 0)
			continue;
		if (any_part)
			return k;
		if (k->part != part)
			continue;
		if (part == FP_PARAM && !(k->actions & A(adef->action)))
			continue;
		return k;
	}
	return NULL;
}

/* A short quote of s for messages (at most FAULT_QUOTE_MAX bytes). */
char *
fault_table_quote(const char *s)
{
	size_t	len = strlen(s), cut;
	char	*q;

	if (len <= FAULT_QUOTE_MAX)
		return xstrdup(s);
	cut = scan_utf8_trim(s, FAULT_QUOTE_MAX);
	xasprintf(&q, "%.*s...", (int)cut, s);
	return q;
}

/* "a, b, c": the names of the selectors, or of the params of adef. */
char *
fault_table_list(enum fault_part part, const struct fault_adef *adef)
{
	struct fault_buf	 b = { NULL, 0, 0 };
	const struct fault_key	*k;
	size_t			 i, j;

	for (i = 0; i < fault_nkeys; i++) {
		k = &fault_keys[i];
		if (k->part != part || (part == FP_PARAM &&
		    !(k->actions & A(adef->action))))
			continue;
		for (j = 0; j < i; j++) {
			if (strcmp(fault_keys[j].name, k->name) == 0)
				break;
		}
		if (j < i)
			continue;
		if (b.len > 0)
			fault_table_adds(&b, ", ");
		fault_table_adds(&b, k->name);
	}
	if (b.s == NULL)
		return xstrdup("none");
	return b.s;
}

/* "delay, error, ...": the actions' names. */
char *
fault_table_actions(void)
{
	struct fault_buf	b = { NULL, 0, 0 };
	size_t			i;

	for (i = 0; i < FAULT_ACTION_MAX; i++) {
		if (i > 0)
			fault_table_adds(&b, ", ");
		fault_table_adds(&b, fault_adefs[i].name);
	}
	return b.s;
}

/* "delay, timeout": the actions that take a param named name. */
char *
fault_table_takers(const char *name)
{
	struct fault_buf	 b = { NULL, 0, 0 };
	const struct fault_key	*k;
	size_t			 i, a;

	for (i = 0; i < fault_nkeys; i++) {
		k = &fault_keys[i];
		if (k->part != FP_PARAM || strcmp(k->name, name) != 0)
			continue;
		for (a = 0; a < FAULT_ACTION_MAX; a++) {
			if (!(k->actions & A(a)))
				continue;
			if (b.len > 0)
				fault_table_adds(&b, ", ");
			fault_table_adds(&b, fault_adefs[a].name);
		}
	}
	return b.s;
}

/*
 * " (did you mean `x`?)" for a word near one of the language's words (of
 * the selectors and actions when adef is NULL, else of adef's params), or
 * an empty string.
 */
char *
fault_table_suggest(const char *word, const struct fault_adef *adef)
{
	const char	*cands[64];
	size_t		 n = 0, i, found, idx[FAULT_SUGGEST_MAX];
	char		*s;

	for (i = 0; i < fault_nkeys && n < 64; i++) {
		if (adef == NULL && fault_keys[i].part == FP_SELECTOR)
			cands[n++] = fault_keys[i].name;
		else if (adef != NULL && fault_keys[i].part == FP_PARAM &&
		    (fault_keys[i].actions & A(adef->action)))
			cands[n++] = fault_keys[i].name;
	}
	for (i = 0; adef == NULL && i < FAULT_ACTION_MAX && n < 64; i++)
		cands[n++] = fault_adefs[i].name;
	found = nearest_find(word, cands, n, idx, 1);
	if (found == 0)
		return xstrdup("");
	xasprintf(&s, " (did you mean `%s`?)", cands[idx[0]]);
	return s;
}

/* Whether a value must be quoted to read back as one word. */
static int
fault_table_needs_quote(const char *s)
{
	if (s[0] == '\0' || s[0] == '"' || s[0] == '\'')
		return 1;
	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s))
			return 1;
	}
	return 0;
}

/*
 * Append key=value to b, the value quoted when it needs to be or when it
 * is text (always), so that text reads as text: message="x".
 */
static void
fault_table_add_pair(struct fault_buf *b, const char *key, const char *s,
    int text)
{
	char		 quote;
	const char	*p;

	fault_table_adds(b, key);
	fault_table_adds(b, "=");
	if (!text && !fault_table_needs_quote(s)) {
		fault_table_adds(b, s);
		return;
	}
	quote = (strchr(s, '"') != NULL && strchr(s, '\'') == NULL) ?
	    '\'' : '"';
	fault_table_add(b, &quote, 1);
	for (p = s; *p != '\0'; p++) {
		if (*p == quote || *p == '\\')
			fault_table_add(b, "\\", 1);
		fault_table_add(b, p, 1);
	}
	fault_table_add(b, &quote, 1);
}

/* Build the rule's canonical text: selectors, action, params in order. */
void
fault_table_canon(struct fault_rule *r)
{
	struct fault_buf	 b = { NULL, 0, 0 };
	size_t			 i;
	int			 part;

	for (part = FP_SELECTOR; part <= FP_PARAM; part++) {
		if (part == FP_PARAM) {
			if (b.len > 0)
				fault_table_adds(&b, " ");
			fault_table_adds(&b, r->adef->name);
		}
		for (i = 0; i < fault_nkeys; i++) {
			if ((int)fault_keys[i].part != part ||
			    r->v[fault_keys[i].slot].key != &fault_keys[i])
				continue;
			if (b.len > 0)
				fault_table_adds(&b, " ");
			fault_table_add_pair(&b, fault_keys[i].name,
			    r->v[fault_keys[i].slot].s,
			    fault_keys[i].type == FV_STRING);
		}
	}
	r->text = b.s;
}

