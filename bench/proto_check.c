/*
 * proto_check: the protocol module's verdict on a recorded session, and
 * its speed.  Reads a session exported with `mcpreel export --format
 * jsonl`, takes the revision from the initialize exchange (or a 2026-07-28
 * request's _meta), checks every message with proto_check_message() and
 * prints each finding; with --repeat N it checks the whole file N times
 * more, parsing each message again each time, and prints messages/s.
 *
 *   proto_check [--repeat N] [--version V] FILE.jsonl
 *
 * Exit status: 0 no finding, 1 findings, 2 bad usage or input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "core.h"
#include "protocol.h"

/* Messages kept from the file: their text and what the export says. */
struct rec {
	char		*text;		/* the message as JSON text */
	char		*method;	/* a response's: its request's method */
	int		 seq;
	char		 dir[4];
};

static void
print_cb(const struct proto_finding *f, void *arg)
{
	const struct rec *r = arg;

	printf("seq %d %s %s: %s %s at %s: %s [%s]\n", r->seq, r->dir,
	    r->method != NULL ? r->method : "-", proto_severity_name(f->severity),
	    f->rule, f->path, f->text, f->spec);
}

/*
 * For raw message lines: remember each request's method by its id, and
 * put the method of the request a response answers into the line.
 */
static json_t *
raw_method(json_t *line, json_t **ids)
{
	json_t	*id = json_object_get(line, "id"), *m;
	char	*key;

	if (*ids == NULL)
		*ids = json_object();
	if (id == NULL || !json_is_object(line))
		return (json_object_get(line, "method"));
	key = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
	if (key == NULL)
		return (NULL);
	m = json_object_get(line, "method");
	if (json_is_string(m))
		json_object_set(*ids, key, m);
	else
		m = json_object_get(*ids, key);
	free(key);
	return (m);
}

static void
count_cb(const struct proto_finding *f, void *arg)
{
	(void)f;
	(*(size_t *)arg)++;
}

/* The revision a message names, if it is an initialize exchange or has it
   in its _meta. */
static enum proto_version
version_of(const json_t *msg)
{
	const json_t	*v;

	v = json_object_get(json_object_get(msg, "result"),
	    "protocolVersion");
	if (json_is_string(v))
		return (proto_version_parse(json_string_value(v)));
	v = json_object_get(json_object_get(json_object_get(msg, "params"),
	    "_meta"), "io.modelcontextprotocol/protocolVersion");
	if (json_is_string(v))
		return (proto_version_parse(json_string_value(v)));
	return (PROTO_V_UNKNOWN);
}

int
main(int argc, char **argv)
{
	struct rec		*recs = NULL;
	enum proto_version	 v = PROTO_V_UNKNOWN;
	FILE			*f;
	json_t			*line, *msg, **parsed, *ids = NULL, *mj;
	const json_t		*dir;
	int			 raw;
	json_error_t		 err;
	char			*buf = NULL;
	size_t			 cap = 0, n = 0, i, findings = 0, dummy;
	long			 repeat = 0, r;
	ssize_t			 len;
	int64_t			 t0, t1;
	int			 c;

	while (argc > 2 && argv[1][0] == '-') {
		if (strcmp(argv[1], "--repeat") == 0)
			repeat = strtol(argv[2], NULL, 10);
		else if (strcmp(argv[1], "--version") == 0)
			v = proto_version_parse(argv[2]);
		else
			break;
		argc -= 2;
		argv += 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: proto_check [--repeat N] [--version V] "
		    "FILE.jsonl\n");
		return (2);
	}
	if ((f = fopen(argv[1], "r")) == NULL) {
		perror(argv[1]);
		return (2);
	}
	while ((len = getline(&buf, &cap, f)) != -1) {
		line = json_loadb(buf, (size_t)len, JSON_ALLOW_NUL, &err);
		if (line == NULL) {
			/* Not JSON: nothing a protocol check can read. */
			fprintf(stderr, "%s: line skipped: %s\n", argv[1],
			    err.text);
			continue;
		}
		/* A raw message line (not an export): the line is the
		   message, and a response's method is that of the last
		   request seen with its id. */
		raw = json_object_get(line, "type") == NULL &&
		    json_object_get(line, "format") == NULL;
		msg = raw ? line : json_object_get(line, "message");
		/* An export line's "type" and "direction" may be anything
		   in a hand-made file: only strings are read. */
		if (raw || (json_is_string(json_object_get(line, "type")) &&
		    strcmp(json_string_value(json_object_get(line, "type")),
		    "message") == 0 && msg != NULL && !json_is_null(msg) &&
		    !json_is_string(msg))) {
			recs = xreallocarray(recs, n + 1, sizeof *recs);
			recs[n].text = json_dumps(msg, JSON_COMPACT |
			    JSON_ENCODE_ANY);
			if (recs[n].text == NULL)
				fatalx("out of memory");
			mj = raw ? raw_method(line, &ids) :
			    json_object_get(line, "method");
			recs[n].method = !json_is_string(mj) ? NULL :
			    xstrdup(json_string_value(mj));
			recs[n].seq = raw ? (int)n + 1 : (int)json_integer_value(
			    json_object_get(line, "seq"));
			dir = json_object_get(line, "direction");
			snprintf(recs[n].dir, sizeof recs[n].dir, "%s",
			    raw || !json_is_string(dir) ? "-" :
			    json_string_value(dir));
			if (v == PROTO_V_UNKNOWN)
				v = version_of(msg);
			n++;
		}
		json_decref(line);
	}
	fclose(f);
	json_decref(ids);
	printf("%zu messages, revision %s\n", n, proto_version_name(v));
	for (i = 0; i < n; i++) {
		msg = json_loads(recs[i].text, JSON_DECODE_ANY |
		    JSON_ALLOW_NUL, NULL);
		findings += proto_check_message(v, msg, json_object_get(msg,
		    "method") == NULL ? recs[i].method : NULL, print_cb,
		    &recs[i]);
		json_decref(msg);
	}
	printf("%zu findings\n", findings);
	if (repeat > 0) {
		dummy = 0;
		t0 = util_now_ns();
		for (r = 0; r < repeat; r++) {
			for (i = 0; i < n; i++) {
				msg = json_loads(recs[i].text,
				    JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
				proto_check_message(v, msg, json_object_get(msg,
				    "method") == NULL ? recs[i].method : NULL,
				    count_cb, &dummy);
				json_decref(msg);
			}
		}
		t1 = util_now_ns();
		printf("checked %zu messages in %.3f s: %.0f messages/s "
		    "(parse included)\n", n * (size_t)repeat,
		    (double)(t1 - t0) / 1e9, (double)(n * (size_t)repeat) /
		    ((double)(t1 - t0) / 1e9));
		/* The check alone, on messages parsed once. */
		parsed = xcalloc(n, sizeof *parsed);
		for (i = 0; i < n; i++)
			parsed[i] = json_loads(recs[i].text, JSON_DECODE_ANY |
			    JSON_ALLOW_NUL, NULL);
		t0 = util_now_ns();
		for (r = 0; r < repeat; r++) {
			for (i = 0; i < n; i++)
				proto_check_message(v, parsed[i],
				    json_object_get(parsed[i], "method") ==
				    NULL ? recs[i].method : NULL, count_cb,
				    &dummy);
		}
		t1 = util_now_ns();
		printf("checked %zu parsed messages in %.3f s: %.0f "
		    "messages/s (check alone)\n", n * (size_t)repeat,
		    (double)(t1 - t0) / 1e9, (double)(n * (size_t)repeat) /
		    ((double)(t1 - t0) / 1e9));
		for (i = 0; i < n; i++)
			json_decref(parsed[i]);
		free(parsed);
	}
	for (i = 0; i < n; i++) {
		free(recs[i].text);
		free(recs[i].method);
	}
	free(recs);
	free(buf);
	c = findings != 0;
	return (c);
}
