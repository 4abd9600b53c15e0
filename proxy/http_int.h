/*
 * Internals of the HTTP front end (proxy/http.c, hexch.c, hresp.c,
 * hsession.c, hwait.c, hstall.c, hflush.c, hretry.c, hcap.c); nothing
 * outside proxy/ includes it.
 */
#ifndef MCPREEL_HTTP_INT_H
#define MCPREEL_HTTP_INT_H

#include <sys/queue.h>

#include "proxy.h"

/* Why reading one side of a connection is paused (bits). */
enum pause_why {
	PAUSE_PEER = 0x1,	/* the other side's output is backed up */
	PAUSE_STORE = 0x2,	/* the writer's queue is full */
	PAUSE_BUSY = 0x4,	/* client: an exchange is in flight and a lot
				   of pipelined input waits */
	PAUSE_CLOSING = 0x8,	/* client: we close once our output is out */
	PAUSE_FAULT = 0x10	/* upstream: --fault delays an SSE event */
};

/* Unsent bytes for one side of a connection before its source pauses. */
#define HTTP_MAX_OUTPUT		(4u * 1024 * 1024)
/*
 * Bytes written straight from the callback that queued them
 * (hflush_write), both ways, per request read: enough for ordinary
 * exchanges; a bigger body or answer goes on at libevent's pace, one
 * write per loop pass, as before.
 */
#define HTTP_FLUSH_MAX		(64u * 1024)
/* A response body that is not JSON-RPC is kept for people up to this. */
#define HTTP_KEEP_BODY_MAX	(64 * 1024)
/* A legacy SSE stream is held back this far, waiting for its endpoint. */
#define HTTP_HOLD_MAX		(64 * 1024)
/*
 * Bytes the connections may tap, all told, while the writer is behind
 * before every connection pauses.  Each pauses on its own when it taps
 * (so idle streams cost nothing), but with thousands of connections busy
 * at once their reads past the writer's bound would add up to a read's
 * worth each; past this budget they all stop, as a full queue did before.
 */
#define HTTP_STALL_BYTES	(4u * 1024 * 1024)
/* How long connecting to the upstream may take, seconds. */
#define HTTP_CONNECT_TIMEOUT	10
/* How often ended sessions are looked at while any waits to be retired. */
#define HSESSION_RETIRE_TICK_MS	1000
/*
 * The least time between two warnings that the session bound was
 * reached: a gateway at its bound crosses it again each time an ended
 * session is retired, and a line per session would bury the rest.
 */
#define HSESSION_WARN_MS	60000
/*
 * Buckets of the table that finds a session by its id (hsession_get):
 * a quarter of HTTP_SESSIONS_MAX, so chains stay a few long whatever the
 * number of sessions, instead of a walk over all of them per exchange.
 */
#define HSESSION_BUCKETS	4096
/*
 * The ids of answers one stream keeps track of (struct howed): a POST's
 * requests, or those POSTed in a legacy session and not yet answered.
 * Clients wait on a few at a time; a batch of more (batches left MCP in
 * 2025-06-18), or a session with more in flight, is owed until its
 * stream ends, so a flood of ids cannot grow memory.
 */
#define HOWED_IDS_MAX		64
/*
 * The longest id (its JSON text) kept: ids are short (the record keys
 * them by up to IDENT_VALUE_MAX bytes); a longer one is owed until its
 * stream ends, so that what is kept stays small.
 */
#define HOWED_ID_MAX		IDENT_VALUE_MAX
/* The outcome of a stream the client ended with nothing owed to it. */
#define HEXCH_CLIENT_ENDED	"the client ended the stream"
/* What credentials are stored as. */
#define HTTP_REDACTED		"[REDACTED]"

/* hcap.c: a body copied for the record, up to the record size cap. */
struct hcap {
	uint64_t	 wire;		/* all of its bytes so far */
	struct digest	*digest;	/* past the cap: of all of them */
	struct ident	*ident;		/* past the cap: its kind, method, id */
};
void		 hcap_append(struct evbuffer *, struct evbuffer *);
void		 hcap_copy(struct hcap *, struct evbuffer *, struct evbuffer *);
int		 hcap_finish(struct hcap *, struct msg *);
void		 hcap_clear(struct hcap *);

/* howed.c: the answers a stream owes its client, by request id. */
struct howed {
	char		**ids;		/* each id's JSON text as written */
	size_t		  n;
	int		  unknown;	/* owed but not known by id: until
					   the stream ends */
};
void		 howed_add(struct howed *, const char *, size_t);
int		 howed_settle(struct howed *, const char *, size_t);
int		 howed_any(const struct howed *);
void		 howed_clear(struct howed *);
void		 howed_requests(struct howed *, const char *, size_t);
void		 howed_batch(struct howed *, const char *, size_t);
int		 howed_answers(struct howed *, const char *, size_t);

/* An MCP session seen on the wire, and the recording session for it. */
struct hsession {
	char		*key;		/* Mcp-Session-Id or legacy sessionId;
					   NULL for the run's default */
	int		 legacy;	/* HTTP+SSE (sessionId) */
	int		 ended;		/* DELETE succeeded */
	int		 pending;	/* --durable: begun by an initialize
					   request, its id still to come */
	char		*endpoint;	/* legacy: the path and query its
					   endpoint event told the client to
					   POST to (hsession_endpoint_key) */
	struct howed	 owed;		/* legacy: answers to the client's
					   POSTed requests its event stream
					   has still to carry */
	struct wsession	*ws;
	int64_t		 started_ns;	/* as its row got it */
	int		 otlp;		/* --otlp: its export has begun */
	int		 counted;	/* one of p->nsessions */
	int		 refs;		/* exchanges whose x->hs it is */
	int64_t		 ended_ns;	/* monotonic, when it ended */
	int		 waiting;	/* on p->ended, to be retired */
	int		 refused;	/* only an id that had no room: its
					   traffic is the default session's
					   (on p->refused, no ws) */
	TAILQ_ENTRY(hsession) eentry;	/* on p->ended, oldest end first */
	struct hsession	*next;
	struct hsession	**prevp;	/* what points at it in p->sessions */
	struct hsession	*hnext;		/* in its bucket of the id table */
};

TAILQ_HEAD(hsessions, hsession);

struct hproxy;
struct hconn;

/* One request and its response on a client connection. */
struct hexch {
	struct hconn		*c;
	struct http_head	 req;
	char			*up_target;	/* the target the upstream
						   gets (hexch_target) */
	char			*up_host;	/* Host from an absolute-form
						   target, or NULL */
	struct http_body	 reqbody;
	struct evbuffer		*reqtrailers;	/* its trailer field lines */
	int			 req_done;
	struct evbuffer		*reqdata;	/* decoded request body */
	struct hcap		 reqcap;	/* its size and digest past
						   the record size cap */
	int			 durable;	/* --durable */
	int			 dirty;		/* durable: tapped, not yet
						   committed */
	struct evbuffer		*reqhold;	/* durable: the decoded body,
						   until it is committed */
	int64_t			 ts_ns;
	int64_t			 mono_ns;

	struct hsession		*hs;		/* NULL until known */
	struct wexchange	*wx;
	struct check_http	*live;		/* record --check: its heads
						   (hexch_live) */
	struct msg		**held;		/* tapped before hs was known */
	size_t			 nheld;
	int			 wait_endpoint;	/* hs waits for the first event */

	struct http_head	 resp;
	int			 have_resp;	/* a final head came */
	int			 sent_resp;	/* the client got response bytes */
	struct http_body	 respbody;
	struct evbuffer		*resptrailers;
	int			 resp_done;
	int			 rechunk;	/* forward as chunked */
	int			 sse;		/* text/event-stream */
	struct sse_parser	 sp;
	struct evbuffer		*ssebuf;	/* decoded stream, for sp */
	int			 sse_events;	/* events seen */
	struct evbuffer		*respdata;	/* decoded non-SSE body */
	struct hcap		 respcap;
	int			 resp_cut;	/* respdata holds only its start */
	struct evbuffer		*hold;		/* decoded response bytes held
						   back: legacy, until the
						   endpoint; durable, until
						   committed */
	size_t			 hold_ready;	/* durable: how much of hold
						   may go once committed */
	int			 may_rewrite;	/* hold may change length (the
						   endpoint rewrite) */
	int			 close_after;	/* Connection: close either way */
	char			*rpc_id;	/* a JSON-RPC request's id, as
						   written, for an error reply */
	struct howed		 owed;		/* the answers its body asked
						   for, by id */
	int			 owed_counted;	/* owed is filled in */
	int			 answered;	/* answers (any id but null)
						   its SSE stream carried */
	int			 owed_legacy;	/* owed added to hs->owed */
	int			 resumed;	/* GET with Last-Event-ID */
	uint64_t		 answer_end;	/* where in the client's output
						   (c->out_sent) the answer
						   that settled the last one
						   owed ends; 0: not known */
	int			 saw_endpoint;	/* a legacy endpoint event */
	int			 client_left;	/* ended by the client closing
						   its connection */
	char			*outcome;

	/* --fault (hfault.c) */
	int			 fhold;		/* the request's head and body
						   wait for the decision */
	int			 fresp;		/* a JSON response held whole
						   (head in fhead) for it */
	int			 fsse;		/* SSE events are decided one
						   by one (held in hold) */
	size_t			 fheld;		/* x's share of p->fheld */
	int			 fcontinue;	/* fhold: mcpreel answered the
						   request's Expect: 100-continue
						   (not forwarded) */
	int			 fpass;		/* fsse: the event being read
						   outgrew HFAULT_HOLD_MAX: it
						   goes on undecided */
	struct evbuffer		*fhead;		/* fresp: the head as it came */
	int			 fswallow;	/* timeout: the answer to the
						   request is not delivered */
	int			 fdropped;	/* an answer owed was dropped:
						   the client is left waiting */
	int			 fhang;		/* nothing more will come: the
						   exchange ends when the client
						   leaves */
	int			 fwait;		/* a delay runs (ftimer) */
	int			 fbody_done;	/* the response body ended
						   while a delay ran */
	size_t			 fevent_len;	/* SSE: bytes of hold the
						   delayed event takes */
	struct event		*ftimer;
	int64_t			 fault_n;	/* the request's fault (c2s,
						   timeout), or 0 */
	struct wfault		*fpend;		/* its row, until the session
						   is known */
	int64_t			 tap_fault;	/* what hexch_tap_data marks */
	int			 tap_role;
	char			*req_rpc_method; /* the request's method */
};

/*
 * What a connection is waiting for, and so which time limit runs on its
 * timer (hwait.c).  Nothing runs while a response streams: an SSE stream
 * may stay open as long as both ends are there.
 */
enum conn_wait {
	CONN_WAIT_NONE,		/* a response is on its way */
	CONN_WAIT_IDLE,		/* the next request (idle timeout) */
	CONN_WAIT_HEAD,		/* the rest of a request head (head timeout,
				   from its first byte) */
	CONN_WAIT_BODY,		/* more of the request body (idle timeout,
				   from the last bytes) */
	CONN_WAIT_UPSTREAM,	/* the upstream's response head (upstream
				   timeout, from the end of the request) */
	CONN_WAIT_OUTPUT,	/* the client to take our last bytes before
				   we close (idle timeout) */
	CONN_WAIT_MAX
};

/* A client connection, joined one to one with an upstream connection. */
struct hconn {
	struct hproxy		*p;
	uint64_t		 id;
	struct bufferevent	*cbev;		/* the client */
	struct bufferevent	*ubev;		/* the upstream, or NULL */
	int			 connected;	/* ubev finished connecting */
	size_t			 flushed;	/* by hflush_write since the
						   last request read */
	uint64_t		 out_sent;	/* bytes of cbev's output
						   written to the socket */
	size_t			 scanned;	/* request head parse */
	size_t			 uscanned;	/* response head parse */
	struct evbuffer		*resend;	/* the request as written to a
						   reused upstream connection,
						   until its answer begins
						   (hretry.c) */
	int			 keeping;	/* resend is being filled */
	size_t			 unkept;	/* bytes at the end of ubev's
						   output not yet in resend */
	struct evbuffer_cb_entry *resend_cb;	/* what fills it, on ubev's
						   output */
	struct hexch		*x;		/* the exchange in progress */
	int			 cpause;	/* why client reading paused */
	int			 upause;	/* why upstream reading paused */
	int			 closing;	/* close once output is sent */
	int			 dead;		/* closed; freed next pass */
	enum conn_wait		 wait;
	struct event		*timer;		/* the wait's time limit */
	TAILQ_ENTRY(hconn)	 entry;
	int			 stalled;	/* on the proxy's stalled list */
	TAILQ_ENTRY(hconn)	 sentry;
};
TAILQ_HEAD(hconns, hconn);

struct hproxy {
	struct event_base	*base;
	struct listener		*listener;
	struct upstream		 up;
	char			*origin;	/* where we listen */
	struct tap		*tap;
	struct writer		*w;
	const struct http_options *opt;
	uint64_t		 nconns;
	int64_t			 nlive;		/* exchanges given to
						   record --check */
	struct hconns		 conns;
	struct hconns		 stalled;	/* paused for the writer: the
						   ones its resume wakes */
	size_t			 stall_bytes;	/* tapped while the writer is
						   behind (HTTP_STALL_BYTES) */
	struct hsession		*sessions;
	struct hsession		**by_key;	/* HSESSION_BUCKETS chains of
						   the keyed ones, newest first */
	uint32_t		 hseed;		/* by_key's hash seed */
	struct hsession		*dflt;		/* the run's default session */
	struct hsession		*spare;		/* durable: one settled with no
						   id, for the next initialize */
	int			 stateless;	/* durable: an initialize was
						   answered with no session id */
	int			 nsessions;	/* keyed and pending ones held
						   (not retired) */
	int			 max_sessions;	/* their bound (--max-sessions) */
	int			 full;		/* at the bound: said once, until
						   one is retired */
	int64_t			 warned_ns;	/* monotonic, when last said */
	int			 nlegacy;	/* legacy ones held */
	struct hsessions	 ended;		/* ended, waiting to retire */
	struct hsessions	 refused;	/* ids that had no room, oldest
						   first (hretire_refuse) */
	int			 nrefused;	/* at most max_sessions */
	struct event		*retire_ev;	/* looks at them (hretire.c) */
	struct writer_ids	*retired;	/* their row ids (opt->keep_ids),
						   filled by the writer thread:
						   record_http_free frees it */
	struct event		*sigs[2];
	struct event		*sighup;	/* re-reads --faults, else stops */
	char			*stop_reason;
	size_t			 fheld;		/* --fault: bytes held for
						   decisions, all exchanges */
};

/* hflush.c */
size_t		 hflush_write(struct bufferevent *);
struct event_base *hflush_base_new(void);

/* hretry.c */
int		 hretry_alive(int);
void		 hretry_attach(struct hconn *);
void		 hretry_start(struct hconn *);
void		 hretry_keep(struct hconn *);
void		 hretry_stop(struct hconn *);
void		 hretry_free(struct hconn *);
int		 hretry_again(struct hconn *, const char *);

/* hretire.c */
void		 hretire_init(struct hproxy *);
void		 hretire_free(struct hproxy *);
void		 hretire_ended(struct hproxy *, struct hsession *);
struct hsession	*hretire_touch(struct hproxy *, struct hsession *);
int		 hretire_room(struct hproxy *);
void		 hretire_refuse(struct hproxy *, const char *, int);

/* hstall.c */
void		 hstall_resume_cb(void *);
void		 hstall_add(struct hconn *);
void		 hstall_full(struct hconn *, size_t);

/* http.c */
void		 conn_pause(struct bufferevent *, int *, int, int);
int		 conn_connect(struct hconn *, char **);
void		 conn_close(struct hconn *, const char *);
void		 conn_close_after_output(struct hconn *);
void		 conn_reply_error(struct hconn *, int, const char *,
		     const char *);
void		 conn_process_requests(struct hconn *);
void		 conn_watch_output(struct hconn *);

/* hexch.c */
int		 hexch_is_form(const struct http_head *);
void		 hexch_tap_data(struct hexch *, enum dir, struct evbuffer *,
		     size_t, const char *, struct hcap *);
int		 hexch_wants_close(const struct http_head *);
int		 hexch_start(struct hconn *, struct http_head *);
int		 hexch_request_body(struct hconn *);
void		 hexch_commit(struct hexch *);
void		 hexch_end(struct hconn *, const char *);
void		 hexch_client_left(struct hexch *);
int		 hexch_awaits_answer(const struct hexch *);
void		 hexch_answer_seen(struct hexch *, const char *, size_t);

/* hresp.c */
void		 hresp_head(struct hconn *, struct http_head *);
int		 hresp_body(struct hconn *, int);
void		 hresp_done(struct hconn *);
void		 hresp_sse_event(struct hexch *, struct sse_event *);
void		 hresp_send_held(struct hexch *, struct evbuffer *, size_t);

/* hfault.c */
struct fault_hit;
/*
 * The most of a request or JSON response body, or of an SSE event, held
 * back for a fault decision; a longer one goes on undecided, as it would
 * without --fault.
 */
#define HFAULT_HOLD_MAX		(16u * 1024 * 1024)
/* The most held back for decisions by all exchanges; past it, the same. */
#define HFAULT_HELD_MAX		(256u * 1024 * 1024)
int		 hfault_active(const struct hproxy *);
void		 hfault_account(struct hexch *);
int		 hfault_over(const struct hexch *, size_t);
int		 hfault_request(struct hexch *);
void		 hfault_request_giveup(struct hexch *);
void		 hfault_send_request(struct hexch *, const char *, size_t);
void		 hfault_assigned(struct hexch *);
void		 hfault_clear(struct hexch *);
int		 hfault_reload(struct hproxy *);
int64_t		 hfault_record(struct hexch *, const struct fault_hit *, enum dir,
		     const char *, size_t, int);
void		 hfault_tap(struct hexch *, enum dir, const char *, size_t,
		     const char *, int64_t, int);
struct evbuffer	*hfault_replacement(const struct fault_hit *, const char *,
		     size_t, int *);
void		 hfault_reset(struct hconn *, const char *);
void		 hfault_hang(struct hexch *);
void		 hfault_sse_data(struct evbuffer *, const char *, size_t);

/* hfresp.c */
void		 hfresp_head(struct hexch *, enum http_body_kind);
int		 hfresp_event(struct hexch *, struct sse_event *);
int		 hfresp_end(struct hexch *);
int		 hfresp_upstream_gone(struct hconn *);
int		 hfresp_cut(struct hexch *);
int		 hfresp_stream_end(struct hexch *);

/* hwait.c */
void		 hwait_start(struct hconn *);
void		 hwait_set(struct hconn *);
void		 hwait_stop(struct hconn *);

/* hsession.c */
struct hsession	*hsession_get(struct hproxy *, const char *, int, int64_t);
struct hsession	*hsession_default(struct hproxy *, int64_t);
struct hsession	*hsession_pending(struct hproxy *, int64_t);
void		 hsession_settle(struct hproxy *, struct hsession *,
		     const char *, int);
void		 hsession_end(struct hproxy *, struct hsession *,
		     const char *);
void		 hsession_end_all(struct hproxy *, const char *);
void		 hsession_free(struct hsession *);
void		 hsession_free_all(struct hsession *);
void		 hsession_unkey(struct hproxy *, struct hsession *);
struct hsession	**hsession_bucket(struct hproxy *, const char *);
void		 hsession_key(struct hproxy *, struct hsession *,
		     const char *);
char		*hsession_query_id(const char *);
char		*hsession_endpoint_key(const char *);
struct hsession	*hsession_legacy_find(struct hproxy *, const char *);
char		*hsession_headers_json(struct hproxy *,
		     const struct http_head *);
char		*hsession_redact_path(const char *);
char		*hsession_trailers_json(struct hproxy *, struct evbuffer *);
void		 hexch_assign(struct hexch *, struct hsession *);
void		 hexch_record_response(struct hexch *);
void		 hexch_tap(struct hexch *, struct msg *);
void		 hexch_live_free(struct hexch *);
void		 hexch_note(struct hexch *, const char *, ...)
		     PRINTFLIKE(2, 3);
void		 hexch_note_at(struct hexch *, enum log_level, const char *,
		     ...) PRINTFLIKE(3, 4);
void		 hexch_trailers_note(struct hexch *, const char *, char *);
void		 hexch_send_head(struct hconn *, const struct http_head *,
		     const size_t *);

#endif
