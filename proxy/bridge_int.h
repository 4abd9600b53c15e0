/*
 * Internals of the bridge (proxy/bridge.c, bridge_pend.c): the bridge and
 * its pending requests; nothing outside proxy/ includes it.
 */
#ifndef MCPREEL_BRIDGE_INT_H
#define MCPREEL_BRIDGE_INT_H

#include <sys/queue.h>

#include "proxy.h"

/* A client request waiting for its answer. */
struct bpend {
	char			*id;	/* the id's JSON text (bridge_pend_key) */
	struct ereq		*er;	/* its POST; NULL over stdio */
	char			*token;	/* _meta.progressToken as JSON, or NULL */
	int			 init;	/* an initialize */
	int			 list;	/* a tools/list (--connect) */
	TAILQ_ENTRY(bpend)	 entry;
};
TAILQ_HEAD(bpends, bpend);

struct bridge {
	const struct bridge_options *opt;
	struct event_base	*base;
	struct endpoint		*ep;
	struct xport		*x;
	struct tap		*tap;
	struct wsession		*s;
	struct idmap		*byid;		/* id text -> struct bpend */
	struct idmap		*bytoken;	/* token text -> struct bpend */
	struct proto_headers	*ph;		/* --connect: 2026-07-28 headers */
	struct bpends		 pend;
	size_t			 npend;
	int			 xpause;	/* BRIDGE_PAUSE_* on the server */
	int			 epause;	/* BRIDGE_PAUSE_* on the clients */
	struct event		*poll_ev;	/* stdout full: look again */
	struct event		*stop_ev;	/* the finish or linger ran out */
	struct event		*sigs[3];
	char			*gone;		/* the server is gone: why */
	int			 finishing;	/* xport_finish asked */
	int			 heard;		/* a message came from the server */
	int			 failed;	/* a request failed at HTTP level */
	int			 refused_said;	/* a refused request was logged */
	int			 stdio_host;	/* the client is our stdio */
	int			 lingering;	/* the last answers go out */
	int			 sse_said;	/* the row says "sse" now */
	char			*reason;	/* how the session ended */
};

/* bridge.c */
void		 bridge_note(struct bridge *, const char *);

/* bridge_pend.c: pending requests, and the answers mcpreel makes. */
char		*bridge_pend_token(const char *, size_t, int);
char		*bridge_pend_canon(const char *);
char		*bridge_pend_key(const char *, const struct scan *);
struct bpend	*bridge_pend_only(struct bridge *);
void		 bridge_pend_free(struct bpend *);
void		 bridge_pend_take(struct bridge *, struct bpend *);
void		 bridge_pend_answer(struct bridge *, struct ereq *, const char *,
		     const char *);
char		*bridge_pend_why(struct bridge *, const char *);
void		 bridge_pend_say(struct bridge *, const char *);
void		 bridge_pend_fail_all(struct bridge *, const char *);
void		 bridge_pend_failed_cb(const char *, size_t, const char *, void *);

#endif
