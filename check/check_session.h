/*
 * check: the rules that read a whole session, message by message: ids
 * across messages, the lifecycle, capabilities, HTTP headers, progress,
 * cancellation, tools and pagination.  Each message is also checked on
 * its own by protocol/ (proto_check_message) under the revision the
 * session negotiated.  Findings go out through a callback.
 *
 * Knows nothing of how a session is stored or moved: the caller feeds
 * each message (its bytes and, over HTTP, the exchange it came in).
 * Everything kept per session is bounded by the CHECK_*_MAX constants.
 */
#ifndef MCPREEL_CHECK_SESSION_H
#define MCPREEL_CHECK_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core.h"
#include "protocol.h"

/* The HTTP exchange a message came in (all strings may be NULL). */
struct check_http {
	int64_t		 exchange;	/* the exchange's id; 0: none */
	const char	*method;	/* "POST", "GET", "DELETE" */
	const char	*path;
	const char	*request_headers;	/* JSON array of [name, value] */
	const char	*response_headers;	/* likewise; NULL: no response */
	int		 status;	/* 0 when no response came */
	int		 legacy_sse;	/* the HTTP+SSE transport of 2024-11-05
					   (GET stream + POST endpoint), which
					   later revisions keep for
					   compatibility: none of the Streamable
					   HTTP header and status rules apply */
};

/* One recorded message. */
struct check_msg {
	int64_t			 seq;
	enum dir		 dir;
	int64_t			 ts_ns;
	const void		*raw;
	size_t			 len;
	int			 truncated;	/* raw is a prefix (record cap) */
	const char		*method;	/* the recorder's identity of a */
	const char		*rpc_id;	/* cut message, or NULL */
	enum msg_kind		 kind;		/* the recorder's kind of a cut
						   message (a response row
						   carries its request's method);
						   KIND_INVALID: not known */
	const struct check_http	*http;		/* NULL: not over HTTP */
};

/*
 * A finding about one message.  method is the message's method (for a
 * response, its request's), id its id as JSON text; both may be NULL.
 * Everything is only valid during the callback.
 */
struct check_finding {
	int64_t				 seq;
	enum dir			 dir;
	const char			*method;
	const char			*id;
	enum proto_version		 version;
	const struct proto_finding	*f;
};

typedef void check_finding_cb(const struct check_finding *, void *);

/* How the session ended, for requests never answered. */
enum check_end {
	CHECK_END_CLEAN,	/* it ended: unanswered requests are warnings */
	CHECK_END_OPEN,		/* it did not end (still recording, or the
				   recorder died): unanswered ones are notes */
	CHECK_END_MAX
};

/*
 * Requests awaiting an answer tracked per sender.  A client may have
 * many in flight, but thousands means a hostile or broken peer; past
 * this, later requests are not tracked (one note says so), so memory
 * stays bounded in a session of a million unanswered requests.
 */
#define CHECK_PENDING_MAX	10000

/*
 * Answered request ids remembered per sender, to tell "answered twice"
 * from "never sent"; the oldest are forgotten first.
 */
#define CHECK_ANSWERED_MAX	4096

/*
 * Tools of the last tools/list remembered (a list may be paginated): by
 * name only, and compiled schemas for the first CHECK_SCHEMA_TOOLS_MAX.
 * Past this the listing is cut (one note), and no call is said to be of
 * an unknown tool until a listing that fits.
 */
#define CHECK_TOOLS_MAX		10000

/*
 * A tool name is kept as it is up to this many bytes (2025-11-25 asks
 * for 1 to 128 characters); a longer one is kept as its SHA-256, so
 * 10 000 names of a megabyte each cannot hold 10 GB.
 */
#define CHECK_TOOL_NAME_MAX	256

/*
 * Tools whose inputSchema and outputSchema are compiled, per listing (the
 * current one and the one before are kept): a real server lists tens.
 */
#define CHECK_SCHEMA_TOOLS_MAX	1000

/*
 * Bytes that compiled tool schemas may take in one session, in all: the
 * schema's parse tree (CHECK_SCHEMA_VALUE_BYTES a value, as its compact
 * text counts them) and the validator's nodes and matchers
 * (jschema_size(); a 30-byte "pattern" can compile to 80 KB).  A tool
 * listed again with the same schemas is not compiled or counted again,
 * so a real session (tens of tools of a few KB) stays far below, while a
 * hostile one cannot grow memory or compile time without end.
 */
#define CHECK_SCHEMA_BYTES_MAX	(64 * 1024 * 1024)

/* What one parsed JSON value costs (jansson's node and its table slot). */
#define CHECK_SCHEMA_VALUE_BYTES	80

/*
 * Schema checks that may run out of steps (JSCHEMA_MAX_STEPS) in one
 * session: each such tool is not checked again, and past this many none
 * is, so a schema built to be exponential costs a bounded time.
 */
#define CHECK_SCHEMA_COSTLY_MAX	8

/*
 * Steps one check of a value may take before its tool counts as costly
 * (as one that ran out of JSCHEMA_MAX_STEPS does): a base and so many a
 * byte of the message.  A real call takes a few thousand; a schema built
 * to take just under JSCHEMA_MAX_STEPS on "{}" is caught at its first
 * call instead of costing that on every one.
 */
#define CHECK_SCHEMA_CALL_STEPS		10000
#define CHECK_SCHEMA_STEPS_PER_BYTE	100

/*
 * Steps of schema checking (about 20 ns each) all the values of one
 * session may take, however many calls: a real session of thousands of
 * calls takes a few million; past this (about a second of work) one note
 * says so and no more are checked.
 */
#define CHECK_SCHEMA_STEPS_MAX	(50ULL * 1000 * 1000)

/*
 * Tasks made by a task-augmented tools/call remembered (taskId -> tool),
 * so that their tasks/result is checked against the tool's outputSchema;
 * past this, a task's result is not checked.
 */
#define CHECK_TOOL_TASKS_MAX	1000

/* Cursors remembered per paginated method, to see one repeat. */
#define CHECK_CURSORS_MAX	1000

/*
 * Methods whose cursors are tracked: the specification's paginated lists
 * are a handful (tools, resources, resource templates, prompts, tasks);
 * a peer answering every invented method with a nextCursor would
 * otherwise grow a set per method.
 */
#define CHECK_CURSOR_METHODS_MAX	16
/*
 * The most values ('{', '[', ',' and ':' bytes) a message may hold to be
 * parsed: a parsed value costs about 80 bytes, so a small message of
 * nothing but empty objects would cost 80 times its size, and show,
 * stats and report check every message of a session.  A message with
 * more is checked by its identity only, as a cut one is (about 20 MiB of
 * parse tree at most).
 */
#define CHECK_PARSE_VALUES_MAX	(256 * 1024)

struct check;

/* session.c */
struct check	*check_new(check_finding_cb *, void *);
void		 check_free(struct check *);
void		 check_message(struct check *, const struct check_msg *);
void		 check_end(struct check *, enum check_end);
char		*check_clean(const char *);
size_t		 check_values(const void *, size_t, size_t);

/* http.c */
void		 check_exchange(struct check *, const struct check_http *);
enum proto_version check_version(const struct check *);
size_t		 check_count(const struct check *, int);

/*
 * jload.c: plain JSON read fast into the tree json_loadb() would build
 * (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL), or NULL
 * when it does not read it: then ask jansson (replay's plan reads its
 * messages so too).
 */
json_t		*jload(const void *, size_t);

#endif
