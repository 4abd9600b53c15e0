/*
 * Internals of the stdio relay (proxy/record.c, half.c): the relay and its
 * two symmetric halves; nothing outside proxy/ includes it.
 */
#ifndef MCPREEL_RECORD_INT_H
#define MCPREEL_RECORD_INT_H

#include "proxy.h"

/* Largest single read from a source: a pipe's worth (see child.c). */
#define RECORD_READ_MAX		(1024 * 1024)
/*
 * When the server's stdout ends, how long to wait for it to exit before
 * saying it closed its stdout and lives on: an exiting server's stdout
 * often ends just before we learn that it exited.
 */
#define RECORD_STDOUT_CHECK_MS	500
/*
 * The most stderr lines taken for a private key's body after its BEGIN
 * line (an 8192-bit RSA key in PEM is ~100): a stray BEGIN without an
 * END hides no more of the server's stderr than that.
 */
#define RECORD_PEM_LINES_MAX	200

enum pause_why {
	PAUSE_PEER = 0x1,	/* the destination is backed up */
	PAUSE_STORE = 0x2,	/* the writer's queue is full */
	PAUSE_FAULT = 0x4,	/* fault injection holds too much back */
	PAUSE_ANSWER = 0x8	/* the other destination is backed up with
				   answers injected for this source */
};

enum relay_state {
	RELAY_RUNNING,		/* both peers up */
	RELAY_DRAINING,		/* the server exited: reading what is left */
	RELAY_FLUSHING,		/* giving the host what we still hold */
	RELAY_DONE,
	RELAY_MAX
};

struct relay;

/* One direction of the relay. */
struct half {
	struct relay		*r;
	enum dir		 dir;
	const char		*src_name;	/* for logs: where bytes come from */
	const char		*dst_name;
	int			 in_fd;		/* the source; -1 once closed */
	int			 out_fd;	/* the destination */
	int			 close_in;	/* in_fd is ours to close */
	int			 tee;		/* both ends are pipes: forward
						   with tee(2), no copy */
	struct event		*rd_ev;		/* in_fd readable (persistent) */
	struct event		*wr_ev;		/* out_fd writable: only while
						   the backlog holds bytes */
	struct evbuffer		*backlog;	/* read, not yet written */
	struct evbuffer		*held;		/* --durable: read, waiting
						   for its line's commit */
	struct line		 line;		/* being gathered for the record:
						   its bytes are forwarded already */
	int			 pause;		/* enum pause_why bits */
	int			 eof;		/* the source ended */
	int			 out_closed;	/* destination closed or dead */
};

struct inject;
struct relay {
	struct event_base	*base;
	struct inject		*inj;		/* --fault rules, or NULL */
	struct wsession		*session;
	struct child		*child;
	struct tap		*tap;
	struct half		 half[DIR_MAX];
	char			*rbuf;		/* RECORD_READ_MAX, both halves */
	struct bufferevent	*err_in;	/* the server's stderr */
	struct framer		 err_fr;
	int			 err_eof;
	int			 err_pem;	/* lines left of a private key */
	struct event		*sigs[3];
	struct event		*grace;
	struct event		*stdout_check;	/* RECORD_STDOUT_CHECK_MS */
	enum relay_state	 state;
	int			 grace_waited;	/* ms, while reading paused */
	int			 host_gone;
	int			 signalled;	/* we passed a signal on */
	char			*reason;	/* why the session ended */
	unsigned long		 moved;		/* reads that brought bytes */
};

/* half.c */
void		 half_init(struct relay *, enum dir, int, int, int, int);
void		 half_free(struct half *);
void		 half_pause(struct half *, int, int);
size_t		 half_backlog(const struct half *);
void		 half_source_ended(struct half *, const char *);
void		 half_partial(struct half *, size_t, int);
void		 half_close_out(struct half *);
void		 half_send(struct half *, const char *, size_t);
void		 half_record(struct half *, const char *, size_t);
struct msg	*half_line_msg(struct half *, const char *, size_t);
void		 half_watermark(struct half *);
void		 half_answered(struct half *);
void		 half_read_ended(struct half *, ssize_t);

/* inject.c: the line-at-a-time path with --fault rules. */
struct inject	*inject_new(struct relay *, const struct record_faults *);
void		 inject_free(struct inject *);
void		 inject_read_cb(evutil_socket_t, short, void *);
void		 inject_source_ended(struct half *);
size_t		 inject_pending(const struct half *);
int64_t		 inject_hold_ms(const struct half *);
int		 inject_reload(struct relay *);

/* inject_req.c: the requests the fault path remembers. */
struct inject_reqs;
struct scan;
struct inject_reqs *inject_reqs_new(void);
void		 inject_reqs_free(struct inject_reqs *);
void		 inject_reqs_remember(struct inject_reqs *, const char *,
		    const struct scan *);
const char	*inject_reqs_method_of(struct inject_reqs *, const char *);
int		 inject_reqs_timeouts(const struct inject_reqs *);
void		 inject_reqs_timeout(struct inject_reqs *, const char *, int64_t,
		    int64_t);
int		 inject_reqs_timed_out(struct inject_reqs *, const char *,
		    int64_t *);
char		*inject_id_dup(const char *, const struct scan *);
char		*inject_method_dup(const char *, const struct scan *);

/* record.c */
void		 relay_reason(struct relay *, const char *);
void		 relay_check_done(struct relay *);
void		 relay_end_now(struct relay *, const char *);

#endif
