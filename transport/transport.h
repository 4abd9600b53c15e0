/*
 * transport: moving bytes.  Newline framing over evbuffers and the server
 * child process.  Nothing here knows what MCP or SQLite is.
 */
#ifndef MCPREEL_TRANSPORT_H
#define MCPREEL_TRANSPORT_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "core.h"

/* frame.c */

/*
 * Incremental newline framing: remembers how far it has looked, so a line
 * arriving in many reads is searched once in all (linear time whatever its
 * size).  No line is ever refused for its length.
 */
struct framer {
	size_t	scanned;	/* bytes at the buffer's front with no '\n' */
};

void		 frame_init(struct framer *);
int		 frame_next(struct framer *, struct evbuffer *, size_t *);

/* child.c */

/* How long a server gets after its stdin closes, then after SIGTERM. */
#define CHILD_STDIN_GRACE_MS	2000
#define CHILD_TERM_GRACE_MS	2000

enum child_state {
	CHILD_RUNNING,		/* spawned, nothing asked of it */
	CHILD_STOPPING,		/* stdin closed, waiting for it to exit */
	CHILD_TERMINATING,	/* SIGTERM sent */
	CHILD_KILLING,		/* SIGKILL sent */
	CHILD_EXITED,		/* reaped */
	CHILD_MAX
};

struct child;
typedef void (*child_exit_cb)(struct child *, void *);

struct child	*child_spawn(struct event_base *, char *const [],
		     child_exit_cb, void *, int *, char **);
void		 child_free(struct child *);
pid_t		 child_pid(const struct child *);
int		 child_stdin_fd(const struct child *);
int		 child_stdout_fd(const struct child *);
int		 child_stderr_fd(const struct child *);
void		 child_stop(struct child *);
void		 child_signal(struct child *, int);
enum child_state child_get_state(const struct child *);
int		 child_exit_code(const struct child *);
int		 child_exit_signal(const struct child *);
char		*child_exit_text(const struct child *);
void		 child_reset_signals(void);

/* http.c: HTTP/1.1 message framing (RFC 9112), incremental, no I/O. */

/* A request or response head larger than this is refused (431/502). */
#define HTTP_HEAD_MAX		(64 * 1024)
/* More header fields than this is refused too. */
#define HTTP_HEADERS_MAX	256

struct http_header {
	char	*name;		/* as written */
	char	*value;		/* without surrounding white space */
};

struct http_head {
	int			 is_request;
	char			*method;	/* requests */
	char			*target;	/* requests: as written */
	int			 version;	/* 10 for HTTP/1.0, 11 for 1.1 */
	int			 status;	/* responses */
	char			*reason;	/* responses; may be empty */
	struct http_header	*headers;
	size_t			 nheaders;
	size_t			 len;		/* bytes of the head, with the
						   blank line that ends it */
};

enum http_body_kind {
	HTTP_BODY_NONE,		/* no body */
	HTTP_BODY_LENGTH,	/* Content-Length bytes */
	HTTP_BODY_CHUNKED,	/* Transfer-Encoding: chunked */
	HTTP_BODY_CLOSE,	/* until the connection closes (responses) */
	HTTP_BODY_MAX
};

/* Decoder state for one message body. */
struct http_body {
	enum http_body_kind	 kind;
	uint64_t		 remaining;	/* of the body or current chunk */
	int			 state;		/* chunked: where in the framing */
	size_t			 scanned;	/* chunked: bytes of the current
						   framing line already seen */
	uint64_t		 total;		/* decoded bytes so far */
	struct evbuffer		*trailers;	/* chunked: the caller's, or
						   NULL; gets each trailer field
						   line as sent, with CRLF */
};

int		 http_head_parse(struct evbuffer *, int, size_t *,
		     struct http_head *, char **);
void		 http_head_clear(struct http_head *);
const char	*http_head_get(const struct http_head *, const char *);
int		 http_head_has_token(const struct http_head *, const char *,
		     const char *);
int		 http_body_kind(const struct http_head *, const char *,
		     enum http_body_kind *, uint64_t *, char **);
int		 http_head_needs_reframe(const struct http_head *);
void		 http_head_write_reframed(struct evbuffer *,
		     const struct http_head *);
void		 http_body_init(struct http_body *, enum http_body_kind,
		     uint64_t);
int		 http_body_decode(struct http_body *, struct evbuffer *,
		     struct evbuffer *, int, char **);
void		 http_chunk_add(struct evbuffer *, struct evbuffer *);
void		 http_chunk_end(struct evbuffer *);
void		 http_chunk_end_trailers(struct evbuffer *,
		     struct evbuffer *, char **);
const char	*http_reason(int);
int		 http_fields_parse(struct evbuffer *, struct http_head *,
		     char **);
int		 http_is_token(const char *, size_t);

/* http_target.c: request targets under a path prefix (RFC 9112 3.2). */

/* A request target reduced to origin form (http_target_parse). */
struct http_target {
	char	*path;		/* dot segments removed; "" for "*" */
	char	*query;		/* after the '?', or NULL */
	char	*authority;	/* absolute-form: host[:port], else NULL */
	int	 asterisk;	/* OPTIONS * */
};

int		 http_target_parse(const char *, const char *,
		     struct http_target *, int *, char **);
void		 http_target_clear(struct http_target *);
char		*http_target_join(const char *, const char *,
		     const struct http_target *);
int		 http_target_remove_dots(const char *, size_t, int, char **,
		     char **);

/* sse.c: text/event-stream parsing (the WHATWG rules), incremental. */

/*
 * A line, or one event's data, longer than this is dropped with its event
 * (sse_next returns -1 once for it): far above any real MCP message, low
 * enough that a peer cannot exhaust memory.
 */
#define SSE_LINE_MAX		(256 * 1024 * 1024)

/* One dispatched event.  Strings are NUL-terminated and owned by it. */
struct sse_event {
	char	*type;		/* the "event" field, or NULL (a "message") */
	char	*data;		/* "data" lines joined by '\n' */
	size_t	 data_len;
	char	*id;		/* this event's "id" field, or NULL */
	long	 retry;		/* the "retry" field, or -1 */
};

struct sse_parser {
	size_t		 scanned;	/* bytes of the current line seen */
	int		 started;	/* past a leading byte-order mark */
	int		 pending;	/* fields seen since the last event */
	int		 after_cr;	/* the last line ended in a CR that
					   was the last byte: drop a '\n' */
	int		 skip;		/* dropping an event that grew past
					   SSE_LINE_MAX (sse.c) */
	struct evbuffer	*data;		/* data being gathered */
	struct sse_event ev;		/* other fields being gathered */
};

void		 sse_init(struct sse_parser *);
void		 sse_clear(struct sse_parser *);
int		 sse_next(struct sse_parser *, struct evbuffer *,
		     struct sse_event *);
void		 sse_event_clear(struct sse_event *);

/* net.c: addresses, the listener, connections to the upstream. */

struct url {
	int	 tls;		/* https */
	char	*host;		/* without brackets */
	char	*port;
	char	*hostport;	/* as written: for the Host header */
	char	*prefix;	/* the URL's path, no trailing slash, or "" */
	char	*query;		/* the URL's query (after '?'), or NULL:
				   sent with every request */
	char	*origin;	/* "http[s]://hostport" */
};

struct upstream {
	struct url		 url;
	struct addrinfo		*ai;	/* resolved once, at start */
	struct ssl_ctx_st	*ssl;	/* https only */
	int			 insecure;
};

struct sockaddr;
struct sockaddr_storage;
struct evconnlistener;
struct bufferevent;

int		 net_parse_url(const char *, struct url *, char **);
void		 net_url_clear(struct url *);
int		 net_parse_listen(const char *, struct sockaddr_storage *,
		     socklen_t *, char **);
char		*net_addr_origin(const struct sockaddr *);
int		 net_origin_is_loopback(const char *);
int		 net_addr_is_loopback(const struct sockaddr_storage *);
struct evconnlistener *net_listen(struct event_base *,
		     const struct sockaddr_storage *, socklen_t,
		     void (*)(struct evconnlistener *, int, struct sockaddr *,
		     int, void *), void *, char **, char **);
int		 net_upstream_init(struct upstream *, const char *,
		     const char *, int, char **);
void		 net_upstream_clear(struct upstream *);
struct bufferevent *net_upstream_connect(struct event_base *,
		     struct upstream *, char **);
char		*net_upstream_error(struct bufferevent *,
		     const struct upstream *);

/* listener.c: the listener of record --listen and mock --listen. */

/*
 * Descriptors kept aside from --max-connections' default: the database,
 * its -wal and -shm, the reserve file, logs, the server child's pipes, the
 * event loop's own, with room to spare.
 */
#define LISTENER_FD_RESERVE	32
/*
 * The most connections the default lets in at once, however high the
 * descriptor limit: far more than MCP clients open (one or two each), and
 * few enough that slow clients cannot hold every descriptor.
 */
#define LISTENER_MAX_DEFAULT	1024

/*
 * The defaults of the time limits of record --listen and mock --listen,
 * in seconds (0 in an option: no limit).  A client gets this long to
 * send a whole request head (a real client sends it in one go; a trickle
 * is a slow-loris that would hold the connection, and for record its
 * upstream connection, forever).
 */
#define HTTP_HEAD_TIMEOUT	30
/*
 * A client connection silent this long between requests, or in the middle
 * of a request body, is closed: longer than clients keep idle connections
 * themselves (a few seconds), so they close first and never race us.
 */
#define HTTP_IDLE_TIMEOUT	120

/* What a listener's clients may take: the options of both listeners. */
struct listen_limits {
	unsigned	 max_connections; /* at once; 0: listener_default_max */
	int		 head_timeout;	/* seconds, 0: none */
	int		 idle_timeout;	/* seconds, 0: none */
	size_t		 max_body;	/* a request body held whole; 0: none */
};

struct listener;
/* A connection came in: 0 if kept (listener_closed() later), -1 if not. */
typedef int	(*listener_accept_cb)(int, void *);

unsigned	 listener_default_max(unsigned);
struct listener	*listener_new(struct event_base *,
		     const struct sockaddr_storage *, socklen_t, unsigned,
		     listener_accept_cb, void *, char **, char **);
void		 listener_closed(struct listener *);
void		 listener_stop(struct listener *);
void		 listener_free(struct listener *);

/*
 * xport.c, xport_stdio.c, xport_http.c: the client side of an MCP
 * transport, for replay.  A server run as a child over stdio, or a
 * Streamable HTTP endpoint; either way whole messages go out and come in.
 */

struct xport;

struct xport_cbs {
	/* One whole message from the server. */
	void	(*message)(const char *, size_t, void *);
	/* Something around the messages: "stderr" lines, "note"s. */
	void	(*event)(const char *, const char *, size_t, void *);
	/* The server is gone (exited, or finished after xport_finish). */
	void	(*closed)(const char *, void *);
	/*
	 * HTTP transports: a message sent (its bytes, as given to
	 * xport_send) was not delivered, or was a request whose answer will
	 * not come (the connection refused or cut, a response head that
	 * does not parse, a status that is not 2xx with no answer to it in
	 * its body, an answer with another id or "id": null, a request
	 * answered 202 with no GET stream open, the answer's stream broken
	 * before the answer, the first message of xport_remote's automatic
	 * choice unanswered for 60 s), and why in words.  An answer is a
	 * response or error with the request's id as written.  Called once
	 * per such message, never after closed; before closed when the
	 * failure also closes the transport; a "note" event says it too (or
	 * the closed reason does).  It may come from inside xport_send (a
	 * refused connection, a full queue): be ready for the answer before
	 * sending.  NULL: not asked.  A request a server accepted and never
	 * answers on a live stream is not failed: that takes the caller's
	 * own timeout.
	 *
	 * No callback may free the transport: closed is the last call, and
	 * xport_free comes after it has returned (on a later loop pass).
	 */
	void	(*failed)(const char *, size_t, const char *, void *);
};

struct xport_ops {
	void	(*send)(struct xport *, const char *, size_t,
		    const char *const *);
	void	(*finish)(struct xport *);
	void	(*pause)(struct xport *, int);
	void	(*free)(struct xport *);
	/*
	 * xport_set_headers has stored new headers in x->headers; NULL:
	 * nothing to do (a transport that reads x->headers as it sends).
	 */
	void	(*headers)(struct xport *);
};

struct xport {
	const struct xport_ops	*ops;
	struct event_base	*base;
	struct xport_cbs	 cbs;
	void			*arg;
	char			*target;	/* for reports: argv or URL */
	char			*protocol_version;	/* HTTP: sent as
							   MCP-Protocol-Version */
	int			 exit_code;	/* stdio: the server's, or -1 */
	int			 exit_signal;	/* stdio: what killed it, or 0 */
	int			 paused;	/* xport_pause */
	char			**headers;	/* xport_set_headers: "Name:
						   value" lines, NULL-ended,
						   or NULL */
};

struct xport	*xport_stdio(struct event_base *, char *const [], size_t,
		     const struct xport_cbs *, void *, int *, char **);
size_t		 xport_stdio_unsent(struct xport *);
struct xport	*xport_http(struct event_base *, const char *, const char *,
		     int, size_t, const struct xport_cbs *, void *, char **);
void		 xport_http_probe(struct xport *, int (*)(int, void *), void *);
/*
 * xport_sse.c: the legacy HTTP+SSE transport (2024-11-05), as a client
 * uses it: GET the URL as an event stream, POST each message to the URL
 * its `endpoint` event names, read every answer from the stream.
 * The GET goes out on the loop pass after xport_sse() returns (so headers
 * set at once go with it); messages sent before the endpoint event wait
 * for it (bounded); an endpoint on another origin closes the transport.
 * xport_remote(): `record --connect`'s choice, by XPORT_REMOTE_*: Streamable
 * HTTP, legacy SSE, or (auto) Streamable HTTP falling back to legacy SSE
 * when the first POST is answered 400, 404 or 405 (the spec's rule for
 * clients that support both), the first message sent again, a "note"
 * saying so; what is sent meanwhile waits (bounded).
 */
enum xport_remote_kind {
	XPORT_REMOTE_AUTO,
	XPORT_REMOTE_HTTP,
	XPORT_REMOTE_SSE,
	XPORT_REMOTE_MAX
};
struct xport	*xport_sse(struct event_base *, const char *, const char *,
		     int, size_t, const struct xport_cbs *, void *, char **);
int		 xport_sse_endpoint(const char *, const char *, char **,
		     char **);
int		 xport_remote_legacy(struct xport *);
struct xport	*xport_remote(struct event_base *, enum xport_remote_kind,
		     const char *, const char *, int, size_t,
		     const struct xport_cbs *, void *, char **);
/*
 * Headers sent with every HTTP request from now on ("Name: value" each,
 * copied; they replace those set before); stdio ignores them.  Refuses
 * (-1, *cause, nothing changed) a line that is not a header (an empty or
 * non-token name, no colon, a CR, LF, NUL or other control byte in the
 * value), names a header the transport sets itself (Host,
 * Content-Length, Transfer-Encoding, Connection, Mcp-Session-Id, ...),
 * or passes XPORT_HEADERS_MAX lines or XPORT_HEADERS_BYTES in all.
 */
#define XPORT_HEADERS_MAX	64
#define XPORT_HEADERS_BYTES	(32 * 1024)
int		 xport_headers_check(const char *const *, size_t, char **);
int		 xport_set_headers(struct xport *, const char *const *, size_t,
		     char **);
char		*xport_header_parse(const char *, char **);
void		 xport_send(struct xport *, const char *, size_t,
		     const char *const *);
void		 xport_set_protocol_version(struct xport *, const char *);
void		 xport_pause(struct xport *, int);
void		 xport_finish(struct xport *);
void		 xport_free(struct xport *);
void		 xport_note(struct xport *, const char *, ...)
		     PRINTFLIKE(2, 3);
void		 xport_init(struct xport *, const struct xport_ops *,
		     struct event_base *, const struct xport_cbs *, void *);

/*
 * endpoint_stdio.c, endpoint_http.c: the server side of an MCP transport,
 * for mock.  Client messages come in whole; a request's answer (and what
 * goes before it) goes back on that request's channel: stdout, or the
 * POST's response (JSON, or an SSE stream when something goes first).
 */

struct endpoint;
struct ereq;

/* How a fault (mock --fault) cuts a request's channel short: ereq_cut(). */
enum ereq_cut {
	EREQ_CUT_STATUS,	/* HTTP: answer with a status, no body */
	EREQ_CUT_RESET,		/* HTTP: reset the connection */
	EREQ_CUT_END_STREAM,	/* HTTP: end the answer's SSE stream
				   without the answer */
	EREQ_CUT_CLOSE,		/* stdio: write what is queued, close our
				   stdout (a server exiting) */
	EREQ_CUT_KILL,		/* stdio: close our stdout now, dropping
				   what is queued (a server killed) */
	EREQ_CUT_MAX
};

struct endpoint_cbs {
	/* A client message; er is its reply channel, NULL if none. */
	void	(*message)(struct ereq *, const char *, size_t, void *);
	/* No more client messages will come (stdio: stdin closed). */
	void	(*closed)(const char *, void *);
	/*
	 * What we send can no longer be written (stdio: the client closed
	 * our stdout, a broken pipe, a full disk); NULL: not asked.
	 */
	void	(*failed)(const char *, void *);
	/*
	 * Output that was full (endpoint_full) has drained: what waited
	 * may go on; NULL: not asked.
	 */
	void	(*drained)(void *);
};

struct endpoint_ops {
	void	(*send)(struct endpoint *, const char *, size_t);
	void	(*req_send)(struct endpoint *, struct ereq *, const char *,
		    size_t);
	void	(*req_end)(struct endpoint *, struct ereq *, const char *,
		    size_t);
	void	(*set_session)(struct endpoint *, const char *);
	void	(*flush)(struct endpoint *);
	void	(*progress)(struct endpoint *, uint64_t *, uint64_t *);
	int	(*full)(struct endpoint *, struct ereq *);
	void	(*free)(struct endpoint *);
	void	(*cut)(struct endpoint *, struct ereq *, enum ereq_cut, int,
		    const char *, const char *);
	void	(*pause)(struct endpoint *, int);
};

struct endpoint {
	const struct endpoint_ops *ops;
	struct event_base	*base;
	struct endpoint_cbs	 cbs;
	void			*arg;
	const char		*who;	/* in logs and texts: "mock", "record" */
	int			 paused;	/* endpoint_pause */
};

struct endpoint	*endpoint_stdio(struct event_base *,
		     const struct endpoint_cbs *, void *);
struct endpoint	*endpoint_http(struct event_base *, const char *,
		     const struct listen_limits *, const struct endpoint_cbs *,
		     void *, char **, char **);
void		 endpoint_send(struct endpoint *, const char *, size_t);
void		 endpoint_set_who(struct endpoint *, const char *);
void		 endpoint_pause(struct endpoint *, int);
void		 endpoint_http_check_origin(struct endpoint *, int);
void		 endpoint_set_session(struct endpoint *, const char *);
void		 endpoint_flush(struct endpoint *);
void		 endpoint_progress(struct endpoint *, uint64_t *, uint64_t *);
int		 endpoint_full(struct endpoint *, struct ereq *);
struct event_base *endpoint_stdio_base_new(void);
int		 endpoint_stdio_input_is_file(void);
void		 endpoint_free(struct endpoint *);
void		 ereq_send(struct endpoint *, struct ereq *, const char *,
		     size_t);
void		 ereq_end(struct endpoint *, struct ereq *, const char *,
		     size_t);
int		 ereq_gone(const struct ereq *);
void		 ereq_cut(struct endpoint *, struct ereq *, enum ereq_cut,
		     int, const char *, const char *);

#endif
