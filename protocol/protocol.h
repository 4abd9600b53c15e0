/*
 * protocol: what MCP says, per revision, as data of our own.  Which
 * methods a revision has, who may send them, the capability each needs,
 * the shape of every message; one small engine walks the tables.
 *
 * Pure: no I/O and no state but read-only tables built once on first use
 * (pthread_once), so every function here is safe from any thread.
 */
#ifndef MCPREEL_PROTOCOL_H
#define MCPREEL_PROTOCOL_H

#include <stddef.h>

#include <jansson.h>

#include "core.h"

/* The revisions of the specification, oldest first. */
enum proto_version {
	PROTO_V_UNKNOWN,
	PROTO_V_2024_11_05,
	PROTO_V_2025_03_26,
	PROTO_V_2025_06_18,
	PROTO_V_2025_11_25,
	PROTO_V_2026_07_28,
	PROTO_V_MAX
};

/* A set of revisions, one bit each (bit 1 << version). */
#define PROTO_VBIT(v)		(1u << (v))
#define PROTO_VALL		(PROTO_VBIT(PROTO_V_MAX) - PROTO_VBIT(1))
/* v and every later revision. */
#define PROTO_VFROM(v)		(PROTO_VALL & ~(PROTO_VBIT(v) - 1))
/* Revisions with an initialize handshake. */
#define PROTO_VLEGACY		(PROTO_VALL & ~PROTO_VBIT(PROTO_V_2026_07_28))

/* What a method is. */
enum proto_kind {
	PROTO_REQUEST,		/* a JSON-RPC request, answered by a result */
	PROTO_NOTIFICATION,	/* a JSON-RPC notification */
	PROTO_INPUT,		/* 2026-07-28: never a message of its own, only
				   an entry of an input_required result's
				   inputRequests, answered in inputResponses */
	PROTO_KIND_MAX
};

/* Which side: who may send a method, whose capability it needs. */
#define PROTO_CLIENT	0x1
#define PROTO_SERVER	0x2
#define PROTO_BOTH	(PROTO_CLIENT | PROTO_SERVER)
#define PROTO_RECEIVER	0x4	/* cap_side: the side that receives it */

/*
 * One method in a set of revisions in which it reads the same.  A method
 * whose row differs between revisions has a row for each stretch.
 */
struct proto_method {
	const char	*name;
	unsigned	 versions;	/* PROTO_VBIT set */
	enum proto_kind	 kind;
	int		 senders;	/* PROTO_CLIENT, PROTO_SERVER, PROTO_BOTH */
	int		 cap_side;	/* whose capabilities hold cap: PROTO_CLIENT,
					   PROTO_SERVER, PROTO_RECEIVER; 0 if none */
	const char	*cap;		/* a dotted path in those capabilities,
					   "resources.subscribe", or NULL */
	const char	*params;	/* the shape of its params */
	const char	*result;	/* the shape of its result; NULL for a
					   notification */
	const char	*page;		/* the specification page, "server/tools" */
};

/* How bad a finding is. */
enum proto_severity {
	PROTO_ERROR,
	PROTO_WARNING,
	PROTO_NOTE,
	PROTO_SEVERITY_MAX
};

/*
 * Something a rule found in a message.  rule and spec are static strings;
 * path and text belong to whoever made the finding (see proto_findings).
 */
struct proto_finding {
	const char	*rule;		/* "shape.required", "jsonrpc.id" */
	int		 severity;	/* enum proto_severity */
	char		*path;		/* JSONPath into the message, "$.params" */
	char		*text;		/* a sentence a person understands */
	const char	*spec;		/* "2025-06-18 schema.ts: CallToolResult",
					   "2025-06-18 basic/lifecycle" */
};

/* Called with each finding; the finding is only valid during the call. */
typedef void proto_finding_cb(const struct proto_finding *, void *);

/*
 * A growable list of findings that owns its paths and texts.  At most
 * PROTO_FINDINGS_MAX are kept; more are only counted in dropped.
 */
struct proto_findings {
	struct proto_finding	*v;
	size_t			 n;
	size_t			 alloc;
	size_t			 dropped;
};

/*
 * One message can hold many faults (a list of 100 000 tools each missing
 * its name); past this many a list only counts them, so a hostile message
 * cannot make it grow without end.
 */
#define PROTO_FINDINGS_MAX	1000

/* version.c */
enum proto_version proto_version_parse(const char *);
enum proto_version proto_version_parse_n(const char *, size_t);
const char	*proto_version_name(enum proto_version);
int		 proto_version_is_legacy(enum proto_version);
enum proto_version proto_version_latest(void);

/* method.c */
const struct proto_method *proto_method(const char *, enum proto_version);
const struct proto_method *proto_method_n(const char *, size_t,
		    enum proto_version);
const struct proto_method *proto_methods(size_t *);
const char	*proto_method_spec(const struct proto_method *,
		    enum proto_version);
const char	*proto_kind_name(enum proto_kind);
const char	*proto_side_name(int);
int		 proto_caps_has(const json_t *, const char *);

/* message.c */
size_t		 proto_check_message(enum proto_version, const json_t *,
		    const char *, proto_finding_cb *, void *);

/* finding.c */
const char	*proto_severity_name(int);
void		 proto_report(proto_finding_cb *, void *, const char *, int,
		    const char *, const char *, const char *, ...)
		    PRINTFLIKE(7, 8);
void		 proto_findings_init(struct proto_findings *);
void		 proto_findings_add_cb(const struct proto_finding *, void *);
void		 proto_findings_clear(struct proto_findings *);

/*
 * headers.c: the HTTP headers of a 2026-07-28 request (Mcp-Method,
 * Mcp-Name, Mcp-Param-*), for replay and record --connect.  Not pure as
 * the rest: a struct proto_headers is what one session learnt from its
 * tools/list, its owner's alone.
 */
struct proto_headers;
struct proto_headers *proto_headers_new(void);
void		 proto_headers_free(struct proto_headers *);
void		 proto_headers_learn(struct proto_headers *, const json_t *);
char		**proto_headers_for(struct proto_headers *, const json_t *,
		     const char **);
void		 proto_headers_list_free(char **);

#endif
