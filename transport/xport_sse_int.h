/*
 * Internals shared by transport/xport_sse.c (the stream),
 * transport/xport_sse_post.c (the POSTs),
 * transport/xport_sse_endpoint.c (the endpoint URL) and
 * transport/xport_sse_msg.c (messages sent, and requests awaiting their
 * answers); nothing outside them includes it.
 */
#ifndef MCPREEL_XPORT_SSE_INT_H
#define MCPREEL_XPORT_SSE_INT_H

#include <sys/queue.h>

#include "transport.h"

/* How long connecting (and the TLS handshake) may take, as xport_http. */
#define XSE_CONNECT_TIMEOUT_S	10
/*
 * How long a POST may wait for its answer's head: servers answer 202 at
 * once (the real answer comes on the stream).
 */
#define XSE_POST_TIMEOUT_S	30
/* A POST's answer body ("Accepted") read at most; the rest is dropped. */
#define XSE_POST_BODY_MAX	(64 * 1024)
/* Requests remembered until their answer: as the bridge's in-flight cap. */
#define XSE_PENDING_MAX		4096
/* Longest endpoint URL taken: real ones are a path and a session id. */
#define XSE_ENDPOINT_MAX	8192

enum xse_state {
	XSE_CONNECTING,		/* GET sent, no answer head yet */
	XSE_WAITING,		/* the stream is open, no endpoint event yet */
	XSE_OPEN,		/* messages go to the endpoint */
	XSE_CLOSED,		/* cbs.closed called, or about to be */
	XSE_MAX
};

struct xport_sse;
struct xse_post;

/* A message sent: queued, in a POST, or a request awaiting its answer. */
struct xse_msg {
	char			*body;
	size_t			 len;
	char			**headers;	/* queued: xport_send's, copied */
	char			*id;		/* requests: the id's JSON text */
	size_t			 id_len;
	int			 pending;	/* on xs->pending */
	int			 queued;	/* on xs->queue */
	struct xse_post		*post;		/* the POST carrying it */
	TAILQ_ENTRY(xse_msg)	 pentry;
	TAILQ_ENTRY(xse_msg)	 qentry;
};
TAILQ_HEAD(xse_msgs, xse_msg);

/* One POST in flight. */
struct xse_post {
	struct xport_sse	*xs;
	struct bufferevent	*bev;
	struct xse_msg		*m;		/* NULL once answered on the
						   stream */
	struct http_head	 resp;
	int			 have_head;
	size_t			 scanned;
	struct http_body	 body;
	struct evbuffer		*data;		/* its body, thrown away */
	TAILQ_ENTRY(xse_post)	 entry;
};

struct xport_sse {
	struct xport		 x;	/* first: a struct xport * is one */
	struct upstream		 up;
	char			*get_target;	/* the GET's path and query */
	char			*post_target;	/* the endpoint's */
	enum xse_state		 state;
	int			 finishing;
	size_t			 max_body;	/* of one event; 0: none */

	struct bufferevent	*stream;
	struct http_head	 resp;
	int			 have_head;
	size_t			 scanned;
	struct http_body	 body;
	struct sse_parser	 sp;
	struct evbuffer		*data;		/* decoded, not yet parsed */

	struct event		*timer;		/* endpoint, finish timeouts */
	struct event		*start_ev;	/* opens the stream */
	struct event		*done_ev;	/* cbs.closed, deferred */
	char			*done_why;

	struct xse_msgs		 queue;		/* before the endpoint event */
	size_t			 nqueued;
	size_t			 queued_bytes;
	struct xse_msgs		 pending;	/* requests awaiting answers */
	size_t			 npending;
	int			 pending_full_noted;
	int			 endpoint_again_noted;
	TAILQ_HEAD(, xse_post)	 posts;
};

/* xport_sse.c */
void		 xse_close(struct xport_sse *, const char *);

/* xport_sse_post.c */
void		 xse_post_free(struct xse_post *);
void		 xse_post_start(struct xport_sse *, struct xse_msg *,
		     const char *const *);

/* xport_sse_msg.c */
struct xse_msg	*xse_msg_new(struct xport_sse *, const char *, size_t);
void		 xse_msg_free(struct xse_msg *);
void		 xse_msg_drop(struct xport_sse *, struct xse_msg *);
void		 xse_msg_fail(struct xport_sse *, struct xse_msg *,
		     const char *);
void		 xse_msg_answered(struct xport_sse *, const char *, size_t);

#endif
