/*
 * otlp_file.c: a recorded session as OpenTelemetry spans (export
 * --format otlp).  Its messages in the order recorded go through the
 * same facts and span builder record --otlp uses live, from the same
 * start, transport and target (so the same trace id and mcp.session.id),
 * to a file as OTLP/JSON lines or through the exporter to a collector.
 * Every message recorded is read, as the tap saw it live: a fault's
 * original and injected messages too.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats.h"
#include "store.h"

/*
 * Spans in one line of the file: one ExportTraceServiceRequest, as the
 * exporter batches them (and the Collector's file exporter writes).
 */
#define OTLP_FILE_SPANS		512
/*
 * How long the end of an export to a collector waits for what is queued
 * beyond one export's own timeout (retries included): then the rest is
 * dropped and counted.
 */
#define OTLP_FILE_STOP_EXTRA_MS	5000

/* One export being made. */
struct otlp_file {
	const struct otlp_config *cfg;
	struct otlp_resource	 res;
	struct otlp_sess_info	 info;
	char			*transport;
	char			*target;
	char			*client;	/* HTTP: the client's address */
	int64_t			 end_ns;	/* the session's end, or the
						   last message's time */
	struct otlp_url		 url;		/* http, sse: the upstream */
	int			 has_url;

	/* To a file. */
	FILE			*out;
	struct otlp_builder	*b;
	struct otlp_span	*batch;
	struct otlp_span	**tail;
	size_t			 nbatch;
	struct obuf		 buf;
	uint64_t		 spans;
	int			 write_failed;

	/* To a collector. */
	struct otlp		*o;
	struct otlp_sess	*os;
};

/* The session's row: what every span says of it. */
static int
otlp_file_info_cb(const struct session_info *si, void *arg)
{
	struct otlp_file	*f = arg;
	char			*why = NULL;

	f->transport = xstrdup(si->transport != NULL ? si->transport :
	    "stdio");
	f->target = xstrdup(si->target != NULL ? si->target : "");
	f->info.transport = f->transport;
	f->info.target = f->target;
	f->info.started_ns = si->started_ns;
	f->end_ns = si->has_ended ? si->ended_ns : si->started_ns;
	if (si->client_address != NULL) {
		f->client = xstrdup(si->client_address);
		f->info.client_address = f->client;
		f->info.client_port = si->client_port;
	}
	/* Over HTTP the server is the upstream, as record names it live. */
	if (strcmp(f->transport, "stdio") != 0 &&
	    otlp_url_parse(f->target, &f->url, &why) == 0) {
		f->has_url = 1;
		f->info.server_address = f->url.host;
		f->info.server_port = atoi(f->url.port);
	}
	free(why);
	return 0;
}

/* Write the batch as one line of the file. */
static void
otlp_file_flush(struct otlp_file *f)
{
	if (f->batch == NULL)
		return;
	obuf_reset(&f->buf);
	otlp_json_traces(&f->res, f->batch, &f->buf);
	obuf_byte(&f->buf, '\n');
	if (fwrite(f->buf.p, 1, f->buf.len, f->out) != f->buf.len)
		f->write_failed = 1;
	otlp_span_free(f->batch);
	f->batch = NULL;
	f->tail = &f->batch;
	f->nbatch = 0;
}

/* Take the spans the builder completed (a list) into the batch. */
static void
otlp_file_take(struct otlp_file *f, struct otlp_span *s)
{
	struct otlp_span	*next;

	for (; s != NULL; s = next) {
		next = s->next;
		s->next = NULL;
		*f->tail = s;
		f->tail = &s->next;
		f->spans++;
		if (++f->nbatch == OTLP_FILE_SPANS)
			otlp_file_flush(f);
	}
}

/*
 * The message of a row: its bytes, or for one recorded as a prefix (the
 * record cap) its identity from the row's kind, method and id, as the
 * tap had it from ident.c live.
 */
static struct msg *
otlp_file_msg(const struct message_row *r)
{
	struct msg	*m = msg_new(r->dir, r->raw, r->len);
	char		*method = NULL, *id;
	json_t		*js;

	m->ts_ns = r->ts_ns;
	m->mono_ns = r->mono_ns;
	if (!r->truncated)
		return m;
	m->flags |= MSG_TRUNCATED;
	id = (char *)(r->rpc_id != NULL ? r->rpc_id : "");
	if (r->method != NULL && (js = json_string(r->method)) != NULL) {
		method = json_dumps(js, JSON_ENCODE_ANY);
		json_decref(js);
	}
	switch (r->kind) {
	case KIND_REQUEST:
	case KIND_NOTIFICATION:
		if (method == NULL)
			break;
		xasprintf(&m->ident, "{\"method\":%s%s%s}", method,
		    r->kind == KIND_REQUEST && *id != '\0' ? ",\"id\":" : "",
		    r->kind == KIND_REQUEST ? id : "");
		break;
	case KIND_RESPONSE:
	case KIND_ERROR:
		xasprintf(&m->ident, "{%s%s%s\"%s\":null}", *id != '\0' ?
		    "\"id\":" : "", id, *id != '\0' ? "," : "",
		    r->kind == KIND_RESPONSE ? "result" : "error");
		break;
	default:
		break;
	}
	if (m->ident != NULL)
		m->ident_len = strlen(m->ident);
	free(method);
	return m;
}

/* One row of the session: a message becomes facts (events pass). */
static int
otlp_file_row_cb(const struct export_row *r, void *arg)
{
	struct otlp_file	*f = arg;
	struct otlp_fact	*facts, *fact, *next;
	struct otlp_span	*done;
	struct msg		*m;

	if (r->is_event)
		return 0;
	if (r->m.ts_ns > f->end_ns)
		f->end_ns = r->m.ts_ns;
	m = otlp_file_msg(&r->m);
	if (f->o != NULL) {
		/* Block mode: waits for room, never drops for a full queue. */
		otlp_message(f->o, f->os, m);
		msg_free(m);
		return 0;
	}
	facts = otlp_fact_new(m, f->cfg->payloads);
	msg_free(m);
	for (fact = facts; fact != NULL; fact = next) {
		next = fact->next;
		fact->next = NULL;
		done = NULL;
		otlp_builder_fact(f->b, fact, &done);
		otlp_file_take(f, done);
	}
	return f->write_failed ? -1 : 0;
}

static void
otlp_file_clear(struct otlp_file *f)
{
	otlp_builder_free(f->b);
	otlp_span_free(f->batch);
	obuf_free(&f->buf);
	if (f->has_url)
		otlp_url_clear(&f->url);
	free(f->transport);
	free(f->target);
	free(f->client);
}

/*
 * Session id of st as spans under configuration c (its side, payloads,
 * service and resource): with out, written to out as OTLP/JSON lines (at
 * most OTLP_FILE_SPANS spans a line); without, sent to c's collector,
 * waiting for room in the exporter's queue rather than dropping (c's
 * block is forced on).  *spans gets the spans made (to a file) and
 * *dropped those the collector did not take.  -1 with *cause when the
 * session cannot be read, the collector not started or out not written.
 */
int
otlp_file_session(struct store *st, int64_t id, const struct otlp_config *c,
    FILE *out, uint64_t *spans, uint64_t *dropped, char **cause)
{
	struct otlp_file	 f;
	struct otlp_config	 bc;
	struct otlp_span	*done = NULL;
	int			 rc = -1;

	*spans = *dropped = 0;
	memset(&f, 0, sizeof f);
	f.cfg = c;
	f.out = out;
	f.tail = &f.batch;
	obuf_init(&f.buf);
	f.res.service_name = c->service_name != NULL ? c->service_name :
	    "mcpreel";
	f.res.attrs = c->resource_attrs;
	if (query_session_info(st, id, otlp_file_info_cb, &f, cause) != 0)
		goto out;
	if (out == NULL) {
		bc = *c;
		bc.block = 1;
		if ((f.o = otlp_start(&bc, cause)) == NULL)
			goto out;
		f.os = otlp_session(f.o, &f.info);
	} else
		f.b = otlp_builder_new(&f.info, c->side, c->payloads);
	if (query_export(st, id, 0, otlp_file_row_cb, &f, cause) != 0) {
		if (f.write_failed) {
			free(*cause);
			xasprintf(cause, "cannot write the spans");
		}
		goto out;
	}
	if (f.o != NULL) {
		otlp_session_end(f.o, f.os, f.end_ns);
		otlp_stop(f.o, (c->timeout_ms > 0 ? c->timeout_ms : 10000) +
		    OTLP_FILE_STOP_EXTRA_MS);
		otlp_totals(f.o, spans, dropped);
		rc = 0;
		goto out;
	}
	otlp_builder_end(f.b, f.end_ns, &done);
	otlp_file_take(&f, done);
	otlp_file_flush(&f);
	*spans = f.spans;
	if (f.write_failed || ferror(out)) {
		xasprintf(cause, "cannot write the spans");
		goto out;
	}
	rc = 0;
out:
	otlp_free(f.o);
	otlp_file_clear(&f);
	return rc;
}
