/*
 * replay: re-sending a recorded session to a live server and comparing
 * what comes back (replay), and matching rules and the structural diff
 * shared with the mock server.
 */
#ifndef MCPREEL_REPLAY_H
#define MCPREEL_REPLAY_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "core.h"
#include "transport.h"

/* rscope.c and rules.c: what replay compares by, each rule scoped. */

/*
 * Which requests a rule is for: a method (a glob), and one of a tool
 * (tools/call's params.name), a prompt (prompts/get's params.name) or a
 * resource (resources/read's params.uri), a glob too.  Empty (all NULL,
 * RSCOPE_ANY): every request.
 */
enum rscope_kind {
	RSCOPE_ANY,
	RSCOPE_TOOL,
	RSCOPE_PROMPT,
	RSCOPE_RESOURCE,
	RSCOPE_MAX
};

/* The scope keys, for messages. */
#define RSCOPE_KEYS	"method, tool, prompt, resource"

struct rscope {
	char		*method;	/* a glob, or NULL */
	enum rscope_kind kind;
	char		*name;		/* the tool, prompt or URI glob */
};

/* What every rule has: its scope, where it was written, its use. */
struct diff_rule {
	struct rscope	 scope;
	char		*origin;	/* "--ignore", or the file and key:
					   rules.json "ignore"[2] */
	size_t		 used;		/* times it matched in this run */
};

/* A place never compared. */
struct diff_ignore {
	struct diff_rule r;
	struct jpath	*path;
};

/*
 * A string normalisation: every match of regex is replaced by with, in
 * which \0 to \9 stand for the match and its groups and \\ for "\".
 */
struct diff_subst {
	struct diff_rule r;
	char		*regex;		/* POSIX extended */
	char		*with;
	void		*compiled;	/* regex_t, owned */
};

/* Answers not compared at all: those of the requests in r.scope. */
struct diff_skip {
	struct diff_rule r;
	char		*value;		/* the method, tool, ... as written */
};

/*
 * What the diff skips and how it normalises.  Unless no_defaults is set,
 * the default ignores (volatile MCP fields: the id, _meta progress tokens
 * and trace context) apply on top of ignore.
 */
struct diff_rules {
	struct diff_ignore *ignore;	/* places never compared */
	size_t		  nignore;
	struct diff_skip *skip;		/* answers never compared */
	size_t		  nskip;
	struct diff_subst *subst;	/* applied to strings before comparing */
	size_t		  nsubst;
	int		  no_defaults;	/* drop the default ignores */
};

void		 rscope_clear(struct rscope *);
int		 rscope_empty(const struct rscope *);
int		 rscope_set(struct rscope *, const char *, const char *,
		     char **);
int		 rscope_parse(struct rscope *, const char *, char **);
int		 rscope_match(const struct rscope *, const json_t *);
char		*rscope_text(const struct rscope *);
json_t		*rscope_json(const struct rscope *);
int		 rscope_is_key(const char *);
void		 rules_init(struct diff_rules *);
void		 rules_clear(struct diff_rules *);
int		 rules_add_ignore(struct diff_rules *, const char *,
		     char **);
int		 rules_add_ignore_from(struct diff_rules *, const char *,
		     const char *, char **);
int		 rules_scope_last(struct diff_rules *, const char *,
		     char **);
int		 rules_add_skip(struct diff_rules *, const char *,
		     const char *, const char *, char **);
int		 rules_add_subst(struct diff_rules *, const char *,
		     const char *, char **);
int		 rules_load(struct diff_rules *, const char *, char **);
int		 rules_skips(struct diff_rules *, const json_t *);
void		 rules_note_use(struct diff_rules *, const json_t *,
		     const json_t *, const json_t *);
json_t		*rules_unused(const struct diff_rules *);

/* diff.c: structural comparison of two JSON-RPC messages. */

/*
 * How many strings-holding-JSON deep the diff steps in; deeper strings are
 * compared as strings.  Each level may nest as deep as jansson allows, so
 * this bounds the recursion.
 */
#define DIFF_MAX_JSON_NEST	4

/*
 * One difference: where, and the values on each side (NULL: absent).  The
 * values are references the entry owns (the original strings, before any
 * normalisation), so they outlive the messages compared.
 */
struct diff_entry {
	char		*path;		/* "$.result.content[0].text" */
	json_t		*recorded;
	json_t		*replayed;
	int		 redacted;	/* the recorded value holds [REDACTED]:
					   its real value was not recorded */
};

struct diff {
	struct diff_entry *v;
	size_t		   n;
	/*
	 * Places not compared because the recorded value was redacted and
	 * the replayed one fits it (redacted.c): their paths.
	 */
	char		 **redacted;
	size_t		   nredacted;
};

json_t		*diff_string_json(const json_t *);
size_t		 diff_messages(const json_t *, const json_t *,
		     const struct diff_rules *, struct diff *);
size_t		 diff_messages_for(const json_t *, const json_t *,
		     const json_t *, const struct diff_rules *,
		     struct diff *);
void		 diff_clear(struct diff *);

/*
 * redacted.c: values `record` redacted ("[REDACTED]"), found and taken as
 * wildcards by replay and mock.
 */
int		 redacted_whole(const json_t *);
int		 redacted_string(const json_t *);
int		 redacted_in(const json_t *);
int		 redacted_matches(const json_t *, const json_t *);
json_t		*redacted_fill(const json_t *, const json_t *);
json_t		*redacted_shape(const json_t *);
char		*redacted_where(const json_t *, size_t);

/* plan.c: what replay sends, and what it waits for before each send. */

/* A recorded message. */
struct rmsg {
	int64_t		 seq;
	enum dir	 dir;
	enum msg_kind	 kind;
	int64_t		 mono_ns;
	char		*method;	/* requests, notifications; responses
					   get their request's */
	char		*id;		/* the id's JSON text, or NULL */
	char		*raw;
	size_t		 len;
	json_t		*jcache;	/* plan_json(): parsed on first use */
	int		 jdone;		/* jcache is what it will be */
	int		 truncated;	/* raw is only a prefix (the record
					   cap): never sent, never compared */
	ssize_t		 answer;	/* requests: their response, or -1 */
	ssize_t		 request;	/* responses: their request, or -1 */
	struct rreq	*rq;		/* replay's engine: a request's state
					   once sent (engine.c owns it) */
};

/* One message to send, and the responses that must have come first. */
struct send {
	size_t		 msg;		/* index in plan.m */
	size_t		*needs;		/* requests (indices in plan.m) whose
					   responses the recorded client had
					   before it sent this */
	size_t		 nneeds;
	int64_t		 gap_ns;	/* since the previous send, recorded */
};

/*
 * What plan_more() calls for the next message of a streamed plan: it adds
 * one with plan_add() and returns 1, or returns 0 at the end, -1 on an
 * error (cause set).
 */
struct plan;
typedef int (*plan_source_fn)(struct plan *, void *, char **);

/*
 * A plan is either whole (plan_add() every message, then plan_build()),
 * or streamed (plan_stream(), then plan_fill() reads ahead a window at a
 * time and plan_release() lets the oldest go).  Indices (rmsg.answer,
 * send.msg, ...) are absolute either way: plan_msg() and plan_send()
 * find them.  A whole plan has base and off 0, so m[i] is message i.
 */
struct plan {
	struct rmsg	*m;
	size_t		 n, alloc;
	struct send	*sends;
	size_t		 nsends, sendsalloc;
	/* Streamed: m[off..n) are messages base+off..base+n. */
	size_t		 base, off;
	size_t		 sbase, soff;	/* the same for sends */
	size_t		 wbytes;	/* raw bytes of m[off..n) */
	plan_source_fn	 src;
	void		*src_arg;
	int		 src_done;	/* every message has been read */
	struct plan_builder *b;		/* the pairing between reads */
};

void		 plan_add(struct plan *, int64_t, enum dir, int64_t,
		     const void *, size_t);
void		 plan_set_truncated(struct plan *, enum msg_kind,
		     const char *, const char *);
void		 plan_build(struct plan *);
void		 plan_clear(struct plan *);
json_t		*plan_json(const struct rmsg *);
void		 plan_json_drop(const struct rmsg *);
void		 plan_stream(struct plan *, plan_source_fn, void *);
int		 plan_fill(struct plan *, char **);
int		 plan_full(const struct plan *);
void		 plan_release(struct plan *, size_t, size_t);
struct rmsg	*plan_msg(const struct plan *, size_t);
struct send	*plan_send(const struct plan *, size_t);
size_t		 plan_first(const struct plan *);
size_t		 plan_end(const struct plan *);
size_t		 plan_sends_end(const struct plan *);
int		 plan_pins(const struct plan *, size_t);
int		 plan_pinned(const struct plan *, size_t);
int		 plan_pins_full(const struct plan *);
ssize_t		 plan_pinned_oldest(const struct plan *);
void		 plan_unpin(struct plan *, size_t);

/* engine.c: replaying a plan against a live server. */

struct writer;
struct wsession;

struct replay_options {
	int		 timeout_ms;	/* per request */
	int		 pace;		/* keep the recorded gaps too */
	int		 notifications_strict;
	struct diff_rules *rules;	/* counts what each rule matched */
	struct writer	*w;		/* record the replay here, or NULL */
	struct wsession	*ws;
};

enum rstatus {
	RSTATUS_SAME,
	RSTATUS_DIFFERENT,
	RSTATUS_MISSING,	/* no live response in time */
	RSTATUS_IGNORED,	/* --ignore-method, --ignore-tool, ... */
	RSTATUS_TRUNCATED,	/* the request or its answer was recorded
				   cut at --max-record-size: not replayed */
	RSTATUS_MAX
};

/* The outcome for one recorded request that had a recorded answer. */
struct rresult {
	int64_t		 seq;
	const char	*method;
	const char	*id;
	char		*params;	/* short, for people */
	enum rstatus	 status;
	struct diff	 diff;
	int64_t		 rec_latency_ns;	/* -1: not known */
	int64_t		 live_latency_ns;
	int64_t		 seq_b;		/* diff: the request's seq in B (the
					   second recording); replay: 0 */
	char		*own;		/* method and id point here when the
					   plan lets its messages go (a
					   streamed replay), else NULL */
};

struct replay_report {
	int64_t		 session;
	char		*session_name;
	char		*target;
	struct rresult	*r;
	size_t		 n;
	size_t		 count[RSTATUS_MAX];
	json_t		*notifications;	/* method: {recorded, replayed} */
	size_t		 notif_differ;	/* methods whose counts differ */
	int		 notifications_strict;
	size_t		 srv_answered;
	json_t		*srv_unmatched;	/* [{method, params}] */
	json_t		*notes;		/* [text] */
	int64_t		 replay_session;	/* recorded as, or 0 */
	json_t		*unused_rules;	/* rules_unused() at the end */
	int		 could_not_run;
	size_t		 unshown;	/* results counted, not kept (a big
					   session: see engine.c) */
	size_t		 unshown_differ; /* of them, not the same */
	size_t		 notes_unshown;	/* notes not kept, past the most */
	char		*lost;		/* why the server was lost (could not
					   be reached, or went away) before
					   the replay ended, or NULL */
};

int		 replay_run(struct plan *, struct xport *(*)(struct event_base *,
		     const struct xport_cbs *, void *, void *, char **), void *,
		     const struct replay_options *, struct replay_report *,
		     char **);
int		 replay_exit_status(const struct replay_report *);
void		 replay_report_clear(struct replay_report *);

/* compare.c: an answer against the recorded one (replay and diff). */
char		*compare_params(const json_t *);
struct rresult	*compare_add(struct replay_report *, const struct rmsg *,
		     const struct rmsg *);
void		 compare_fill(struct rresult *, const struct rmsg *,
		     const struct rmsg *);
struct rresult	*compare_append(struct replay_report *, struct rresult *);
void		 compare_answer(struct replay_report *, struct rresult *,
		     const struct rmsg *, const struct rmsg *, const json_t *,
		     int, struct diff_rules *);

/* report.c */
/* What the two sides of a difference are called: recorded, replayed. */
struct report_sides {
	const char	*a;
	const char	*b;
};
extern const struct report_sides report_replay_sides;
void		 report_text(FILE *, const struct replay_report *, int);
void		 report_json(FILE *, const struct replay_report *);
void		 report_junit(FILE *, const struct replay_report *);
void		 report_text_diff(FILE *, const char *, const struct diff *,
		     const struct report_sides *, int);
void		 report_json_entry(json_t *, const struct diff_entry *,
		     const struct report_sides *);
void		 report_junit_diff(FILE *, const struct diff *);
void		 report_junit_verdict(FILE *, const struct rresult *,
		     const char *, const char *);
void		 report_xml_escape(FILE *, const char *);

/* match.c: which recorded exchange answers a live request (mock). */

/* A server message to play, and when, after the request arrived. */
struct mitem {
	size_t		 msg;		/* index in plan.m */
	int64_t		 offset_ns;	/* recorded, from the request */
};

/* A recorded request, its answer, and what the server did around it. */
struct mentry {
	size_t		 req;		/* index in plan.m */
	size_t		 resp;		/* index in plan.m */
	const char	*key;		/* method "\n" canonical params (the
					   matcher's index holds it) */
	int64_t		 latency_ns;
	struct mitem	*before;	/* notifications and server requests
					   sent while it was in flight */
	size_t		 nbefore;
	struct mitem	*after;		/* unsolicited server messages after
					   its answer, before the next request */
	size_t		 nafter;
	int		 redacted;	/* its params hold [REDACTED]: matched
					   as wildcards there (redacted.c) */
	size_t		 shape;		/* redacted: its index in shapes */
};

struct matcher {
	const struct plan *plan;
	struct mentry	*e;
	size_t		 n;
	struct mitem	*prelude;	/* server messages before any request */
	size_t		 nprelude;
	int		 strict;	/* demand the recorded order */
	size_t		 next;		/* strict: the next entry */
	struct diff_rules rules;	/* its ignores: params paths left
					   out of keys (owned) */
	json_t		*used;		/* key -> times matched */
	json_t		*index;		/* key -> [entry indices], in order:
					   a find costs no walk of them all */
	size_t		*shapes;	/* per redacted shape (method and what
					   redacted_shape keeps), an entry */
	size_t		 nshapes;
	int		 shapes_capped;	/* said that a find tried only the
					   first MATCH_SHAPES_MAX */
};

void		 matcher_build(struct matcher *, const struct plan *, int,
		     struct diff_rules *);
const struct mentry *matcher_find(struct matcher *, const json_t *);
int		 matcher_repeats(const struct matcher *, const struct mentry *);
char		*match_request_key(const json_t *, const struct diff_rules *);

/* What a matcher found out about a request it has no entry for. */
struct match_miss {
	int		 strict;
	int		 truncated;	/* no entry of the method: one was cut
					   at the record cap */
	int		 unanswered;	/* ... one was never answered */
	json_t		*methods;	/* ... the methods there are */
	const json_t	*rec;		/* the request compared with, or NULL
					   when no entry has the method */
	int64_t		 seq;		/* its seq */
	const char	*want;		/* strict: rec is the one expected
					   next, of this method */
	int		 elsewhere;	/* strict: another entry has the key */
};
json_t		*match_error(int, char *);
char		*match_shape_key(const json_t *);
size_t		 match_params_diff(const struct diff_rules *, const json_t *,
		     const json_t *, struct diff *);
json_t		*match_miss_data(const struct diff_rules *, const char *,
		     int64_t, const json_t *, const json_t *);
json_t		*match_miss_error(const struct diff_rules *, const json_t *,
		     const struct match_miss *);

/* mkey.c: match_request_key()'s text of canonical params. */
char		*mkey_request(const char *, const json_t *,
		     const struct diff_rules *);
json_t		*matcher_miss(const struct matcher *, const json_t *);
void		 matcher_clear(struct matcher *);

/* defs.c: the tools, prompts and resources two recordings list. */

enum defs_which {
	DEFS_TOOLS,
	DEFS_PROMPTS,
	DEFS_RESOURCES,
	DEFS_TEMPLATES,
	DEFS_MAX
};

/* A kind of definition: its names, its list method, where it is. */
struct defs_kind {
	const char	*plural;	/* "tools", for people and JSON */
	const char	*one;		/* "tool" */
	const char	*method;	/* "tools/list" */
	const char	*key;		/* the answer's result.tools */
	const char	*id;		/* what names one: "name", "uri" */
};
extern const struct defs_kind defs_kinds[DEFS_MAX];

enum defs_how {
	DEFS_ADDED,			/* only in the second recording */
	DEFS_REMOVED,			/* only in the first */
	DEFS_CHANGED
};

struct defs_change {
	char		*name;
	enum defs_how	 how;
	json_t		*fields;	/* changed: the top-level fields that
					   differ ("description", ...) */
	struct diff	 diff;		/* changed: paths from the definition */
};

struct defs_diff {
	struct defs_change *v;
	size_t		    n;
	int		    listed;	/* 1: in A, 2: in B, 3: both (only
					   then compared) */
	int		    ignored;	/* the list method's answers are
					   skipped by a rule */
};

json_t		*defs_collect(const struct plan *, enum defs_which);
void		 defs_compare(enum defs_which, const json_t *, const json_t *,
		     struct diff_rules *, struct defs_diff *);
void		 defs_clear(struct defs_diff *);

/* remap.c: opaque values one run issued, as the other run's. */
int		 remap_apply(const json_t *, json_t *);
void		 remap_learn(json_t *, const json_t *, const json_t *);

/* sdiff.c: two recorded sessions compared, with no server (diff). */

/* A request in one recording that the other does not have. */
struct sdiff_only {
	int64_t		 seq;
	const char	*method;	/* the plan's */
	char		*params;	/* short, for people */
};

struct sdiff_report {
	/*
	 * The exchanges both have, as replay reports them: A's request and
	 * answer as the recorded side, B's answer as the other (seq_b).
	 */
	struct replay_report ex;
	int64_t		 session_b;
	char		*session_name_b;
	struct sdiff_only *only_a;
	size_t		 nonly_a;
	struct sdiff_only *only_b;
	size_t		 nonly_b;
	size_t		 requests_a;	/* answered requests in each */
	size_t		 requests_b;
	size_t		 lists;		/* pairs of list requests, compared
					   as definitions, not as answers */
	struct defs_diff defs[DEFS_MAX];
	size_t		 defs_changes;	/* in all kinds */
};

extern const struct report_sides sdiff_sides;
void		 sdiff_run(const struct plan *, const struct plan *,
		     struct diff_rules *, struct sdiff_report *);
size_t		 sdiff_defs_one_sided(const struct sdiff_report *);
int		 sdiff_exit_status(const struct sdiff_report *);
void		 sdiff_clear(struct sdiff_report *);

/* sdiff_out.c */
void		 sdiff_out_text(FILE *, const struct sdiff_report *, int);
void		 sdiff_out_json(FILE *, const struct sdiff_report *);
void		 sdiff_out_junit(FILE *, const struct sdiff_report *);

/* mock.c: playing a recorded server. */

struct fault_set;
struct otlp;
struct otlp_sess;

struct mock_options {
	const char	*listen;	/* Streamable HTTP here; NULL: stdio */
	/*
	 * The time between the messages of one exchange (the request, what
	 * the server sent while it was in flight, its answer, what followed
	 * unasked): each recorded gap times latency_scale, at most
	 * latency_cap_ns.  Scale 0: none (all at once); the default is the
	 * recorded gaps capped (MOCK_GAP_CAP_MS, set by mock_options_init).
	 */
	double		 latency_scale;
	int64_t		 latency_cap_ns;
	struct listen_limits lim;	/* what its clients may take */
	/*
	 * --on-miss forward: misses go to this live server (opened with
	 * open_fn(base, cbs, cbarg, open_arg, cause)) and are recorded.
	 */
	struct xport	*(*fallback)(struct event_base *,
			    const struct xport_cbs *, void *, void *, char **);
	void		*fallback_arg;
	struct writer	*w;		/* record forwarded exchanges here */
	struct wsession	*ws;
	/*
	 * A cassette being recorded (--record-mode): the client's side of
	 * what went through the fallback, its ids and bytes.  cw_all: all
	 * of it; else only the forwarded exchanges (the request, what the
	 * fallback and the client said while one was in flight, its answer).
	 */
	struct writer	*cw;
	struct wsession	*cws;
	int		 cw_all;
	/*
	 * --fault: the rules applied at the mock's edge (mockfault.c), or
	 * NULL; on SIGHUP faults_reload(faults, faults_arg, cause) reads them
	 * again (NULL: SIGHUP is not caught).
	 */
	struct fault_set *faults;
	int		(*faults_reload)(struct fault_set *, void *, char **);
	void		*faults_arg;
	/*
	 * --otlp: what the client sent and what the mock sent it (before
	 * the fault edge, when there are rules) go to this exporter as
	 * session otlp_sess's, or NULL.
	 */
	struct otlp	*otlp;
	struct otlp_sess *otlp_sess;
};

/*
 * Over stdio an answer counts once it is written (to a pipe, a file or
 * /dev/null); one that could not be is in unwritten, and out_error says
 * why (our stdout failed).
 */
struct mock_stats {
	uint64_t	 answered;	/* requests answered from the record */
	uint64_t	 missed;	/* requests answered with an error */
	uint64_t	 forwarded;	/* requests sent to the fallback */
	uint64_t	 unwritten;	/* answers made but never written */
	uint64_t	 dropped;	/* requests whose answer was never made
					   (mock stopped first) */
	uint64_t	 fb_failed;	/* forwarded requests the fallback did
					   not answer (in time, or at all) */
	int		 fb_lost;	/* the fallback went away before the
					   end */
	uint64_t	 cw_lost;	/* messages left out of the cassette
					   (too much held) */
	char		*out_error;	/* why writing failed (caller frees),
					   or NULL */
};

void		 mock_options_init(struct mock_options *);

/*
 * mdisk.c and mfind.c: the mock's recording, match index and what the
 * server did around each request in a temporary SQLite database, so the
 * mock's memory does not grow with the session.
 */
struct mdisk;

/* A recorded exchange loaded from disk to be played (mfind_entry_free). */
struct mdent {
	int64_t		 n;		/* entry number, in recorded order */
	size_t		 req;		/* message numbers, in recorded order */
	size_t		 resp;
	int64_t		 req_seq;
	int64_t		 resp_seq;
	char		*key;
	char		*method;
	json_t		*request;	/* parsed, shared with mfind_message()
					   (a reference: not to be changed) */
	json_t		*answer;	/* NULL when loaded only to compare */
	int64_t		 latency_ns;
	struct mitem	*before;	/* as struct mentry's; msg is a message
					   number (mfind_message()) */
	size_t		 nbefore;
	struct mitem	*after;
	size_t		 nafter;
	int		 repeats;	/* the last of its key (not strict) */
	int		 redacted;	/* its params hold [REDACTED] */
	size_t		 shape;		/* redacted: its shape's index */
};

struct mdisk	*mdisk_new(int, struct diff_rules *, char **);
int		 mdisk_reset(struct mdisk *, char **);
void		 mdisk_add(struct mdisk *, int64_t, enum dir, int64_t,
		     const void *, size_t, int, enum msg_kind, const char *,
		     const char *);
int		 mdisk_finish(struct mdisk *, char **);
struct mdisk	*mdisk_from_plan(const struct plan *, int,
		     struct diff_rules *, char **);
void		 mdisk_free(struct mdisk *);
json_t		*mdisk_parse(const void *, size_t);
int64_t		 mdisk_entries(const struct mdisk *);
struct mdent	*mfind_find(struct mdisk *, const json_t *);
struct mdent	*mfind_entry(struct mdisk *, int64_t);
void		 mfind_entry_free(struct mdent *);
json_t		*mfind_message(struct mdisk *, size_t);
size_t		 mfind_prelude(struct mdisk *, struct mitem **);
json_t		*mfind_miss(struct mdisk *, const json_t *);

/* mockfault.c: --fault at the mock's edge. */
struct mockfault;
/* Which endpoint call a mock message is for. */
enum mockfault_how {
	MOCKFAULT_SEND,		/* endpoint_send: nobody asked for it */
	MOCKFAULT_REQ_SEND,	/* ereq_send: before a request's answer */
	MOCKFAULT_REQ_END	/* ereq_end: a request's answer */
};
struct mockfault_cbs {
	/* A client message the rules let through (maybe changed, late). */
	void	(*deliver)(struct ereq *, const char *, size_t, void *);
	/* A fault closed stdio: the mock stops, as a dying server. */
	void	(*closed)(const char *, void *);
	/* Nothing is held for later any more. */
	void	(*idle)(void *);
};
struct mockfault *mockfault_new(struct event_base *, struct endpoint *,
		     const struct mock_options *, const struct mockfault_cbs *,
		     void *);
void		 mockfault_in(struct mockfault *, struct ereq *, const char *,
		     size_t);
void		 mockfault_out(struct mockfault *, enum mockfault_how,
		     struct ereq *, const char *, size_t, const char *,
		     size_t);
int		 mockfault_taken(struct mockfault *, int64_t *, int *);
int		 mockfault_busy(const struct mockfault *);
void		 mockfault_finish(struct mockfault *);
void		 mockfault_free(struct mockfault *);

/* mfnote.c: what mock --fault says and records of each fault. */
struct fault_hit;
struct mfnote;
struct mfnote	*mfnote_new(struct writer *, struct wsession *);
void		 mfnote_free(struct mfnote *);
/* A client message went by: a request's method is kept by its id. */
void		 mfnote_request(struct mfnote *, const char *, size_t);
/* A rule applied: number, log and record the fault; its number. */
int64_t		 mfnote_fault(struct mfnote *, const struct fault_hit *,
		     enum dir, const char *, size_t);
/* Record a message of fault n in its role (FAULT_ROLE_*). */
void		 mfnote_record(struct mfnote *, enum dir, const char *,
		     size_t, int64_t, int);
/* The same of an s2c message, as the fallback sent it if it did. */
void		 mfnote_record_fb(struct mfnote *, const char *, size_t,
		     const char *, size_t, int64_t, int);
/* Record fault n's s2c copy, under the fallback's id if it was one's. */
void		 mfnote_record_injected(struct mfnote *, const char *, size_t,
		     const char *, size_t, int64_t);
/*
 * Request id (JSON) was held by fault n (a timeout: its answer's deadline);
 * which fault held id, or 0.
 */
void		 mfnote_faulted(struct mfnote *, json_t *, int64_t, int64_t);
int64_t		 mfnote_faulted_n(const struct mfnote *, const json_t *,
		     int64_t *);
json_t		*mfnote_id(const char *, size_t);
int		 mfnote_is_cancel(const char *, size_t);

int		 mock_parse_latency(struct mock_options *, const char *);
int		 mock_run(struct mdisk *, const struct mock_options *,
		     struct mock_stats *, char **);

/*
 * restamp.c: a cassette re-recorded keeps the bytes of its lines that did
 * not change but for their times; lines appended are numbered on.
 */
int		 restamp_member(const char *, size_t, const char *, size_t *,
		     size_t *);
char		*restamp_stable(const char *, size_t, const char *, size_t,
		     size_t *);
int64_t		 restamp_last_seq(const char *, size_t);
char		*restamp_renumber(const char *, size_t, int64_t, size_t *);
char		*restamp_append(const char *, size_t, const char *, size_t,
		     size_t *);

#endif
