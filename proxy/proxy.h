/*
 * proxy: recording.  Two peers joined by a tap; the stdio front end here,
 * HTTP later.
 */
#ifndef MCPREEL_PROXY_H
#define MCPREEL_PROXY_H

#include "core.h"
#include "store.h"
#include "transport.h"

/* livecheck.c (record --check) */
struct livecheck;
struct check_http;
struct livecheck *livecheck_start(int, char **);
void		 livecheck_message(struct livecheck *, const struct wsession *,
		    const struct msg *, const struct check_http *);
void		 livecheck_end(struct livecheck *, const struct wsession *);
void		 livecheck_stop(struct livecheck *);

/* tap.c */

/*
 * The one entry every forwarding path records through.  It never blocks:
 * it hands the message to the writer and reports whether reading should
 * pause until the writer catches up.
 */
struct tap;
typedef void (*tap_resume_cb)(void *);

struct tap	*tap_new(struct event_base *, struct writer *, tap_resume_cb,
		     void *);
void		 tap_free(struct tap *);
int		 tap_message(struct tap *, struct wsession *, struct wexchange *,
		     struct msg *);
int		 tap_message_http(struct tap *, struct wsession *,
		     struct wexchange *, struct msg *,
		     const struct check_http *);
int		 tap_checking(void);
void		 tap_event(struct tap *, struct wsession *, const char *,
		     const void *, size_t);
void		 tap_fault(struct tap *, struct wsession *,
		     const struct wfault *);
int		 tap_paused(const struct tap *);
void		 tap_sync(struct tap *);
/* How many bytes a source may read now, at most the second argument: no
   more than the writer keeps up with. */
size_t		 tap_read_max(struct tap *, size_t);
void		 tap_exchange_end(struct tap *, struct wexchange *,
		     const char *, const void *, size_t, int);
void		 tap_session_transport(struct tap *, struct wsession *,
		     const char *);
void		 tap_session_end(struct tap *, struct wsession *, int, int,
		     const char *);
void		 tap_set_redact(const struct redact *);
struct livecheck;
void		 tap_set_check(struct livecheck *);
void		 tap_check_end(const struct wsession *);
struct otlp;
struct otlp_sess_info;
void		 tap_set_otlp(struct otlp *);
int		 tap_exporting(void);
void		 tap_otlp_begin(struct wsession *,
		     const struct otlp_sess_info *);
void		 tap_otlp_end(struct wsession *);
/*
 * record --otlp's end: at most this long to deliver what is queued, and
 * over stdio less: a host that closed our stdin gives a server about 2 s
 * to exit before SIGTERM and SIGKILL (the TypeScript SDK does), and the
 * session's row must get its count before that.  A healthy collector
 * takes the last batch in milliseconds; what a failing one has not taken
 * by then is counted dropped.
 */
#define TAP_OTLP_STOP_MS	5000
#define TAP_OTLP_STOP_STDIO_MS	1500
void		 tap_otlp_finish(struct writer *, int);
int		 tap_redacts_key(const char *);
char		*tap_redact_string(char *);
char		*tap_redact_url(const char *);
char		*tap_redact_text(char *);
char		**tap_redact_argv(char *const *);
struct msg	*tap_redact_form(struct msg *);

/* record.c */
struct hsession;
struct record_result {
	int	 exit_code;	/* what mcpreel should exit with */
	int	 exit_status;	/* the server's, or -1 if it never ran */
	int	 exit_signal;
	char	*reason;	/* how the session ended, in words */
	struct hsession	*sessions;	/* record_http: free them with
					   record_http_free() */
	struct writer_ids *retired;	/* record_http: the row ids of
					   those retired during the run */
};

int		 record_stdio(struct writer *, struct wsession *,
		     char *const [], struct record_result *);
void		 record_stop_mask(int);
/* --spin-us: the default, the most it takes, and the setter. */
#define RECORD_SPIN_US		20
#define RECORD_SPIN_US_MAX	10000
void		 record_set_spin(unsigned);
/*
 * --durable: each line is committed to the database (synchronous = FULL)
 * before it is forwarded.
 */
void		 record_set_durable(int);
/*
 * --fault, --faults: the rules the stdio relay applies (set NULL: none,
 * the plain path).  reload (NULL without --faults) puts the rules again
 * into the set on SIGHUP, -1 with *cause keeping the old ones; note is
 * recorded at the start ("fault rules: N; seed S").  All stay the
 * caller's.
 */
struct fault_set;
typedef int (*record_reload_cb)(struct fault_set *, void *, char **);
struct record_faults {
	struct fault_set	*set;
	record_reload_cb	 reload;
	void			*arg;
	const char		*note;
};
void		 record_set_faults(const struct record_faults *);


/* line.c: a line gathered for the record. */
struct line {
	enum dir	 dir;
	struct msg	*cur;		/* its bytes so far, or NULL */
	size_t		 len;		/* of them, kept */
	size_t		 cap;
	uint64_t	 wire;		/* all of them, kept or not */
	struct digest	*digest;	/* past the cap: of all of them */
	struct ident	*ident;		/* past the cap: its kind, method, id */
};
/*
 * --max-record-size: a line longer than this is forwarded whole but
 * recorded as its first bytes, its size and its SHA-256 (0: no cap).  The
 * default keeps a 100 MB message whole; memory for a line in flight stays
 * under it.
 */
#define RECORD_MAX_RECORD	((size_t)128 * 1024 * 1024)
void		 record_set_max_record(size_t);
void		 record_set_store_max(size_t);
size_t		 line_cap(void);
int		 line_cap_is_store(void);
void		 line_init(struct line *, enum dir);
void		 line_add(struct line *, const char *, size_t, int);
struct msg	*line_finish(struct line *);
void		 line_clear(struct line *);

/* record_loop.c: the stdio relay's event loop. */
void		 record_loop_run(struct event_base *, const unsigned long *);
int		 record_loop_is_pipe(int);

/* http.c */

/* HTTP_HEAD_TIMEOUT, HTTP_IDLE_TIMEOUT: transport.h */
/*
 * The wait for the upstream's response head once the request is sent:
 * past the request timeouts MCP clients use by default, so only a stuck
 * upstream meets it (a long tool call answered over SSE sends its head at
 * once; the stream itself has no limit).
 */
#define HTTP_UPSTREAM_TIMEOUT	300

/*
 * Recording sessions held at once, by default (record --max-sessions):
 * each MCP session id gets one; past this, a client cycling session ids
 * cannot grow memory: the rest share the run's default session.  A
 * gateway serves 10 000 sessions at once (bench/scen_sessions.sh); a
 * recording session costs ~1 KiB here (its row's state in the writer
 * included), so the bound is 16 MiB.  An ended session stops counting
 * once it is retired (hretire.c).
 */
#define HTTP_SESSIONS_MAX	16384
/*
 * How long an ended session is kept after its end (a DELETE, a new
 * initialize given its id, the end of a legacy stream), and after each
 * later request that carries its id, before it is retired: a request
 * that crossed the DELETE on the wire, or the end of its GET stream, is
 * still recorded in it, and so is the traffic of an id a server gives
 * out again.  Past that, its id names a new session.
 */
#define HSESSION_GRACE_MS	10000
/*
 * The most --max-sessions takes: ~1 GiB of sessions, and the id table's
 * chains (HSESSION_BUCKETS) 256 long on average, a walk per request.
 */
#define HTTP_SESSIONS_LIMIT	(1024 * 1024)

struct http_options {
	const char	 *name;		/* --name, or NULL */
	const char	 *listen;	/* --listen */
	const char	 *upstream;	/* --upstream URL */
	const char	 *cacert;	/* --cacert FILE, or NULL */
	int		  insecure;	/* --insecure */
	int		  rewrite_host;	/* --rewrite-host */
	int		  allow_remote;	/* --allow-remote */
	int		  durable;	/* --durable: each message committed
					   before it is forwarded */
	struct listen_limits lim;	/* --max-connections, --*-timeout */
	int		  upstream_timeout; /* seconds, 0: none */
	char		**redact;	/* --redact-header NAME ... */
	size_t		  nredact;
	const struct record_faults *faults; /* --fault, or NULL: none */
	int		  max_sessions;	/* --max-sessions, 0: the default
					   (HTTP_SESSIONS_MAX) */
	int		  keep_ids;	/* record_http_ids() is wanted (the
					   retired sessions' ids are kept) */
};

int		 record_http(struct writer *, const struct http_options *,
		     struct record_result *);
void		 record_http_free(struct record_result *);
int64_t		*record_http_ids(const struct record_result *, size_t *);

/* bridge.c: record --connect, record --listen ADDR -- CMD. */

/*
 * The most client requests a bridge keeps waiting for their answers: one
 * more is answered with a JSON-RPC error by mcpreel (a note in the record)
 * instead of going to the server.  Far above what clients keep in flight.
 */
#define BRIDGE_PENDING_MAX	4096
/*
 * The largest message the bridge holds whole to pass it from one framing
 * to the other (a line, a body, an SSE event): as the SSE parser's bound.
 */
#define BRIDGE_MESSAGE_MAX	SSE_LINE_MAX

/*
 * One side an endpoint (the client's: our stdio with connect, else an
 * HTTP listener), the other an xport (the server's: the remote URL with
 * connect, else argv over stdio); every message recorded once through the
 * tap, in the session given.
 */
struct bridge_options {
	/* record --connect URL: the host on our stdio, the server at URL. */
	const char		 *connect;
	enum xport_remote_kind	  transport;	/* --transport */
	const char		 *cacert;	/* --cacert FILE, or NULL */
	int			  insecure;	/* --insecure */
	const char *const	 *headers;	/* --header "Name: value" ... */
	size_t			  nheaders;
	/* record --listen ADDR -- CMD: HTTP clients at ADDR, argv over stdio. */
	const char		 *listen;
	struct listen_limits	  lim;
	char *const		 *argv;
	const char		 *server;	/* how errors name the server:
						   the redacted URL or argv */
	const char		 *note;		/* recorded at the start */
};

int		 bridge_run(struct writer *, struct wsession *,
		     const struct bridge_options *, struct record_result *);

#endif
