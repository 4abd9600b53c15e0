/*
 * check_bench: how fast check/ reads a session.  Builds a session of N
 * messages in memory (a handshake, then tools/call requests with progress
 * tokens, a progress notification each, and their results: the mix of a
 * busy real session) and times check_message over all of them.  Prints
 * messages per second of wall clock and of CPU time, the peak RSS (VmHWM),
 * and whether the target (CHECK_BENCH_TARGET a second) was met.
 * Usage: check_bench [N]   (default 1 000 000)
 *        check_bench --jsonl [N]   the session as mcpreel-jsonl on stdout
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include "check_session.h"

/* The throughput `make bench` asks of check: messages a second, wall. */
#define CHECK_BENCH_TARGET	200000

/* What one finding costs the bench: it is counted, nothing more. */
static void
bench_cb(const struct check_finding *cf, void *arg)
{
	size_t	*n = arg;

	(void)cf;
	(*n)++;
}

/* CPU seconds used so far (a loaded machine does not change them much). */
static double
bench_cpu(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
}

static double
bench_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* Peak RSS in KiB, from /proc/self/status. */
static long
bench_hwm(void)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[256];
	long	 kb = -1;

	if (f == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return (kb);
}

/* The handshake that opens the bench's session. */
static const char *bench_hs[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":"
    "{\"name\":\"s\",\"version\":\"1\"}}}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
};

/* Message i (from 0) of the session into buf: its length; *dir set. */
static int
bench_msg(size_t i, char *buf, size_t size, enum dir *dir)
{
	if (i < 3) {
		*dir = i == 1 ? DIR_S2C : DIR_C2S;
		return (snprintf(buf, size, "%s", bench_hs[i]));
	}
	switch (i % 3) {
	case 0:
		*dir = DIR_C2S;
		return (snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"id\":"
		    "%zu,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"echo\",\"arguments\":{\"text\":\"hello\"},"
		    "\"_meta\":{\"progressToken\":%zu}}}", i, i));
	case 1:
		*dir = DIR_S2C;
		return (snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/progress\",\"params\":{"
		    "\"progressToken\":%zu,\"progress\":1,\"total\":2}}",
		    i - 1));
	default:
		*dir = DIR_S2C;
		return (snprintf(buf, size, "{\"jsonrpc\":\"2.0\",\"id\":"
		    "%zu,\"result\":{\"content\":[{\"type\":\"text\","
		    "\"text\":\"hello\"}],\"isError\":false}}", i - 2));
	}
}

/*
 * The same session as 'mcpreel export --format jsonl' writes it, for
 * 'mcpreel import': make bench checks it from a database too.
 */
static int
bench_jsonl(size_t n)
{
	char		buf[512];
	enum dir	dir;
	size_t		i;

	printf("{\"format\":\"mcpreel-jsonl\",\"version\":1,\"session\":1,"
	    "\"name\":\"check-bench\",\"transport\":\"stdio\",\"target\":"
	    "\"[\\\"check_bench\\\"]\",\"started_ns\":1,\"ended_ns\":%zu,"
	    "\"exit_status\":0,\"exit_signal\":null,\"end_reason\":"
	    "\"host closed the connection\",\"messages_lost\":0,"
	    "\"store_error\":null,\"imported_from\":null,\"recorder_pid\":1,"
	    "\"mcpreel_version\":\"bench\",\"exported_by\":\"check_bench\"}\n",
	    n * 1000 + 2);
	for (i = 0; i < n; i++) {
		bench_msg(i, buf, sizeof buf, &dir);
		printf("{\"type\":\"message\",\"seq\":%zu,\"direction\":"
		    "\"%s\",\"ts_ns\":%zu,\"mono_ns\":%zu,\"message\":%s}\n",
		    i + 1, dir == DIR_C2S ? "c2s" : "s2c", (i + 1) * 1000,
		    (i + 1) * 1000, buf);
	}
	return (fflush(stdout) == 0 ? 0 : 1);
}

int
main(int argc, char **argv)
{
	struct check		*chk;
	struct check_msg	 m;
	char			 buf[512];
	size_t			 n = 1000000, i, findings = 0;
	double			 t0, t1, c0, c1;
	int			 jsonl = 0;

	if (argc > 1 && strcmp(argv[1], "--jsonl") == 0) {
		jsonl = 1;
		argc--;
		argv++;
	}
	if (argc > 1)
		n = strtoul(argv[1], NULL, 10);
	n -= n % 3;	/* end on a result: every request answered */
	if (jsonl)
		return (bench_jsonl(n));
	chk = check_new(bench_cb, &findings);
	t0 = bench_now();
	c0 = bench_cpu();
	for (i = 0; i < n; i++) {
		memset(&m, 0, sizeof m);
		m.seq = (int64_t)i + 1;
		m.len = (size_t)bench_msg(i, buf, sizeof buf, &m.dir);
		m.raw = buf;
		check_message(chk, &m);
	}
	check_end(chk, CHECK_END_CLEAN);
	t1 = bench_now();
	c1 = bench_cpu();
	check_free(chk);
	printf("check: %zu messages in %.2f s: %.0f messages/s (%.0f per CPU "
	    "second), %zu findings, peak RSS %ld KiB\n", n, t1 - t0,
	    (double)n / (t1 - t0), (double)n / (c1 - c0), findings,
	    bench_hwm());
	if ((double)n / (t1 - t0) >= CHECK_BENCH_TARGET)
		printf("check: target >= %d messages/s met\n",
		    CHECK_BENCH_TARGET);
	else
		printf("check: target >= %d messages/s NOT met in this run "
		    "(%.0f wall; %.0f per CPU second: %s)\n",
		    CHECK_BENCH_TARGET, (double)n / (t1 - t0),
		    (double)n / (c1 - c0), (double)n / (c1 - c0) >=
		    CHECK_BENCH_TARGET ? "fast enough per CPU second, so the "
		    "machine was busy" : "too slow even per CPU second");
	return (findings == 0 ? 0 : 1);
}
