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

struct tap	*tap_new(struct event_base *, struct writer *,
		     struct wsession *, tap_resume_cb, void *);
void		 tap_free(struct tap *);
int		 tap_message(struct tap *, struct msg *);
void		 tap_event(struct tap *, const char *, const void *, size_t);
int		 tap_paused(const struct tap *);

/* record.c */
struct record_result {
	int	 exit_code;	/* what mcpreel should exit with */
	int	 exit_status;	/* the server's, or -1 if it never ran */
	int	 exit_signal;
	char	*reason;	/* how the session ended, in words */
};

int		 record_stdio(struct writer *, struct wsession *,
		     char *const [], struct record_result *);

#endif
