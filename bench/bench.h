/*
 * bench: the tools of the benchmark harness (bench/run.sh).  Two echo
 * servers (stdio and HTTP) and two load clients, sharing the message
 * format, timing, statistics and error reporting declared here.  None of
 * this is linked into mcpreel: the harness measures mcpreel from outside,
 * the way a host and a server see it.
 */
#ifndef MCPREEL_BENCH_H
#define MCPREEL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif
#define PRINTFLIKE(a, b) __attribute__((__format__(__printf__, a, b)))

/*
 * The longest message any tool accepts: well above the 64 MiB of the
 * large scenario, low enough that a runaway peer cannot eat the machine.
 */
#define BENCH_MSG_MAX		((size_t)1024 * 1024 * 1024)
/* What we ask of the kernel for a pipe (fs/pipe-max-size is 1 MiB). */
#define BENCH_PIPE_SIZE		(1024 * 1024)
/* The size of the tools' big reads and writes. */
#define BENCH_IO_SIZE		(1024 * 1024)

/*
 * A request is {"jsonrpc":"2.0","id":N,"method":"bench/echo",
 * "params":{"pad":"xxx"}} and its answer {"jsonrpc":"2.0","id":N,
 * "result":{"echo":"xxx"}} of the same length: the id comes first so the
 * echo servers find it with a short scan.
 */
#define BENCH_REQ_HEAD		"{\"jsonrpc\":\"2.0\",\"id\":"
#define BENCH_REQ_MID		",\"method\":\"bench/echo\",\"params\":{\"pad\":\""
#define BENCH_REQ_TAIL		"\"}}"
#define BENCH_RESP_HEAD		"{\"jsonrpc\":\"2.0\",\"id\":"
#define BENCH_RESP_MID		",\"result\":{\"echo\":\""
#define BENCH_RESP_TAIL		"\"}}"

/* Latency figures over a run, in microseconds. */
struct bench_stats {
	double		p50_us;
	double		p99_us;
	double		mean_us;
	double		max_us;
};

/* util.c */
void		 util_setprogname(const char *);
__dead void	 util_fatal(const char *, ...) PRINTFLIKE(1, 2);
__dead void	 util_fatalx(const char *, ...) PRINTFLIKE(1, 2);
void		 util_warnx(const char *, ...) PRINTFLIKE(1, 2);
void		*util_xmalloc(size_t);
void		*util_xrealloc(void *, size_t);
int64_t		 util_now_ns(void);
void		 util_pipe_size(int);
int		 util_set_nonblock(int, int);
size_t		 util_parse_size(const char *, const char *);
void		 util_stats(int64_t *, size_t, struct bench_stats *);
int		 util_find_id(const char *, size_t, size_t *, size_t *);
size_t		 util_echo_pad(size_t, size_t);
size_t		 util_request_len(uint64_t, size_t);
void		 util_request_fill(char *, uint64_t, size_t);
char		*util_request(uint64_t, size_t, size_t *);
void		 util_watchdog(unsigned int, const char *);
void		 util_watchdog_child(int);
int		 util_parse_port(const char *, const char *);
struct sockaddr_in;
void		 util_loopback(struct sockaddr_in *, int);
int		 util_listen(int, int, int, int *);

/* Where an HTTP load client sends: parsed from its URL once. */
struct addrinfo;
struct htarget {
	char		 host[256];
	char		 port[8];
	char		 path[1024];
	struct addrinfo	*ai;
};

/* One keep-alive connection of an HTTP load client and its last answer. */
struct hlink {
	const struct htarget	*t;
	int			 fd;
	char			*buf;		/* what was read, not yet used */
	size_t			 len;
	size_t			 cap;
	char			*body;		/* the answer's body, decoded */
	size_t			 blen;
	size_t			 body_cap;
	int			 status;
	uint64_t		 sent;		/* requests written */
	uint64_t		 received;	/* answers read */
};

/* Called with each header of an answer but its framing: arg, name, value. */
typedef void (*hlink_header_cb)(void *, const char *, const char *);

/* hlink.c */
void		 hlink_target(struct htarget *, const char *);
void		 hlink_open(struct hlink *, const struct htarget *);
void		 hlink_close(struct hlink *);
void		 hlink_write(struct hlink *, const char *, size_t);
void		 hlink_response(struct hlink *, hlink_header_cb, void *,
		     int64_t *);

/* The scenarios of the HTTP load clients. */
enum loadrun_scenario {
	LOADRUN_LATENCY,	/* one connection, one request at a time */
	LOADRUN_THROUGHPUT,	/* --conns connections in parallel */
	LOADRUN_MAX
};

/* An HTTP load client's command line, then the results of its run. */
struct loadrun {
	enum loadrun_scenario	 sc;
	size_t			 count;
	size_t			 size;
	size_t			 conns;
	size_t			 warmup;
	size_t			 timeout;
	const char		*url;

	uint64_t		 sent;		/* warm-up included */
	uint64_t		 received;
	int64_t			 elapsed_ns;	/* the timed part */
	struct bench_stats	 st;		/* latency: to the answer */
	struct bench_stats	 head;		/* latency: to its head */
	double			 cpu_s;		/* the process's, all threads */
};

/* One connection of a load client, on its own thread. */
struct loadconn {
	void		*arg;		/* the tool's, shared: loadrun_run's */
	struct hlink	 hc;
	char		*req;		/* the request being built */
	size_t		 req_cap;
	int		 flag;		/* the tool's, about the last answer */
};

/*
 * What a load client does on a connection: round_trip sends request id
 * and reads and checks its answer (head_ns, when not NULL, gets the time
 * the answer's head was in).  The latencies to the heads are kept only
 * when heads is set.
 */
struct loadrun_ops {
	void	(*round_trip)(struct loadconn *, uint64_t, int64_t *);
	int	  heads;	/* time the heads too (a clock read more) */
};

/* The options loadrun_option() takes, for a tool's getopt_long table. */
#define LOADRUN_LONGOPTS \
	{ "scenario",	required_argument,	NULL, 's' }, \
	{ "count",	required_argument,	NULL, 'n' }, \
	{ "size",	required_argument,	NULL, 'b' }, \
	{ "conns",	required_argument,	NULL, 'c' }, \
	{ "warmup",	required_argument,	NULL, 'W' }, \
	{ "timeout",	required_argument,	NULL, 't' }

/* loadrun.c */
void		 loadrun_init(struct loadrun *, size_t, size_t, size_t,
		     size_t);
int		 loadrun_option(struct loadrun *, int, const char *);
int		 loadrun_finish(struct loadrun *, int, char **, size_t, size_t,
		     const char *);
struct loadconn	*loadrun_open(const struct htarget *, void *);
void		 loadrun_close(struct loadconn *);
char		*loadrun_req(struct loadconn *, size_t);
void		 loadrun_run(struct loadrun *, const struct loadrun_ops *,
		     const struct htarget *, void *);
double		 loadrun_msgs_per_s(const struct loadrun *);

#endif
