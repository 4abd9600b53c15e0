/*
 * OTLP (formats/otlp_*.c): the facts of real MCP messages, the spans a
 * whole session makes by the MCP semantic conventions, and the two
 * encodings of them, read back by a small protobuf field walker and by
 * jansson.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "formats.h"
#include "unit.h"

#define TP	"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

/* A message of direction d at time ts. */
static struct msg *
mk(enum dir d, int64_t ts, const char *text)
{
	struct msg	*m = msg_new(d, text, strlen(text));

	m->ts_ns = ts;
	return m;
}

/* The facts of text sent in direction d. */
static struct otlp_fact *
facts(enum dir d, const char *text, int payloads)
{
	struct msg		*m = mk(d, 1000, text);
	struct otlp_fact	*f = otlp_fact_new(m, payloads);

	msg_free(m);
	return f;
}

static size_t
nfacts(const struct otlp_fact *f)
{
	size_t	 n = 0;

	for (; f != NULL; f = f->next)
		n++;
	return n;
}

Test(otlp_fact, tools_call_with_traceparent, .timeout = UNIT_TIMEOUT)
{
	struct otlp_fact	*f;

	f = facts(DIR_C2S, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
	    "{\"message\":\"hi\",\"n\":[1,2]},\"_meta\":{\"traceparent\":\""
	    TP "\",\"tracestate\":\"k=v\",\"progressToken\":3}}}", 1);
	cr_assert_not_null(f);
	cr_assert_eq(nfacts(f), 1);
	cr_assert_eq(f->kind, KIND_REQUEST);
	cr_assert_eq(f->dir, DIR_C2S);
	cr_assert_eq(f->ts_ns, 1000);
	cr_assert_str_eq(f->method, "tools/call");
	cr_assert_str_eq(f->id, "7");
	cr_assert_null(f->jsonrpc);
	cr_assert_str_eq(f->name, "echo");
	cr_assert_null(f->uri);
	cr_assert_str_eq(f->traceparent, TP);
	cr_assert_str_eq(f->tracestate, "k=v");
	cr_assert_str_eq(f->payload, "{\"message\":\"hi\",\"n\":[1,2]}");
	cr_assert_eq(f->payload_omitted, 0);
	cr_assert_gt(f->size, sizeof *f);
	otlp_fact_free(f);

	/* Without payloads, no payload text; a string id keeps its quotes. */
	f = facts(DIR_C2S, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\\u0063ho\",\"arguments\":"
	    "{}}}", 0);
	cr_assert_str_eq(f->id, "\"7\"");
	cr_assert_str_eq(f->name, "echo");
	cr_assert_null(f->payload);
	cr_assert_null(f->traceparent);
	otlp_fact_free(f);
}

Test(otlp_fact, answers, .timeout = UNIT_TIMEOUT)
{
	struct otlp_fact	*f;

	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":"
	    "-32602,\"message\":\"Unknown tool: nope\",\"data\":{}}}", 1);
	cr_assert_eq(f->kind, KIND_ERROR);
	cr_assert_str_eq(f->id, "3");
	cr_assert_eq(f->has_code, 1);
	cr_assert_eq(f->code, -32602);
	cr_assert_str_eq(f->message, "Unknown tool: nope");
	cr_assert_null(f->payload);
	cr_assert_null(f->method);
	otlp_fact_free(f);

	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{"
	    "\"content\":[{\"type\":\"text\",\"text\":\"boom\"}],\"isError\":"
	    "true}}", 1);
	cr_assert_eq(f->kind, KIND_RESPONSE);
	cr_assert_eq(f->tool_error, 1);
	cr_assert_eq(f->has_code, 0);
	cr_assert_str_eq(f->payload, "{\"content\":[{\"type\":\"text\","
	    "\"text\":\"boom\"}],\"isError\":true}");
	otlp_fact_free(f);

	/* only a result that can be a tools/call's is kept as a payload */
	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{"
	    "\"tools\":[{\"name\":\"a\"}]}}", 1);
	cr_assert_null(f->payload);
	cr_assert_eq(f->payload_omitted, 0);
	otlp_fact_free(f);
	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{"
	    "\"contents\":[{\"uri\":\"a:/\",\"text\":\"x\"}]}}", 1);
	cr_assert_null(f->payload);
	otlp_fact_free(f);
	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{"
	    "\"structuredContent\":{\"n\":1}}}", 1);
	cr_assert_str_eq(f->payload, "{\"structuredContent\":{\"n\":1}}");
	otlp_fact_free(f);

	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{"
	    "\"isError\":false}}", 0);
	cr_assert_eq(f->tool_error, 0);
	otlp_fact_free(f);

	/* A code that is no integer: an error without a code. */
	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{"
	    "\"code\":1.5,\"message\":7}}", 0);
	cr_assert_eq(f->kind, KIND_ERROR);
	cr_assert_null(f->id);
	cr_assert_eq(f->has_code, 0);
	cr_assert_null(f->message);
	otlp_fact_free(f);

	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
	    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}", 0);
	cr_assert_str_eq(f->protocol_version, "2025-06-18");
	otlp_fact_free(f);
}

Test(otlp_fact, notifications_and_batches, .timeout = UNIT_TIMEOUT)
{
	struct otlp_fact	*f, *g;

	f = facts(DIR_C2S, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":\"abc\","
	    "\"reason\":\"user\"}}", 0);
	cr_assert_eq(f->kind, KIND_NOTIFICATION);
	cr_assert_null(f->id);
	cr_assert_str_eq(f->cancel_id, "\"abc\"");
	otlp_fact_free(f);

	f = facts(DIR_S2C, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/updated\",\"params\":{\"uri\":"
	    "\"file:///a.txt\"}}", 0);
	cr_assert_str_eq(f->uri, "file:///a.txt");
	otlp_fact_free(f);

	/* uri only for the methods that name a resource by it */
	f = facts(DIR_C2S, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"x/y\",\"params\":{\"uri\":\"u\",\"name\":\"n\"}}", 0);
	cr_assert_null(f->uri);
	cr_assert_null(f->name);
	otlp_fact_free(f);

	/* A batch: one fact per element, what is no JSON-RPC skipped. */
	f = facts(DIR_C2S, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\"},5,{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"resources/read\",\"params\":{\"uri\":\"r://x\"}}]", 0);
	cr_assert_eq(nfacts(f), 3);
	cr_assert_str_eq(f->method, "ping");
	cr_assert_str_eq(f->id, "1");
	g = f->next;
	cr_assert_eq(g->kind, KIND_NOTIFICATION);
	cr_assert_str_eq(g->next->uri, "r://x");
	cr_assert_str_eq(g->next->id, "2");
	otlp_fact_free(f);

	/* Not JSON-RPC: no fact. */
	cr_assert_null(facts(DIR_C2S, "not json", 0));
	cr_assert_null(facts(DIR_C2S, "42", 0));
	cr_assert_null(facts(DIR_C2S, "{\"a\":1}", 0));

	/* jsonrpc kept only when not "2.0" */
	f = facts(DIR_C2S, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}", 0);
	cr_assert_str_eq(f->jsonrpc, "1.0");
	otlp_fact_free(f);
	f = facts(DIR_C2S, "{\"jsonrpc\":2,\"id\":1,\"method\":\"a\"}", 0);
	cr_assert_str_eq(f->jsonrpc, "2");
	otlp_fact_free(f);
}

Test(otlp_fact, truncated_from_ident, .timeout = UNIT_TIMEOUT)
{
	const char		*full = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"big\",\"arguments\":{\"x\":"
	    "\"0123456789\"}},\"id\":12}";
	struct ident		 id;
	struct msg		*m;
	struct otlp_fact	*f;

	ident_init(&id);
	ident_feed(&id, full, strlen(full));
	m = mk(DIR_C2S, 5, full);
	m->len = 20;			/* the kept prefix */
	m->flags = MSG_TRUNCATED;
	m->ident = ident_finish(&id, &m->ident_len);
	cr_assert_not_null(m->ident);
	f = otlp_fact_new(m, 1);
	cr_assert_not_null(f);
	cr_assert_eq(f->kind, KIND_REQUEST);
	cr_assert_str_eq(f->method, "tools/call");
	cr_assert_str_eq(f->id, "12");
	cr_assert_null(f->name);
	cr_assert_null(f->payload);
	cr_assert_eq(f->ts_ns, 5);
	otlp_fact_free(f);

	/* Truncated and no ident: nothing. */
	free(m->ident);
	m->ident = NULL;
	cr_assert_null(otlp_fact_new(m, 1));
	msg_free(m);
}

Test(otlp_fact, bounds, .timeout = UNIT_TIMEOUT)
{
	struct otlp_fact	*f;
	char			*big, *p;
	size_t			 i, n;

	/* A name of "a" and 600 "é": cut below 1024 at a character. */
	big = malloc(2048 + 200);
	p = big + sprintf(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a");
	for (i = 0; i < 600; i++) {
		*p++ = (char)0xc3;
		*p++ = (char)0xa9;
	}
	strcpy(p, "\"}}");
	f = facts(DIR_C2S, big, 0);
	n = strlen(f->name);
	cr_assert_eq(n, 1023);
	cr_assert_eq(scan_utf8_trim(f->name, n), n);
	otlp_fact_free(f);
	free(big);

	/* Arguments over OTLP_PAYLOAD_MAX: left out, and said so. */
	n = OTLP_PAYLOAD_MAX + 100;
	big = malloc(n + 200);
	p = big + sprintf(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"s\":\"");
	memset(p, 'z', n);
	strcpy(p + n, "\"}}}");
	f = facts(DIR_C2S, big, 1);
	cr_assert_null(f->payload);
	cr_assert_eq(f->payload_omitted, 1);
	cr_assert_lt(f->size, 4096);
	otlp_fact_free(f);
	free(big);
}

/* The fact's kind, method and id are what the scanner finds. */
Test(otlp_fact, agrees_with_scan_message, .timeout = UNIT_TIMEOUT)
{
	static const char *cases[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
		"{\"params\":{\"x\":\"\\\\\"},\"method\":\"m\\u0065thod\",\"id\":\"abc\"}",
		"  {\"\\u0069\\u0064\":9,\"method\":\"a\"}  ",
		"{\"id\":{\"nested\":[1,2]},\"method\":\"obj-id\"}",
		"{\"method\":\"a\",\"method\":\"b\",\"id\":1,\"id\":2}",
		"{\"jsonrpc\":\"2.0\",\"result\":1,\"error\":2,\"id\":1}",
		"{\"method\":5,\"id\":1}",
		"{\"method\":\"a\",\"result\":1}",
		"{\"method\":5,\"method\":\"a\"}",
		"{}",
		"{\"jsonrpc\":{},\"error\":{}}",
		"{\"result\":[],\"id\":\"a\\\"b\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":-1.5e3 , \"result\" : true }",
		"{\"id\":1,\"method\":\"a\"} x",
		"{\"id\":1,\"method\":\"a\"",
		"{\"id\":null,\"error\":{\"code\":-32700}}",
	};
	struct otlp_fact	*f;
	struct scan		 sc;
	char			*mth, *id;
	size_t			 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		scan_message(cases[i], strlen(cases[i]), &sc);
		f = facts(DIR_C2S, cases[i], 0);
		if (sc.kind == KIND_INVALID) {
			cr_expect_null(f, "case %zu", i);
			otlp_fact_free(f);
			continue;
		}
		cr_assert_not_null(f, "case %zu", i);
		cr_expect_eq(f->kind, sc.kind, "case %zu", i);
		mth = scan_method_dup(cases[i], &sc);
		id = scan_id_dup(cases[i], &sc);
		if (mth != NULL)
			cr_expect_str_eq(f->method, mth, "case %zu", i);
		else
			cr_expect_null(f->method, "case %zu", i);
		if (id != NULL && strcmp(id, "null") != 0)
			cr_expect_str_eq(f->id, id, "case %zu", i);
		else
			cr_expect_null(f->id, "case %zu", i);
		free(mth);
		free(id);
		otlp_fact_free(f);
	}
}

/* A session's messages, fed to a builder one at a time. */
struct sess {
	struct otlp_builder	*b;
	struct otlp_span	*spans;
	int64_t			 ts;
};

static const struct otlp_sess_info test_info = {
	.transport = "http",
	.started_ns = 1700000000000000000LL,
	.target = "http://127.0.0.1:9/mcp",
	.client_address = "127.0.0.1",
	.client_port = 40000,
	.server_address = "127.0.0.1",
	.server_port = 9,
};

static void
feed(struct sess *s, enum dir d, const char *text)
{
	struct msg	*m = mk(d, s->ts += 1000, text);

	otlp_builder_fact(s->b, otlp_fact_new(m, 1), &s->spans);
	msg_free(m);
}

static size_t
nspans(const struct otlp_span *s)
{
	size_t	 n = 0;

	for (; s != NULL; s = s->next)
		n++;
	return n;
}

/* The span whose jsonrpc.request.id is id (a notification: by name). */
static const struct otlp_span *
span_by(const struct otlp_span *s, const char *id, const char *name)
{
	json_t	*v;

	for (; s != NULL; s = s->next) {
		v = json_object_get(s->attrs, "jsonrpc.request.id");
		if (id != NULL && v != NULL &&
		    strcmp(json_string_value(v), id) == 0)
			return s;
		if (id == NULL && name != NULL && strcmp(s->name, name) == 0)
			return s;
	}
	cr_assert_fail("no span %s %s", id ? id : "-", name ? name : "-");
	return NULL;
}

/* The string payload k of span s (a prompt variable), or NULL. */
static const char *
spayload(const struct otlp_span *s, const char *k)
{
	const struct otlp_payload	*p;

	for (p = s->payloads; p != NULL; p = p->next)
		if (!p->json && strcmp(p->key, k) == 0)
			return p->text;
	return NULL;
}

static const char *
sattr(const struct otlp_span *s, const char *k)
{
	json_t	*v = json_object_get(s->attrs, k);

	return v != NULL ? json_string_value(v) : spayload(s, k);
}

/*
 * The value payload k of span s would be encoded as, or NULL; the last
 * one made is freed at the next call (and at pval(NULL, NULL)).
 */
static json_t *
pval(const struct otlp_span *s, const char *k)
{
	static json_t			*last;
	const struct otlp_payload	*p;

	json_decref(last);
	last = NULL;
	for (p = s != NULL ? s->payloads : NULL; p != NULL; p = p->next)
		if (strcmp(p->key, k) == 0)
			return last = otlp_payload_value(p);
	return NULL;
}

static const char *session_msgs[][2] = {
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":"
	    "{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":"
	    "\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\","
	    "\"version\":\"1\"}}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"},\"_meta\":"
	    "{\"traceparent\":\"" TP "\",\"tracestate\":\"a=b\"}}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"fail\",\"arguments\":{}}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":\"4\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"strid\"}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"Echo: hi\"}]}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[],"
	    "\"isError\":true}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":\"4\",\"result\":{\"content\":[]}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\","
	    "\"params\":{\"uri\":\"test://static/resource/1\"}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,"
	    "\"message\":\"bad uri\"}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\","
	    "\"params\":{\"name\":\"simple\",\"arguments\":{\"city\":\"Paris\","
	    "\"n\":3}}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32603,"
	    "\"message\":\"internal\"}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"sampling/createMessage\",\"params\":{\"messages\":[]}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32602,"
	    "\"message\":\"no\"}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":7}}" },
	{ "s", "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}" },
	{ "c", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"slow\"}}" },
};

/* Run the session above through a builder for side. */
static void
run_session(struct sess *s, enum otlp_side side)
{
	size_t	 i;

	memset(s, 0, sizeof *s);
	s->ts = 1000000;
	s->b = otlp_builder_new(&test_info, side, 1);
	for (i = 0; i < sizeof session_msgs / sizeof session_msgs[0]; i++)
		feed(s, session_msgs[i][0][0] == 'c' ? DIR_C2S : DIR_S2C,
		    session_msgs[i][1]);
	otlp_builder_end(s->b, s->ts + 5000, &s->spans);
}

Test(otlp_span, whole_session_server_side, .timeout = UNIT_TIMEOUT)
{
	struct sess		 s;
	const struct otlp_span	*sp, *p;
	char			 key[33];
	uint8_t			 tid[16];
	json_t			*v;

	run_session(&s, OTLP_SIDE_SERVER);
	/* 10 requests and 2 notifications; the answer to 99 makes none. */
	cr_assert_eq(nspans(s.spans), 12);
	otlp_session_key(&test_info, key);
	cr_assert_eq(strlen(key), 32);
	otlp_session_trace_id(&test_info, tid);

	for (p = s.spans; p != NULL; p = p->next) {
		cr_assert_str_eq(sattr(p, "mcp.session.id"), key);
		cr_assert_str_eq(sattr(p, "network.transport"), "tcp");
		cr_assert_str_eq(sattr(p, "network.protocol.name"), "http");
		cr_assert_str_eq(sattr(p, "network.protocol.version"), "1.1");
		cr_assert_not_null(sattr(p, "mcp.method.name"));
		cr_assert_null(json_object_get(p->attrs,
		    "jsonrpc.protocol.version"));
		cr_assert_geq(p->end_ns, p->start_ns);
		cr_assert(memcmp(p->span_id, "\0\0\0\0\0\0\0\0", 8) != 0);
		if (!p->has_parent)
			cr_assert(memcmp(p->trace_id, tid, 16) == 0);
		if (p->kind == OTLP_KIND_SERVER) {
			cr_assert_str_eq(sattr(p, "client.address"),
			    "127.0.0.1");
			cr_assert_eq(json_integer_value(json_object_get(
			    p->attrs, "client.port")), 40000);
			cr_assert_null(json_object_get(p->attrs,
			    "server.address"));
		} else {
			/* the server side's CLIENT spans: no peer (mcpreel
			   stands for the server, whose address it is) */
			cr_assert_null(json_object_get(p->attrs,
			    "server.address"));
			cr_assert_null(json_object_get(p->attrs,
			    "client.address"));
		}
	}

	sp = span_by(s.spans, "1", NULL);
	cr_assert_str_eq(sp->name, "initialize");
	cr_assert_eq(sp->kind, OTLP_KIND_SERVER);
	cr_assert_str_eq(sattr(sp, "mcp.protocol.version"), "2025-06-18");
	cr_assert_eq(sp->status, OTLP_STATUS_UNSET);
	cr_assert_eq(sp->start_ns, 1001000);
	cr_assert_eq(sp->end_ns, 1002000);

	sp = span_by(s.spans, NULL, "notifications/initialized");
	cr_assert_eq(sp->start_ns, sp->end_ns);
	cr_assert_null(json_object_get(sp->attrs, "jsonrpc.request.id"));
	cr_assert_str_eq(sattr(sp, "mcp.protocol.version"), "2025-06-18");

	sp = span_by(s.spans, "3", NULL);
	cr_assert_str_eq(sp->name, "tools/call echo");
	cr_assert_str_eq(sattr(sp, "gen_ai.tool.name"), "echo");
	cr_assert_str_eq(sattr(sp, "gen_ai.operation.name"), "execute_tool");
	cr_assert_eq(sp->has_parent, 1);
	cr_assert(memcmp(sp->trace_id, "\x0a\xf7\x65\x19\x16\xcd\x43\xdd"
	    "\x84\x48\xeb\x21\x1c\x80\x31\x9c", 16) == 0);
	cr_assert(memcmp(sp->parent_id, "\xb7\xad\x6b\x71\x69\x20\x33\x31",
	    8) == 0);
	cr_assert_str_eq(sp->trace_state, "a=b");
	/* the traceparent's flags 01, and a remote parent */
	cr_assert_eq(sp->flags, 0x301);
	cr_assert_eq(span_by(s.spans, "2", NULL)->flags, 0x100);
	cr_assert_eq(sp->status, OTLP_STATUS_UNSET);
	v = pval(sp, "gen_ai.tool.call.arguments");
	cr_assert(json_is_object(v));
	cr_assert_str_eq(json_string_value(json_object_get(v, "message")),
	    "hi");
	v = pval(sp, "gen_ai.tool.call.result");
	cr_assert(json_is_object(v));
	cr_assert(json_is_array(json_object_get(v, "content")));

	sp = span_by(s.spans, "4", NULL);	/* the number id */
	cr_assert_str_eq(sp->name, "tools/call fail");
	cr_assert_str_eq(sattr(sp, "error.type"), "tool_error");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	cr_assert_null(sp->status_message);
	cr_assert_null(pval(sp, "gen_ai.tool.call.result"));
	cr_assert_eq(sp->has_parent, 0);
	cr_assert_null(sp->trace_state);
	/* the string id "4" paired with its own answer */
	for (p = s.spans; p != NULL; p = p->next)
		if (strcmp(p->name, "tools/call strid") == 0)
			break;
	cr_assert_not_null(p);
	cr_assert_str_eq(sattr(p, "jsonrpc.request.id"), "4");
	cr_assert_eq(p->status, OTLP_STATUS_UNSET);
	cr_assert_eq(p->end_ns - p->start_ns, 3000);

	sp = span_by(s.spans, "5", NULL);	/* -32602 on SERVER: no error */
	cr_assert_str_eq(sp->name, "resources/read");
	cr_assert_str_eq(sattr(sp, "mcp.resource.uri"),
	    "test://static/resource/1");
	cr_assert_str_eq(sattr(sp, "rpc.response.status_code"), "-32602");
	cr_assert_null(json_object_get(sp->attrs, "error.type"));
	cr_assert_eq(sp->status, OTLP_STATUS_UNSET);

	sp = span_by(s.spans, "6", NULL);	/* -32603 on SERVER: error */
	cr_assert_str_eq(sp->name, "prompts/get simple");
	cr_assert_str_eq(sattr(sp, "gen_ai.prompt.name"), "simple");
	cr_assert_null(json_object_get(sp->attrs, "gen_ai.operation.name"));
	cr_assert_str_eq(sattr(sp, "gen_ai.prompt.variable.city"), "Paris");
	cr_assert_str_eq(sattr(sp, "gen_ai.prompt.variable.n"), "3");
	cr_assert_str_eq(sattr(sp, "rpc.response.status_code"), "-32603");
	cr_assert_str_eq(sattr(sp, "error.type"), "-32603");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	cr_assert_str_eq(sp->status_message, "internal");

	sp = span_by(s.spans, "0", NULL);	/* server's request: CLIENT */
	cr_assert_str_eq(sp->name, "sampling/createMessage");
	cr_assert_eq(sp->kind, OTLP_KIND_CLIENT);
	cr_assert_str_eq(sattr(sp, "error.type"), "-32602");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	cr_assert_str_eq(sp->status_message, "no");

	sp = span_by(s.spans, "7", NULL);
	cr_assert_str_eq(sattr(sp, "error.type"), "cancelled");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	p = span_by(s.spans, NULL, "notifications/cancelled");
	cr_assert_eq(sp->end_ns, p->start_ns);
	cr_assert_eq(p->status, OTLP_STATUS_UNSET);

	sp = span_by(s.spans, "8", NULL);
	cr_assert_str_eq(sattr(sp, "error.type"), "unanswered");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	cr_assert_eq(sp->end_ns, s.ts + 5000);

	otlp_span_free(s.spans);
	otlp_builder_free(s.b);
}

Test(otlp_span, client_side_mirrors, .timeout = UNIT_TIMEOUT)
{
	struct sess		 s;
	const struct otlp_span	*sp;

	run_session(&s, OTLP_SIDE_CLIENT);
	cr_assert_eq(nspans(s.spans), 12);
	sp = span_by(s.spans, "5", NULL);	/* -32602 on CLIENT: error */
	cr_assert_eq(sp->kind, OTLP_KIND_CLIENT);
	cr_assert_str_eq(sattr(sp, "error.type"), "-32602");
	cr_assert_eq(sp->status, OTLP_STATUS_ERROR);
	cr_assert_str_eq(sattr(sp, "server.address"), "127.0.0.1");
	cr_assert_eq(json_integer_value(json_object_get(sp->attrs,
	    "server.port")), 9);
	sp = span_by(s.spans, "0", NULL);	/* -32602 on SERVER: none */
	cr_assert_eq(sp->kind, OTLP_KIND_SERVER);
	/* the client side's SERVER spans: no client.address (the client
	   is the side mcpreel stands for) */
	cr_assert_null(json_object_get(sp->attrs, "client.address"));
	cr_assert_null(json_object_get(sp->attrs, "server.address"));
	cr_assert_null(json_object_get(sp->attrs, "error.type"));
	cr_assert_eq(sp->status, OTLP_STATUS_UNSET);
	sp = span_by(s.spans, NULL, "notifications/initialized");
	cr_assert_eq(sp->kind, OTLP_KIND_CLIENT);
	otlp_span_free(s.spans);
	otlp_builder_free(s.b);
}

Test(otlp_span, stdio_and_no_payloads, .timeout = UNIT_TIMEOUT)
{
	struct otlp_sess_info	 si = { .transport = "stdio", .started_ns = 1,
	    .target = "node server.js" };
	struct otlp_builder	*b = otlp_builder_new(&si, OTLP_SIDE_SERVER, 0);
	struct otlp_span	*out = NULL;
	struct msg		*m;

	m = mk(DIR_C2S, 10, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\",\"arguments\":{\"a\":1},"
	    "\"_meta\":{\"traceparent\":\"00-00000000000000000000000000000000-"
	    "b7ad6b7169203331-01\"}}}");
	/* the fact carries a payload; the builder was told not to use it */
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	m = mk(DIR_S2C, 5, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	cr_assert_eq(nspans(out), 1);
	cr_assert_str_eq(sattr(out, "network.transport"), "pipe");
	cr_assert_null(json_object_get(out->attrs, "network.protocol.name"));
	cr_assert_null(json_object_get(out->attrs, "client.address"));
	cr_assert_null(pval(out, "gen_ai.tool.call.arguments"));
	cr_assert_null(pval(out, "gen_ai.tool.call.result"));
	cr_assert_eq(out->has_parent, 0);	/* all-zero trace id */
	cr_assert_eq(out->end_ns, out->start_ns);	/* clock went back */
	otlp_span_free(out);
	otlp_builder_free(b);
}

/* A payload jansson cannot hold (an integer past int64) stays its text. */
Test(otlp_span, payload_that_does_not_parse, .timeout = UNIT_TIMEOUT)
{
	struct otlp_builder	*b = otlp_builder_new(&test_info,
	    OTLP_SIDE_SERVER, 1);
	struct otlp_span	*out = NULL;
	struct msg		*m;
	json_t			*v;

	m = mk(DIR_C2S, 10, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\",\"arguments\":{\"n\":"
	    "123456789012345678901234567890}}}");
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	/* a truncated error answer: an error, though its code is unknown */
	m = mk(DIR_S2C, 20, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}");
	m->flags = MSG_TRUNCATED;
	m->ident = strdup("{\"id\":1,\"error\":null}");
	m->ident_len = strlen(m->ident);
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	cr_assert_eq(nspans(out), 1);
	v = pval(out, "gen_ai.tool.call.arguments");
	cr_assert(json_is_string(v));
	cr_assert_str_eq(json_string_value(v),
	    "{\"n\":123456789012345678901234567890}");
	cr_assert_str_eq(sattr(out, "error.type"), "_OTHER");
	cr_assert_null(json_object_get(out->attrs, "rpc.response.status_code"));
	cr_assert_eq(out->status, OTLP_STATUS_ERROR);
	cr_assert_eq(out->end_ns, 20);
	otlp_span_free(out);
	otlp_builder_free(b);
}

/*
 * A 2026-07-28 session: each request names its version in _meta; the
 * session has no MCP session, so no span has mcp.session.id, and a
 * notification without _meta takes the session's version.
 */
Test(otlp_span, sessionless_2026, .timeout = UNIT_TIMEOUT)
{
	struct sess		 s;
	const struct otlp_span	*sp;
	size_t			 n = 0;

	memset(&s, 0, sizeof s);
	s.b = otlp_builder_new(&test_info, OTLP_SIDE_SERVER, 0);
	feed(&s, DIR_C2S, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server/discover\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
	feed(&s, DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	feed(&s, DIR_C2S, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\",\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
	feed(&s, DIR_S2C, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	feed(&s, DIR_S2C, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/updated\",\"params\":{\"uri\":\"x:/\"}}");
	otlp_builder_end(s.b, s.ts + 1, &s.spans);
	cr_assert_eq(nspans(s.spans), 3);
	for (sp = s.spans; sp != NULL; sp = sp->next, n++) {
		cr_assert_null(json_object_get(sp->attrs, "mcp.session.id"),
		    "%s", sp->name);
		cr_assert_str_eq(sattr(sp, "mcp.protocol.version"),
		    "2026-07-28", "%s", sp->name);
	}
	otlp_span_free(s.spans);
	otlp_builder_free(s.b);

	/* an older session keeps its mcp.session.id; a per-request version
	   still names the span's version */
	memset(&s, 0, sizeof s);
	s.b = otlp_builder_new(&test_info, OTLP_SIDE_SERVER, 0);
	feed(&s, DIR_C2S, "{\"jsonrpc\":\"2.0\",\"method\":\"n/x\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2025-11-25\"}}}");
	feed(&s, DIR_C2S, "{\"jsonrpc\":\"2.0\",\"method\":\"n/y\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"DRAFT-2027\"}}}");
	cr_assert_eq(nspans(s.spans), 2);
	cr_assert_str_eq(sattr(s.spans, "mcp.protocol.version"), "2025-11-25");
	cr_assert_not_null(sattr(s.spans, "mcp.session.id"));
	cr_assert_str_eq(sattr(s.spans->next, "mcp.protocol.version"),
	    "DRAFT-2027");
	cr_assert_null(sattr(s.spans->next, "mcp.session.id"));
	otlp_span_free(s.spans);
	otlp_builder_free(s.b);
}

/*
 * Payload memory: requests waiting hold their payloads as text, at most
 * OTLP_PAYLOAD_PENDING_MAX of it (past it left out and said so), and a
 * payload of more than OTLP_VALUE_NODES values is encoded as its text.
 */
Test(otlp_span, payload_memory_bound, .timeout = UNIT_TIMEOUT)
{
	struct otlp_builder	*b = otlp_builder_new(&test_info,
	    OTLP_SIDE_SERVER, 1);
	struct otlp_span	*out = NULL, *sp;
	struct msg		*m;
	char			*text, *args;
	size_t			 i, n = 200, alen = 60 * 1024, with = 0, omit = 0;
	json_t			*v;

	args = malloc(alen + 1);
	args[0] = '[';
	for (i = 1; i + 3 < alen; i += 3)
		memcpy(args + i, "{},", 3);
	memcpy(args + i - 1, "]", 2);	/* replaces the last comma */
	for (i = 0; i < n; i++) {
		xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"e\",\"arguments\":"
		    "%s}}", i, args);
		m = mk(DIR_C2S, (int64_t)i + 1, text);
		otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
		msg_free(m);
		free(text);
	}
	cr_assert_null(out);
	otlp_builder_end(b, 1000, &out);
	cr_assert_eq(nspans(out), n);
	for (sp = out; sp != NULL; sp = sp->next) {
		if (sp->payloads != NULL) {
			with++;
			cr_assert_null(sattr(sp, "mcpreel.payload_omitted"));
		} else {
			omit++;
			cr_assert_str_eq(sattr(sp, "mcpreel.payload_omitted"),
			    "gen_ai.tool.call.arguments");
		}
	}
	cr_assert_eq(with, OTLP_PAYLOAD_PENDING_MAX / strlen(args));
	cr_assert_eq(with + omit, n);
	/* 20k values: over the node budget, so its JSON text */
	v = pval(out, "gen_ai.tool.call.arguments");
	cr_assert(json_is_string(v));
	cr_assert_eq(json_string_length(v), strlen(args));
	otlp_span_free(out);
	out = NULL;

	/* all answered: the budget is free again */
	xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\",\"arguments\":"
	    "[1,2,{\"a\":[]}]}}");
	m = mk(DIR_C2S, 2000, text);
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	free(text);
	otlp_builder_end(b, 3000, &out);
	cr_assert_eq(nspans(out), 1);
	v = pval(out, "gen_ai.tool.call.arguments");
	cr_assert(json_is_array(v));
	cr_assert_eq(json_array_size(v), 3);
	pval(NULL, NULL);
	otlp_span_free(out);
	otlp_builder_free(b);
	free(args);
}

/*
 * prompts/get variables each on its own: a lone surrogate in one is
 * U+FFFD and drops none of the others.
 */
Test(otlp_span, prompt_variables_one_by_one, .timeout = UNIT_TIMEOUT)
{
	struct otlp_builder	*b = otlp_builder_new(&test_info,
	    OTLP_SIDE_SERVER, 1);
	struct otlp_span	*out = NULL;
	struct msg		*m;

	m = mk(DIR_C2S, 10, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"prompts/get\",\"params\":{\"name\":\"p\",\"arguments\":{"
	    "\"x\":\"a\\ud800b\",\"y\":\"ok\",\"n\":[1, 2]}}}");
	otlp_builder_fact(b, otlp_fact_new(m, 1), &out);
	msg_free(m);
	otlp_builder_end(b, 20, &out);
	cr_assert_eq(nspans(out), 1);
	cr_assert_str_eq(sattr(out, "gen_ai.prompt.variable.x"),
	    "a\xef\xbf\xbd" "b");
	cr_assert_str_eq(sattr(out, "gen_ai.prompt.variable.y"), "ok");
	cr_assert_str_eq(sattr(out, "gen_ai.prompt.variable.n"), "[1, 2]");
	otlp_span_free(out);
	otlp_builder_free(b);
}

/* An error code past int64: error.type _OTHER and the code as written. */
Test(otlp_span, error_code_out_of_range, .timeout = UNIT_TIMEOUT)
{
	static const char *const codes[] = { "99999999999999999999",
	    "-9223372036854775809", "123456789012345678901234567890123" };
	struct otlp_builder	*b;
	struct otlp_span	*out;
	struct msg		*m;
	char			*text;
	size_t			 i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		b = otlp_builder_new(&test_info, OTLP_SIDE_CLIENT, 0);
		out = NULL;
		m = mk(DIR_C2S, 10, "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"ping\"}");
		otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
		msg_free(m);
		xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
		    "{\"code\":%s,\"message\":\"m\"}}", codes[i]);
		m = mk(DIR_S2C, 20, text);
		free(text);
		otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
		msg_free(m);
		cr_assert_eq(nspans(out), 1);
		cr_assert_str_eq(sattr(out, "error.type"), "_OTHER");
		cr_assert_str_eq(sattr(out, "rpc.response.status_code"),
		    codes[i]);
		cr_assert_str_eq(out->status_message, "m");
		otlp_span_free(out);
		otlp_builder_free(b);
	}
}

/*
 * Long ids pair by all of their text (a SHA-256 past OTLP_ID_KEY_MAX),
 * not by the first OTLP_STRING_MAX bytes the attribute keeps; a cut
 * string id is still its text, even cut inside an escape.
 */
Test(otlp_span, long_ids_pair_whole, .timeout = UNIT_TIMEOUT)
{
	static const size_t	 lens[] = { 2000, 9000 };
	struct otlp_builder	*b;
	struct otlp_span	*out;
	struct msg		*m;
	char			*base, *text;
	size_t			 li, i, n;
	const char		*v;

	for (li = 0; li < 2; li++) {
		n = lens[li];
		b = otlp_builder_new(&test_info, OTLP_SIDE_SERVER, 0);
		out = NULL;
		base = malloc(n + 1);
		for (i = 0; i < n; i++)		/* \" escapes throughout */
			base[i] = i % 2 == 0 ? '\\' : '"';
		base[n] = '\0';
		for (i = 0; i < 2; i++) {	/* ids "<base>A", "<base>B" */
			xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":\"%s%c\","
			    "\"method\":\"ping\"}", base, (int)('A' + i));
			m = mk(DIR_C2S, 10 + (int64_t)i, text);
			otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
			msg_free(m);
			free(text);
		}
		cr_assert_null(out, "len %zu: the second ended the first", n);
		/* B answered first and with an error, then A cancelled */
		xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":\"%sB\","
		    "\"error\":{\"code\":-1,\"message\":\"b\"}}", base);
		m = mk(DIR_S2C, 20, text);
		otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
		msg_free(m);
		free(text);
		xasprintf(&text, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/cancelled\",\"params\":{\"requestId\":"
		    "\"%sA\"}}", base);
		m = mk(DIR_C2S, 30, text);
		otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
		msg_free(m);
		free(text);
		cr_assert_eq(nspans(out), 3);
		cr_assert_str_eq(out->status_message, "b");
		cr_assert_eq(out->start_ns, 11);
		cr_assert_str_eq(sattr(out->next, "error.type"), "cancelled");
		cr_assert_eq(out->next->start_ns, 10);
		/* the attribute: the id's value cut, not empty */
		v = sattr(out, "jsonrpc.request.id");
		cr_assert_geq(strlen(v), 500);
		cr_assert_eq(v[0], '"');
		otlp_span_free(out);
		otlp_builder_free(b);
		free(base);
	}
}

/*
 * A \u0000 in a string is kept (its length explicit): in the attribute,
 * the span's name and its status message, in protobuf as a NUL byte and
 * in OTLP/JSON as \u0000; a method with a NUL is no known method.
 */
Test(otlp_span, nul_kept, .timeout = UNIT_TIMEOUT)
{
	static const char	 uri[] = "file:///\xef\xbf\xbd\0tail";
	static const char	 name[] = "tools/call e\0x";
	struct otlp_builder	*b = otlp_builder_new(&test_info,
	    OTLP_SIDE_SERVER, 0);
	struct otlp_resource	 r = { NULL, NULL };
	struct otlp_span	*out = NULL;
	struct obuf		 o;
	struct msg		*m;
	json_t			*v;

	m = mk(DIR_C2S, 10, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":"
	    "\"file:///\\udfff\\u0000tail\"}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	m = mk(DIR_C2S, 11, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"e\\u0000x\"}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	m = mk(DIR_C2S, 12, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"tools/call\\u0000\",\"params\":{\"name\":\"n\"}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	m = mk(DIR_S2C, 20, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{"
	    "\"code\":-32000,\"message\":\"a\\u0000b\"}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	otlp_builder_end(b, 30, &out);
	cr_assert_eq(nspans(out), 3);
	/* the notification with a NUL in its method: no tool, no target */
	cr_assert_eq(out->name_len, 11);
	cr_assert(memcmp(out->name, "tools/call\0", 11) == 0);
	cr_assert_null(json_object_get(out->attrs, "gen_ai.tool.name"));
	cr_assert_eq(json_string_length(json_object_get(out->attrs,
	    "mcp.method.name")), 11);
	/* tools/call e\0x: name, tool name and status message whole */
	cr_assert_eq(out->next->name_len, sizeof name - 1);
	cr_assert(memcmp(out->next->name, name, sizeof name - 1) == 0);
	v = json_object_get(out->next->attrs, "gen_ai.tool.name");
	cr_assert_eq(json_string_length(v), 3);
	cr_assert_eq(out->next->status_message_len, 3);
	cr_assert(memcmp(out->next->status_message, "a\0b", 3) == 0);
	/* the uri: U+FFFD, NUL, tail */
	v = json_object_get(out->next->next->attrs, "mcp.resource.uri");
	cr_assert_eq(json_string_length(v), sizeof uri - 1);
	cr_assert(memcmp(json_string_value(v), uri, sizeof uri - 1) == 0);

	obuf_init(&o);
	otlp_pb_traces(&r, out, &o);
	cr_assert_not_null(memmem(o.p, o.len, uri, sizeof uri - 1));
	cr_assert_not_null(memmem(o.p, o.len, name, sizeof name - 1));
	cr_assert_not_null(memmem(o.p, o.len, "a\0b", 3));
	obuf_reset(&o);
	otlp_json_traces(&r, out, &o);
	cr_assert_not_null(memmem(o.p, o.len, "tail", 4));
	cr_assert_not_null(memmem(o.p, o.len, "\\u0000tail", 10));
	cr_assert_not_null(memmem(o.p, o.len, "e\\u0000x", 8));
	cr_assert_not_null(memmem(o.p, o.len, "a\\u0000b", 8));
	obuf_free(&o);
	otlp_span_free(out);
	otlp_builder_free(b);
}

Test(otlp_span, traceparent_rules, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*tp;
		int		 ok;
	} cases[] = {
		{ TP, 1 },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", 1 },
		{ "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", 0 },
		{ "00-00000000000000000000000000000000-b7ad6b7169203331-01", 0 },
		{ "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", 0 },
		/* a later version: its first 55 characters, as W3C says */
		{ "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", 1 },
		{ "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-xyz",
		    1 },
		{ "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x", 0 },
		{ "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", 0 },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x", 0 },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0", 0 },
		{ "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-", 0 },
		{ "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", 0 },
		{ "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01", 0 },
		{ "", 0 },
	};
	uint8_t	 t[16], s[8];
	size_t	 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(otlp_traceparent_parse(cases[i].tp, t, s) == 0,
		    cases[i].ok, "case %zu: %s", i, cases[i].tp);
	cr_assert_eq(otlp_traceparent_parse(NULL, t, s), -1);
}

Test(otlp_span, pending_bound, .timeout = UNIT_TIMEOUT)
{
	struct otlp_builder	*b = otlp_builder_new(&test_info,
	    OTLP_SIDE_SERVER, 0);
	struct otlp_span	*out = NULL;
	struct msg		*m;
	char			 text[128];
	size_t			 i;

	for (i = 0; i <= OTLP_PENDING_MAX; i++) {
		snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"ping\"}", i);
		m = mk(DIR_C2S, (int64_t)i + 1, text);
		otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
		msg_free(m);
	}
	/* the oldest pushed out when one more came */
	cr_assert_eq(nspans(out), 1);
	cr_assert_str_eq(sattr(out, "jsonrpc.request.id"), "0");
	cr_assert_str_eq(sattr(out, "error.type"), "unanswered");
	cr_assert_eq(out->end_ns, OTLP_PENDING_MAX + 1);
	/* its late answer pairs with nothing */
	m = mk(DIR_S2C, 99999, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	cr_assert_eq(nspans(out), 1);
	m = mk(DIR_S2C, 99999, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	otlp_builder_fact(b, otlp_fact_new(m, 0), &out);
	msg_free(m);
	cr_assert_eq(nspans(out), 2);
	cr_assert_eq(out->next->status, OTLP_STATUS_UNSET);
	otlp_builder_end(b, 200000, &out);
	cr_assert_eq(nspans(out), OTLP_PENDING_MAX + 1);
	otlp_span_free(out);
	otlp_builder_free(b);
}

Test(otlp_span, session_key_is_stable, .timeout = UNIT_TIMEOUT)
{
	struct otlp_sess_info	 a = test_info, c = test_info;
	char			 k1[33], k2[33], k3[33];
	uint8_t			 t1[16], t2[16];

	otlp_session_key(&a, k1);
	otlp_session_key(&a, k2);
	cr_assert_str_eq(k1, k2);
	c.started_ns++;
	otlp_session_key(&c, k3);
	cr_assert_str_neq(k1, k3);
	otlp_session_trace_id(&a, t1);
	otlp_session_trace_id(&c, t2);
	cr_assert(memcmp(t1, t2, 16) != 0);
	/* the trace id is not the session id */
	cr_assert(scan_hex_value(k1[0]) << 4 != t1[0] ||
	    scan_hex_value(k1[1]) != (t1[0] & 0xf) ||
	    scan_hex_value(k1[2]) << 4 != t1[1]);
}

/* A protobuf field walker: the n-th (from 0) field number f of buf. */
struct pbf {
	int		 wire;
	uint64_t	 v;		/* varint, fixed64 */
	const uint8_t	*p;		/* length-delimited */
	size_t		 len;
};

static int
pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int	 shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		*v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return 0;
		shift += 7;
	}
	return -1;
}

/* Walk all of buf (asserting it is well formed); find field f's n-th. */
static int
pb_find(const uint8_t *buf, size_t len, unsigned f, size_t n,
    struct pbf *out)
{
	const uint8_t	*p = buf, *end = buf + len;
	uint64_t	 tag, v;
	size_t		 seen = 0;
	int		 found = 0;
	struct pbf	 cur;

	while (p < end) {
		cr_assert_eq(pb_varint(&p, end, &tag), 0);
		memset(&cur, 0, sizeof cur);
		cur.wire = (int)(tag & 7);
		switch (cur.wire) {
		case 0:
			cr_assert_eq(pb_varint(&p, end, &cur.v), 0);
			break;
		case 1:
			cr_assert_leq(8, (size_t)(end - p));
			memcpy(&cur.v, p, 8);
			p += 8;
			break;
		case 5:
			cr_assert_leq(4, (size_t)(end - p));
			cur.v = (uint64_t)p[0] | (uint64_t)p[1] << 8 |
			    (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
			p += 4;
			break;
		case 2:
			cr_assert_eq(pb_varint(&p, end, &v), 0);
			cr_assert_leq(v, (uint64_t)(end - p));
			cur.p = p;
			cur.len = (size_t)v;
			p += v;
			break;
		default:
			cr_assert_fail("wire type %d", cur.wire);
		}
		if ((tag >> 3) == f && seen++ == n) {
			*out = cur;
			found = 1;
		}
	}
	return found;
}

static size_t
pb_count(const uint8_t *buf, size_t len, unsigned f)
{
	struct pbf	 x;
	size_t		 n = 0;

	while (pb_find(buf, len, f, n, &x))
		n++;
	return n;
}

/* The string value of attribute key among the KeyValues (field kvf). */
static int
pb_attr(const uint8_t *buf, size_t len, unsigned kvf, const char *key,
    struct pbf *value)
{
	struct pbf	 kv, k;
	size_t		 i;

	for (i = 0; pb_find(buf, len, kvf, i, &kv); i++) {
		cr_assert(pb_find(kv.p, kv.len, 1, 0, &k));
		if (k.len == strlen(key) && memcmp(k.p, key, k.len) == 0) {
			cr_assert(pb_find(kv.p, kv.len, 2, 0, value));
			return 1;
		}
	}
	return 0;
}

static int
pb_streq(const struct pbf *f, const char *s)
{
	return f->wire == 2 && f->len == strlen(s) &&
	    memcmp(f->p, s, f->len) == 0;
}

/* Two spans for the encoders: one plain, one with every kind of value. */
static struct otlp_span *
enc_spans(void)
{
	struct otlp_span	*a = calloc(1, sizeof *a);
	struct otlp_span	*b = calloc(1, sizeof *b);
	json_t			*deep, *arr;
	int			 i;

	memset(a->trace_id, 0xab, 16);
	memset(a->span_id, 0x01, 8);
	a->name = strdup("tools/call echo");
	a->kind = OTLP_KIND_SERVER;
	a->start_ns = 1700000000123456789LL;
	a->end_ns = 1700000000223456789LL;
	a->status = OTLP_STATUS_ERROR;
	a->status_message = strdup("internal \xc3\xa9rror");
	a->attrs = json_pack("{s:s,s:i,s:b,s:f,s:{s:[i,s,n]}}",
	    "mcp.method.name", "tools/call", "client.port", -5,
	    "flag", 1, "ratio", 0.5, "gen_ai.tool.call.arguments",
	    "a", 1, "x", "y");
	/* 40 levels of arrays: from level 32 down a JSON text */
	deep = json_integer(7);
	for (i = 0; i < 40; i++) {
		arr = json_array();
		json_array_append_new(arr, deep);
		deep = arr;
	}
	memset(b->trace_id, 0xcd, 16);
	memset(b->span_id, 0x02, 8);
	memset(b->parent_id, 0x03, 8);
	b->has_parent = 1;
	b->flags = 0x301;
	b->trace_state = strdup("k=v");
	b->name = strdup("notifications/initialized");
	b->kind = OTLP_KIND_CLIENT;
	b->start_ns = b->end_ns = 5;
	b->attrs = json_pack("{s:o}", "deep", deep);
	a->next = b;
	return a;
}

Test(otlp_pb, fields_read_back, .timeout = UNIT_TIMEOUT)
{
	struct otlp_span	*spans = enc_spans();
	json_t			*rattrs = json_pack("{s:s,s:s}",
	    "deployment.environment", "test", "service.name", "ignored");
	struct otlp_resource	 r = { "svc", rattrs };
	struct obuf		 o, o2;
	struct pbf		 rs, res, ss, scope, sp, f, v, lst, any;
	size_t			 depth;

	obuf_init(&o);
	obuf_init(&o2);
	otlp_pb_traces(&r, spans, &o);
	otlp_pb_traces(&r, spans, &o2);
	cr_assert_eq(o.len, o2.len);
	cr_assert(memcmp(o.p, o2.p, o.len) == 0, "not deterministic");

	cr_assert_eq(pb_count(o.p, o.len, 1), 1);
	cr_assert(pb_find(o.p, o.len, 1, 0, &rs));
	cr_assert(pb_find(rs.p, rs.len, 1, 0, &res));
	cr_assert(pb_attr(res.p, res.len, 1, "service.name", &v));
	cr_assert(pb_find(v.p, v.len, 1, 0, &f) && pb_streq(&f, "svc"));
	cr_assert(pb_attr(res.p, res.len, 1, "deployment.environment", &v));
	cr_assert(pb_attr(res.p, res.len, 1, "telemetry.sdk.name", &v));
	cr_assert(pb_find(v.p, v.len, 1, 0, &f) && pb_streq(&f, "mcpreel"));
	cr_assert(pb_attr(res.p, res.len, 1, "telemetry.sdk.version", &v));
	cr_assert(pb_find(v.p, v.len, 1, 0, &f) &&
	    pb_streq(&f, MCPREEL_VERSION));
	cr_assert_eq(pb_count(res.p, res.len, 1), 4);	/* one service.name */

	cr_assert(pb_find(rs.p, rs.len, 2, 0, &ss));
	cr_assert(pb_find(ss.p, ss.len, 1, 0, &scope));
	cr_assert(pb_find(scope.p, scope.len, 1, 0, &f) &&
	    pb_streq(&f, "mcpreel"));
	cr_assert(pb_find(scope.p, scope.len, 2, 0, &f) &&
	    pb_streq(&f, MCPREEL_VERSION));
	cr_assert_eq(pb_count(ss.p, ss.len, 2), 2);

	cr_assert(pb_find(ss.p, ss.len, 2, 0, &sp));
	cr_assert(pb_find(sp.p, sp.len, 1, 0, &f) && f.len == 16 &&
	    f.p[0] == 0xab);
	cr_assert(pb_find(sp.p, sp.len, 2, 0, &f) && f.len == 8 &&
	    f.p[7] == 0x01);
	cr_assert_not(pb_find(sp.p, sp.len, 4, 0, &f));
	cr_assert_not(pb_find(sp.p, sp.len, 16, 0, &f));	/* flags 0 */
	cr_assert(pb_find(sp.p, sp.len, 5, 0, &f) &&
	    pb_streq(&f, "tools/call echo"));
	cr_assert(pb_find(sp.p, sp.len, 6, 0, &f) && f.wire == 0 &&
	    f.v == OTLP_KIND_SERVER);
	cr_assert(pb_find(sp.p, sp.len, 7, 0, &f) && f.wire == 1 &&
	    f.v == 1700000000123456789ULL);
	cr_assert(pb_find(sp.p, sp.len, 8, 0, &f) && f.wire == 1 &&
	    f.v == 1700000000223456789ULL);
	cr_assert(pb_find(sp.p, sp.len, 15, 0, &f));
	cr_assert(pb_find(f.p, f.len, 3, 0, &v) && v.v == OTLP_STATUS_ERROR);
	cr_assert(pb_find(f.p, f.len, 2, 0, &v) &&
	    pb_streq(&v, "internal \xc3\xa9rror"));
	cr_assert_eq(pb_count(sp.p, sp.len, 9), 5, "%zu", pb_count(sp.p, sp.len, 9));
	cr_assert(pb_attr(sp.p, sp.len, 9, "client.port", &v));
	cr_assert(pb_find(v.p, v.len, 3, 0, &f) && f.wire == 0 &&
	    (int64_t)f.v == -5);
	cr_assert(pb_attr(sp.p, sp.len, 9, "flag", &v));
	cr_assert(pb_find(v.p, v.len, 2, 0, &f) && f.v == 1);
	cr_assert(pb_attr(sp.p, sp.len, 9, "ratio", &v));
	cr_assert(pb_find(v.p, v.len, 4, 0, &f) && f.wire == 1);
	{
		double	 d;

		memcpy(&d, &f.v, 8);
		cr_assert_float_eq(d, 0.5, 1e-12);
	}
	/* a kvlist {a: [1, "y", null]} */
	cr_assert(pb_attr(sp.p, sp.len, 9, "gen_ai.tool.call.arguments", &v));
	cr_assert(pb_find(v.p, v.len, 6, 0, &lst));
	cr_assert(pb_attr(lst.p, lst.len, 1, "a", &any));
	cr_assert(pb_find(any.p, any.len, 5, 0, &lst));
	cr_assert_eq(pb_count(lst.p, lst.len, 1), 3);
	cr_assert(pb_find(lst.p, lst.len, 1, 2, &any));
	cr_assert_eq(any.len, 0);		/* null: an empty AnyValue */

	cr_assert(pb_find(ss.p, ss.len, 2, 1, &sp));
	cr_assert(pb_find(sp.p, sp.len, 3, 0, &f) && pb_streq(&f, "k=v"));
	cr_assert(pb_find(sp.p, sp.len, 4, 0, &f) && f.len == 8 &&
	    f.p[0] == 0x03);
	cr_assert(pb_find(sp.p, sp.len, 6, 0, &f) && f.v == OTLP_KIND_CLIENT);
	cr_assert_not(pb_find(sp.p, sp.len, 15, 0, &f));
	/* Span.flags: fixed32 field 16 */
	cr_assert(pb_find(sp.p, sp.len, 16, 0, &f) && f.wire == 5 &&
	    f.v == 0x301);
	/* down the deep array: 32 array levels, then a JSON text */
	cr_assert(pb_attr(sp.p, sp.len, 9, "deep", &v));
	for (depth = 0; depth < OTLP_VALUE_DEPTH; depth++) {
		cr_assert(pb_find(v.p, v.len, 5, 0, &lst), "level %zu", depth);
		cr_assert(pb_find(lst.p, lst.len, 1, 0, &v));
	}
	cr_assert(pb_find(v.p, v.len, 1, 0, &f));
	cr_assert(pb_streq(&f, "[[[[[[[[7]]]]]]]]"), "%.*s", (int)f.len,
	    f.p);

	obuf_free(&o);
	obuf_free(&o2);
	otlp_span_free(spans);
	json_decref(rattrs);
}

Test(otlp_json, shape_read_back, .timeout = UNIT_TIMEOUT)
{
	struct otlp_span	*spans = enc_spans();
	struct otlp_resource	 r = { NULL, NULL };
	struct obuf		 o, o2;
	json_t			*j, *rs, *sp, *attrs, *a, *v;
	json_error_t		 e;
	size_t			 i, depth;

	obuf_init(&o);
	obuf_init(&o2);
	otlp_json_traces(&r, spans, &o);
	otlp_json_traces(&r, spans, &o2);
	cr_assert_eq(o.len, o2.len);
	cr_assert(memcmp(o.p, o2.p, o.len) == 0);
	cr_assert_null(memchr(o.p, '\n', o.len));
	j = json_loadb((const char *)o.p, o.len, 0, &e);
	cr_assert_not_null(j, "%s", e.text);

	rs = json_array_get(json_object_get(j, "resourceSpans"), 0);
	attrs = json_object_get(json_object_get(rs, "resource"),
	    "attributes");
	a = json_array_get(attrs, 0);
	cr_assert_str_eq(json_string_value(json_object_get(a, "key")),
	    "service.name");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(a,
	    "value"), "stringValue")), "mcpreel");
	v = json_array_get(json_object_get(rs, "scopeSpans"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(v,
	    "scope"), "name")), "mcpreel");
	cr_assert_eq(json_array_size(json_object_get(v, "spans")), 2);

	sp = json_array_get(json_object_get(v, "spans"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(sp, "traceId")),
	    "abababababababababababababababab");
	cr_assert_str_eq(json_string_value(json_object_get(sp, "spanId")),
	    "0101010101010101");
	cr_assert_null(json_object_get(sp, "parentSpanId"));
	cr_assert_null(json_object_get(sp, "flags"));
	cr_assert_eq(json_integer_value(json_object_get(sp, "kind")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(sp,
	    "startTimeUnixNano")), "1700000000123456789");
	cr_assert_str_eq(json_string_value(json_object_get(sp,
	    "endTimeUnixNano")), "1700000000223456789");
	v = json_object_get(sp, "status");
	cr_assert_eq(json_integer_value(json_object_get(v, "code")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(v, "message")),
	    "internal \xc3\xa9rror");
	attrs = json_object_get(sp, "attributes");
	cr_assert_eq(json_array_size(attrs), 5);
	json_array_foreach(attrs, i, a) {
		const char	*k = json_string_value(json_object_get(a, "key"));

		v = json_object_get(a, "value");
		if (strcmp(k, "client.port") == 0)
			cr_assert_str_eq(json_string_value(json_object_get(v,
			    "intValue")), "-5");
		else if (strcmp(k, "flag") == 0)
			cr_assert(json_is_true(json_object_get(v,
			    "boolValue")));
		else if (strcmp(k, "ratio") == 0)
			cr_assert_float_eq(json_real_value(json_object_get(v,
			    "doubleValue")), 0.5, 1e-12);
		else if (strcmp(k, "gen_ai.tool.call.arguments") == 0) {
			v = json_object_get(json_object_get(v, "kvlistValue"),
			    "values");
			cr_assert_eq(json_array_size(v), 1);
			v = json_object_get(json_object_get(json_array_get(v,
			    0), "value"), "arrayValue");
			cr_assert_eq(json_array_size(json_object_get(v,
			    "values")), 3);
		}
	}

	sp = json_array_get(json_object_get(json_array_get(json_object_get(rs,
	    "scopeSpans"), 0), "spans"), 1);
	cr_assert_str_eq(json_string_value(json_object_get(sp,
	    "parentSpanId")), "0303030303030303");
	cr_assert_str_eq(json_string_value(json_object_get(sp, "traceState")),
	    "k=v");
	cr_assert_eq(json_integer_value(json_object_get(sp, "flags")), 0x301);
	cr_assert_null(json_object_get(sp, "status"));
	v = json_object_get(json_array_get(json_object_get(sp, "attributes"),
	    0), "value");
	for (depth = 0; depth < OTLP_VALUE_DEPTH; depth++) {
		v = json_array_get(json_object_get(json_object_get(v,
		    "arrayValue"), "values"), 0);
		cr_assert_not_null(v, "level %zu", depth);
	}
	cr_assert_str_eq(json_string_value(json_object_get(v, "stringValue")),
	    "[[[[[[[[7]]]]]]]]");

	json_decref(j);
	obuf_free(&o);
	obuf_free(&o2);
	otlp_span_free(spans);
}
