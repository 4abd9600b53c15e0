/*
 * What the files of mcpreel import share: the state of one import, the
 * members a line may have, and reading them.  Only cmd_import.c,
 * import_jsonl.c and import_tape.c include it.
 */
#ifndef MCPREEL_IMPORT_H
#define MCPREEL_IMPORT_H

#include <pthread.h>

#include <jansson.h>

#include "cli.h"
#include "store.h"

enum import_format {
	IMPORT_AUTO,
	IMPORT_JSONL,		/* mcpreel export --format jsonl */
	IMPORT_TAPE,		/* an mcp-tape trace */
	IMPORT_FORMAT_MAX
};

/* The members import looks at, in either format. */
enum field {
	F_FORMAT, F_VERSION, F_TYPE, F_NAME, F_TRANSPORT, F_TARGET,
	F_STARTED_NS, F_ENDED_NS, F_EXIT_STATUS, F_EXIT_SIGNAL, F_END_REASON,
	F_MESSAGES_LOST, F_STORE_ERROR, F_RECORDER_PID, F_MCPREEL_VERSION,
	F_EXCHANGE, F_CONNECTION, F_METHOD, F_PATH, F_REQUEST_HEADERS,
	F_MONO_NS, F_STATUS, F_RESPONSE_HEADERS, F_RESPONSE_MONO_NS,
	F_OUTCOME, F_BODY, F_BODY_B64, F_DIRECTION, F_TS_NS, F_SSE_EVENT_ID,
	F_WIRE_SIZE, F_SHA256, F_TRUNCATED, F_REDACTED, F_MESSAGE, F_RAW,
	F_RAW_B64, F_KIND, F_TEXT, F_TEXT_B64, F_REQUEST_TRAILERS,
	F_RESPONSE_TRAILERS, F_N, F_RULE_INDEX, F_RULE, F_ACTION, F_DETAIL,
	F_ID, F_FAULT, F_FAULT_ROLE, F_RULE_B64, F_ACTION_B64, F_METHOD_B64,
	F_DETAIL_B64, F_SESSION, F_IMPORTED_FROM, F_OTLP_DROPPED,
	F_CLIENT_ADDRESS, F_CLIENT_PORT,
	/* mcp-tape */
	F_T, F_DIR, F_V, F_STARTED_AT, F_LABEL, F_COMMAND, F_EXIT_CODE,
	F_MAX
};

/* Where a member's value is in the line; set is 0 when it is absent. */
struct span {
	size_t		 off;
	size_t		 len;
	int		 set;
};

/* An HTTP exchange of the file: its number there, and its end to write. */
struct import_x {
	int64_t		 file_id;
	struct wexchange *wx;
	int64_t		 ended_ns;	/* WRITER_NO_TIME when none */
	char		*outcome;
	struct msg	*body;		/* or NULL */
};

struct import {
	const char		*path;		/* as given; "-" is stdin */
	FILE			*file;		/* read from */
	int			 store_failed;	/* the database failed */
	int			 inited;	/* lock and cond are */
	size_t			 max_record;	/* --max-record-size, 0: none */
	struct import_long	*long_line;	/* the line, when over it */
	enum import_format	 format;
	const char		*name;		/* --name, or NULL */
	int			 keep;		/* a cassette: keep the file's
						   session id, imported_from */
	int			 scratch;	/* into a scratch store
						   (STORE_SCRATCH) */
	char			*from;		/* sessions.imported_from */

	/* The line being read. */
	size_t			 lineno;
	const char		*line;
	size_t			 len;
	struct span		 f[F_MAX];
	char			*cause;		/* the first error */

	struct writer		*w;
	struct wsession		*s;		/* once begun, with a writer */
	int			 begun;		/* the session was begun */

	/*
	 * Sink mode (import_sink()): no store and no writer; each message
	 * goes to sink (which takes it), numbered as the writer would
	 * (imp->messages), and the faults named are checked here.
	 */
	void			(*sink)(struct import *, struct msg *);
	void			*sink_arg;
	int64_t			 sess_id;	/* the file's "session", or 0 */
	char			*sess_name;	/* the session's name, or NULL */
	int64_t			*fault_ns;	/* the fault lines' n */
	size_t			 nfault_ns;
	int64_t			*fault_refs;	/* the n messages name */
	size_t			 nfault_refs;
	int			 ended;		/* an end line was read */
	int64_t			 ended_ns;	/* WRITER_NO_TIME: none */
	int			 exit_status;	/* -1: none */
	int			 exit_signal;
	char			*end_reason;
	int			 header_seen;
	int			 records;	/* lines other than a header */

	struct import_x		*xs;
	size_t			 nxs;
	size_t			 axs;		/* room in xs */
	int			 xs_sorted;

	/* What was handed to the writer, to check against the store. */
	int64_t			 messages;
	int64_t			 events;
	int64_t			 faults;

	/* The writer's drain callback wakes a paused import. */
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	int			 drained;
};

/* cmd_import.c */
int		 import_file(struct import *, const char *, int64_t *);
void		 import_clear(struct import *);
int		 import_bad(struct import *, const char *, ...)
		     PRINTFLIKE(2, 3);
int		 import_has(const struct import *, enum field);
int		 import_int(struct import *, enum field, int, int64_t *);
int		 import_str(struct import *, enum field, char **);
json_t		*import_json(struct import *, enum field);
struct msg	*import_msg(struct import *, enum dir, const char *,
		     size_t);
struct msg	*import_msg_member(struct import *, enum field, enum dir);
struct msg	*import_bytes(struct import *, enum field, enum field,
		     enum dir);
int		 import_begin(struct import *, const char *, const char *,
		     const char *, const struct wsession_meta *);
void		 import_message(struct import *, struct msg *,
		     struct wexchange *);
int		 import_sink(struct import *);
void		 import_fault_ref(struct import *, int64_t);

/* import_jsonl.c */
int		 import_jsonl_line(struct import *);

/*
 * A line that passes --max-record-size by this much is read in bounded
 * memory (import_long.c) rather than held whole: the slack is for the
 * members around the message, and what they may add up to in that line.
 */
#define IMPORT_LONG_SLACK	(1024 * 1024)

/* import_long.c: a line longer than --max-record-size, read in bounded memory. */
struct import_long *import_long_new(struct import *);
void		 import_long_free(struct import_long *);
int		 import_long_feed(struct import_long *, const char *, size_t,
		     size_t *);
const char	*import_long_line(struct import_long *, size_t *);
struct msg	*import_long_msg(struct import_long *, size_t, enum dir);
int		 import_long_cut(const struct import_long *, size_t);

/* import_tape.c */
int		 import_tape_line(struct import *);

#endif
