/*
 * Internals shared by transport/endpoint_http.c (the endpoint),
 * transport/endpoint_http_conn.c (its connections) and
 * transport/endpoint_check.c (the Origin and Host check); nothing outside
 * them includes it.
 */
#ifndef MCPREEL_ENDPOINT_HTTP_INT_H
#define MCPREEL_ENDPOINT_HTTP_INT_H

#include <sys/queue.h>

#include <event2/bufferevent.h>
#include <event2/util.h>

#include "transport.h"

/*
 * Messages nobody asked for, kept until the client opens its event stream
 * (a client opens it just after initializing); past this they are dropped.
 */
#define ENDPOINT_UNSENT_MAX	256
/*
 * What a client may leave unread: past this, its connection's next request
 * is not read, and what the mock sends on that connection waits (as a
 * server blocks on a full socket), until it takes what it has (down to
 * half); so a client that never reads holds this much of our memory (and
 * one message) at most, and for --idle-timeout: a connection whose output
 * makes no progress for that long is closed.  Messages kept for an event
 * stream not yet open are bounded by it too.
 */
#define ENDPOINT_OUTPUT_MAX	(4u * 1024 * 1024)

/*
 * Closing on a request not read to its end (413, 400, 408): our side is
 * shut for writing and what the client still sends is read and dropped,
 * up to this much or for this long, so the answer is not lost to a reset
 * (a close with unread input resets the connection).
 */
#define ENDPOINT_LINGER_MAX	(1024 * 1024)
#define ENDPOINT_LINGER_S	2

struct econn;

/* What a connection's one timer waits for, and so which limit runs. */
enum ec_wait {
	EC_WAIT_NONE,		/* an answer or the event stream: no limit */
	EC_WAIT_IDLE,		/* the next request (--idle-timeout) */
	EC_WAIT_HEAD,		/* the rest of a head (--head-timeout) */
	EC_WAIT_BODY,		/* more of a body (--idle-timeout) */
	EC_WAIT_MAX
};

/* A request's reply channel: the POST it came in. */
struct ereq {
	struct econn	*c;		/* NULL once the client went away */
	int		 streaming;	/* the SSE head has gone out */
	int		 cut;		/* a fault cut its channel */
};

struct econn {
	struct endpoint_http	*eh;
	struct bufferevent	*bev;
	size_t			 scanned;
	int			 in_body;
	struct http_head	 head;
	struct http_body	 body;
	struct evbuffer		*data;
	struct ereq		*er;		/* an answer is being sent */
	struct event		*next_ev;	/* read on after an answer */
	int			 stream;	/* this is the GET stream */
	int			 close_after;
	struct event		*timer;
	enum ec_wait		 wait;
	int			 out_full;	/* over ENDPOINT_OUTPUT_MAX */
	int			 blocked;	/* a sender waits for it */
	int			 linger;	/* unread input: linger at close */
	int			 lingering;
	size_t			 lingered;	/* bytes dropped meanwhile */
	int			 reset;		/* a fault resets it (next pass) */
	int			 loopback;	/* came in on a loopback address */
	TAILQ_ENTRY(econn)	 entry;
};

struct endpoint_http {
	struct endpoint		 ep;	/* first: a struct endpoint * is one */
	struct listener		*listener;
	struct listen_limits	 lim;
	char			*session;
	struct econn		*stream;	/* the open GET stream */
	struct evbuffer		*unsent;	/* for the stream, until open */
	size_t			 nunsent;
	int			 unsent_warned;
	int			 slow_warned;	/* one warning, then debug */
	int			 check_origin;	/* endpoint_http_check_origin */
	struct event		*drain_ev;	/* cbs.drained, from the loop */
	TAILQ_HEAD(, econn)	 conns;
};

/* endpoint_http_conn.c */
void		 ec_free(struct econn *);
void		 ec_head(struct econn *, int, const char *, const char *);
void		 ec_reply(struct econn *, int, const char *, const char *,
		     const char *, size_t);
void		 ec_reply_text(struct econn *, int, const char *,
		     const char *, const char *);
void		 ec_sse_event(struct econn *, const char *, size_t);
void		 ec_sse_start(struct econn *);
void		 ec_wait_set(struct econn *);
void		 ec_process_requests(struct econn *);
void		 ec_timer_cb(evutil_socket_t, short, void *);
void		 ec_next_cb(evutil_socket_t, short, void *);
void		 ec_read_cb(struct bufferevent *, void *);
void		 ec_write_cb(struct bufferevent *, void *);
void		 ec_event_cb(struct bufferevent *, short, void *);

/* endpoint_check.c */
int		 endpoint_check_refused(struct econn *);

#endif
