/* check_int.h: what the files of check/ share, not for outside. */
#ifndef MCPREEL_CHECK_INT_H
#define MCPREEL_CHECK_INT_H

#include "check_session.h"

/* A request awaiting its answer. */
struct pend {
	char			*key;		/* rpc_key of the id's JSON text;
						   NULL: free */
	int64_t			 seq;
	char			*method;	/* may be NULL (cut message) */
	enum proto_version	 v;		/* the revision it was sent under */
	char			*token;		/* rpc_key of its progressToken's
						   JSON, or NULL */
	int			 has_progress;
	double			 progress;	/* the last progress value */
	int			 cancelled;
	char			*cursor;	/* rpc_key of its params.cursor as
						   JSON text, or NULL */
	char			*target;	/* tools_key of params.name, else
						   of params.uri, else of
						   params.taskId: the name, or its
						   digest if long */
	size_t			 target_len;
	int			 tool_flags;	/* TOOL_*, of a tools/call */
	int			 refused;	/* its HTTP exchange was refused (a
						   status not 2xx) or taken with
						   202: the server may never have
						   read it, so neither its answer
						   nor its id is due */
	int			 unknown;	/* a client POST's, its status not
						   yet known (record --check):
						   its id sent again is taken
						   as a retry, as of a refused
						   one */
};

/* What a tools/call's request showed, for its answer. */
#define TOOL_UNKNOWN	0x1	/* not in the last tools/list */
#define TOOL_ARGS_BAD	0x2	/* arguments fail the inputSchema */
#define TOOL_TASK	0x4	/* task-augmented: params.task */

/* A bounded set of keys that forgets its oldest first. */
struct recent {
	struct idmap		*map;
	char			**ring;
	size_t			 cap;
	size_t			 head;		/* the oldest */
	size_t			 n;
};

/* What one sender has asked and not yet had answered. */
struct side {
	struct pend		*pend;		/* slots */
	size_t			 alloc;
	size_t			*freeidx;	/* free slots, a stack */
	size_t			 nfree;
	size_t			 used;		/* slots ever handed out */
	struct idmap		*ids;		/* id key -> slot */
	struct idmap		*tokens;	/* progress token -> slot */
	struct recent		 answered;	/* ids answered lately */
	struct recent		 finished;	/* progress tokens of them */
	struct recent		 unread;	/* ids answered with a response
						   its receiver cannot take as
						   one (a broken envelope) */
	size_t			 untracked;	/* requests sent while the slots
						   were full, not yet (as far as
						   can be told) answered: while
						   any are, an unknown id or
						   token may be one of theirs */
	int			 limit_noted;	/* check.pending-limit given */
	json_t			*caps;		/* its declared capabilities */
	int			 caps_known;
};

/* The message being checked. */
struct cmsg {
	const struct check_msg	*in;
	const json_t		*j;		/* one message (a batch member) */
	const char		*method;	/* its own, or its request's */
	char			*id;		/* JSON text of its id, or NULL */
	enum proto_version	 v;
	const char		*prefix;	/* "$" or "$[2]" */
	int			 is_request;
	int			 is_notification;
	int			 is_response;
	struct pend		*req;		/* a response: its request, while
						   the response is checked */
	int			 tool_flags;	/* TOOL_*, of a tools/call */
};

/* Where the lifecycle has got to (legacy revisions). */
enum life_state {
	LIFE_NONE,		/* nothing seen yet */
	LIFE_INITIALIZING,	/* initialize sent, not answered */
	LIFE_INITIALIZED,	/* answered, notifications/initialized not
				   yet sent */
	LIFE_OPERATING,		/* initialized sent */
	LIFE_MODERN,		/* 2026-07-28: no handshake */
	LIFE_STATE_MAX
};

struct check {
	check_finding_cb	*cb;
	void			*arg;
	size_t			 counts[PROTO_SEVERITY_MAX];

	enum life_state		 life;
	enum proto_version	 v;		/* negotiated (or last seen) */
	enum proto_version	 asked;		/* initialize's request */
	char			*init_id;	/* initialize's id (JSON) */
	int			 init_unknown;	/* its POST's status was not
						   known: it may be sent again */
	struct side		 side[DIR_MAX];	/* by sender's direction */
	int			 before_init_noted;
	int			 lost;		/* a 404 ended the HTTP session */

	/* Tools of the last tools/list, their compiled schemas. */
	struct tools		*toolc;
	unsigned int		 limits_noted;	/* CHECK_LIMIT_* bits given */
	/* Cursors seen per paginated method in the current walk. */
	json_t			*cursors;	/* method -> {cursor: true} */

	/* HTTP. */
	char			*session_id;	/* Mcp-Session-Id given */
	int64_t			 session_id_seq;
	char			*expired_id;	/* a session id answered 404 */
	struct recent		 exchanges;	/* exchanges already checked */

	/* 2026-07-28: input_required results awaiting their retry. */
	json_t			*input_wait;	/* method\nname -> result */

	struct cmsg		*cur;		/* the message being checked */
};

/* Tables of check/ that can fill up, each noted once when it does. */
enum check_limit {
	CHECK_LIMIT_CURSORS,		/* CHECK_CURSORS_MAX */
	CHECK_LIMIT_CURSOR_METHODS,	/* CHECK_CURSOR_METHODS_MAX */
	CHECK_LIMIT_INPUT_WAIT,		/* SEM_INPUT_WAIT_MAX */
	CHECK_LIMIT_MAX
};

/* session.c */
void		 check_limit(struct check *, enum check_limit, size_t);
void		 check_report(struct check *, const char *, int, const char *,
		     const char *, const char *, ...) PRINTFLIKE(6, 7);
void		 check_report_at(struct check *, int64_t, enum dir,
		     const char *, const char *, const char *, int,
		     const char *, const char *, const char *, ...)
		     PRINTFLIKE(10, 11);
const char	*check_spec(enum proto_version, const char *, char *, size_t);
char		*check_id_text(const json_t *);
const json_t	*check_meta(const json_t *, const char *);
const char	*check_path(struct check *, const char *, char *, size_t);
void		 check_restart(struct check *);
int		 check_status_unknown(const struct check_msg *);

/* rpc.c */
char		*rpc_key(const char *);
char		*rpc_key_free(char *);
void		 rpc_init(struct side *);
void		 rpc_free(struct side *);
struct pend	*rpc_request(struct check *, enum dir, const char *, int64_t,
		     const char *, enum proto_version, const json_t *);
struct pend	*rpc_find(struct side *, const char *);
struct pend	*rpc_response(struct check *, enum dir, const char *);
void		 rpc_done(struct check *, enum dir, struct pend *);
void		 rpc_drop(struct check *, enum dir, struct pend *);
void		 rpc_end(struct check *, enum check_end);
void		 recent_init(struct recent *, size_t);
void		 recent_free(struct recent *);
void		 recent_add(struct recent *, const char *);
int		 recent_has(struct recent *, const char *);

/* lifecycle.c */
void		 life_message(struct check *, struct cmsg *);
void		 life_answered(struct check *, struct cmsg *);

/* caps.c */
void		 caps_message(struct check *, struct cmsg *);

/* http.c */
void		 http_message(struct check *, struct cmsg *);

/*
 * x-mcp-header marks sit on properties reachable through "properties"
 * alone; the walk of a tool's inputSchema for them (tools.c, when the
 * tool is listed) and of a call's arguments against them (http.c) goes at
 * most this deep and looks at most at this many properties (a hostile
 * schema must not make a listing or a call cost its size).
 */
#define HTTP_PARAM_DEPTH_MAX	8
#define HTTP_PARAM_PROPS_MAX	256

/* tools.c */
struct tools	*tools_new(void);
void		 tools_free(struct tools *);
void		 tools_list_begin(struct check *);
void		 tools_listed(struct check *, struct cmsg *, const json_t *,
		     size_t);
void		 tools_reset(struct check *);
char		*tools_quote(const char *, size_t);
int		 tools_unknown(struct check *, const json_t *);
void		 tools_call(struct check *, struct cmsg *, const json_t *);
void		 tools_answered(struct check *, struct cmsg *);
void		 tools_task_result(struct check *, struct cmsg *);
const json_t	*tools_marks(struct check *, const json_t *);
char		*tools_key(const char *, size_t, size_t *);

/* semantics.c */
void		 sem_message(struct check *, struct cmsg *);
void		 sem_answered(struct check *, struct cmsg *);

#endif
