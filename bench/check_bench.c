/*
 * check_bench: how fast check/ reads a session.  Builds a session of N
 * messages in memory (a handshake, then tools/call requests with progress
 * tokens, a progress notification each, and their results: the mix of a
 * busy real session) and times check_message over all of them.  Prints
 * messages per second of wall clock and of CPU time, the peak RSS (VmHWM),
 * and whether the target (CHECK_BENCH_TARGET a second) was met.
 * Usage: check_bench [N]   (default 1 000 000)
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

int
main(int argc, char **argv)
{
	static const char *hs[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
	    "\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":"
	    "{\"name\":\"s\",\"version\":\"1\"}}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	};
	struct check		*chk;
	struct check_msg	 m;
	char			 buf[512];
	size_t			 n = 1000000, i, findings = 0;
	double			 t0, t1, c0, c1;
	int			 k;

	if (argc > 1)
		n = strtoul(argv[1], NULL, 10);
	n -= n % 3;	/* end on a result: every request answered */
	chk = check_new(bench_cb, &findings);
	t0 = bench_now();
	c0 = bench_cpu();
	for (i = 0; i < 3; i++) {
		memset(&m, 0, sizeof m);
		m.seq = (int64_t)i + 1;
		m.dir = i == 1 ? DIR_S2C : DIR_C2S;
		m.raw = hs[i];
		m.len = strlen(hs[i]);
		check_message(chk, &m);
	}
	for (i = 3; i < n; i++) {
		memset(&m, 0, sizeof m);
		m.seq = (int64_t)i + 1;
		switch (i % 3) {
		case 0:
			m.dir = DIR_C2S;
			k = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":"
			    "%zu,\"method\":\"tools/call\",\"params\":{\"name\":"
			    "\"echo\",\"arguments\":{\"text\":\"hello\"},"
			    "\"_meta\":{\"progressToken\":%zu}}}", i, i);
			break;
		case 1:
			m.dir = DIR_S2C;
			k = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"notifications/progress\",\"params\":{"
			    "\"progressToken\":%zu,\"progress\":1,\"total\":2}}",
			    i - 1);
			break;
		default:
			m.dir = DIR_S2C;
			k = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":"
			    "%zu,\"result\":{\"content\":[{\"type\":\"text\","
			    "\"text\":\"hello\"}],\"isError\":false}}", i - 2);
			break;
		}
		m.raw = buf;
		m.len = (size_t)k;
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
