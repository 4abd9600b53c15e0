/*
 * proxy: recording.  Two peers joined by a tap; the stdio front end here,
 * HTTP later.
 */
#ifndef MCPREEL_PROXY_H
#define MCPREEL_PROXY_H

#include "core.h"
#include "store.h"
#include "transport.h"

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
void		 tap_event(struct tap *, struct wsession *, const char *,
		     const void *, size_t);
int		 tap_paused(const struct tap *);

/* record.c */
struct hsession;
struct record_result {
	int	 exit_code;	/* what mcpreel should exit with */
	int	 exit_status;	/* the server's, or -1 if it never ran */
	int	 exit_signal;
	char	*reason;	/* how the session ended, in words */
	struct hsession	*sessions;	/* record_http: free them with
					   record_http_free() */
};

int		 record_stdio(struct writer *, struct wsession *,
		     char *const [], struct record_result *);
/* --spin-us: the default, the most it takes, and the setter. */
#define RECORD_SPIN_US		20
#define RECORD_SPIN_US_MAX	10000
void		 record_set_spin(unsigned);

/* record_loop.c: the stdio relay's event loop. */
struct event_base *record_loop_base_new(void);
void		 record_loop_run(struct event_base *, const unsigned long *);
int		 record_loop_is_pipe(int);

/* http.c */
struct http_options {
	const char	 *name;		/* --name, or NULL */
	const char	 *listen;	/* --listen */
	const char	 *upstream;	/* --upstream URL */
	const char	 *cacert;	/* --cacert FILE, or NULL */
	int		  insecure;	/* --insecure */
	int		  keep_host;	/* --keep-host */
	char		**redact;	/* --redact-header NAME ... */
	size_t		  nredact;
};

int		 record_http(struct writer *, const struct http_options *,
		     struct record_result *);
void		 record_http_free(struct record_result *);

#endif
