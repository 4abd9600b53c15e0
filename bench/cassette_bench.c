/*
 * cassette_bench: how long a cassette takes to open for mock.
 *   cassette_bench --jsonl N       a cassette of N messages on stdout (a
 *                                  handshake, then tools/call requests of
 *                                  ~250 B each answered with ~1 KiB of
 *                                  text: what 'mcpreel export' writes)
 *   cassette_bench -- CMD [ARGS]   start CMD (mcpreel mock CASSETTE) on
 *                                  pipes, send it an initialize request at
 *                                  once and time it until the answer is
 *                                  read; then close its stdin and print
 *                                  one key=value line with the time and
 *                                  CMD's peak RSS (wait4)
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* The longest CMD may take to answer before the bench gives up, s. */
#define CASSETTE_BENCH_TIMEOUT	60

/* The handshake's request: the same bytes in the cassette and live. */
#define CB_INIT "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"," \
	"\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}," \
	"\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}"
#define CB_INIT_RESULT "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{" \
	"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}," \
	"\"serverInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}"
#define CB_INITIALIZED \
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"

/* One message line of the cassette. */
static void
cb_line(size_t seq, const char *dir, const char *msg)
{
	printf("{\"type\":\"message\",\"seq\":%zu,\"direction\":\"%s\","
	    "\"ts_ns\":%zu,\"mono_ns\":%zu,\"message\":%s}\n", seq, dir,
	    1000000000 + seq * 100000, seq * 100000, msg);
}

/* Write a cassette of n messages (n rounded down to an even count). */
static int
cb_jsonl(size_t n)
{
	char	 req[512], text[1100], res[1400];
	size_t	 seq, i, k;

	printf("{\"format\":\"mcpreel-jsonl\",\"version\":1,\"session\":1,"
	    "\"name\":\"cassette-bench\",\"transport\":\"stdio\",\"target\":"
	    "\"[\\\"server\\\"]\",\"started_ns\":1000000000,\"ended_ns\":"
	    "%zu,\"exit_status\":0,\"exit_signal\":null,\"end_reason\":"
	    "\"host closed the connection\",\"messages_lost\":0,"
	    "\"store_error\":null,\"imported_from\":null,\"recorder_pid\":1,"
	    "\"mcpreel_version\":\"bench\"}\n", 1000000000 + (n + 1) * 100000);
	cb_line(1, "c2s", CB_INIT);
	cb_line(2, "s2c", CB_INIT_RESULT);
	cb_line(3, "c2s", CB_INITIALIZED);
	for (seq = 4, i = 1; seq + 1 <= n; seq += 2, i++) {
		snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"search_documents\",\"arguments\":{\"query\":\"quarterly "
		    "report section %zu\",\"limit\":20,\"offset\":%zu,"
		    "\"filters\":{\"kind\":\"pdf\",\"owner\":\"team-%zu\"}},"
		    "\"_meta\":{\"progressToken\":\"t%zu\"}}}", i, i, i * 20,
		    i % 17, i);
		cb_line(seq, "c2s", req);
		/* ~1 KiB of text, distinct per answer. */
		k = (size_t)snprintf(text, sizeof text, "Result %zu: ", i);
		while (k < 1000)
			k += (size_t)snprintf(text + k, sizeof text - k,
			    "document-%zu-%zu.pdf page %zu; ", i, k, k % 97);
		snprintf(res, sizeof res, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
		    "\"%s\"}],\"isError\":false}}", i, text);
		cb_line(seq + 1, "s2c", res);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Run argv, time it from start to the answer of an initialize request. */
static int
cb_time(char **argv)
{
	struct rusage	 ru;
	int		 in[2], out[2], status;
	pid_t		 pid;
	char		 buf[65536];
	int64_t		 t0, t1 = 0;
	ssize_t		 n;
	size_t		 got = 0;

	if (pipe(in) == -1 || pipe(out) == -1)
		util_fatal("pipe");
	t0 = util_now_ns();
	if ((pid = fork()) == -1)
		util_fatal("fork");
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	util_watchdog_child(pid);
	util_watchdog(CASSETTE_BENCH_TIMEOUT, "the answer to initialize");
	if (write(in[1], CB_INIT "\n", sizeof CB_INIT) != sizeof CB_INIT)
		util_fatal("write");
	while ((n = read(out[0], buf, sizeof buf)) > 0 || (n == -1 &&
	    errno == EINTR)) {
		if (n <= 0)
			continue;
		got += (size_t)n;
		if (memchr(buf, '\n', (size_t)n) != NULL) {
			t1 = util_now_ns();
			break;
		}
	}
	close(in[1]);
	while (read(out[0], buf, sizeof buf) > 0)
		;
	close(out[0]);
	while (wait4(pid, &status, 0, &ru) == -1)
		if (errno != EINTR)
			util_fatal("wait4");
	alarm(0);
	if (t1 == 0) {
		util_warnx("no answer from %s (%zu bytes)", argv[0], got);
		return 1;
	}
	printf("ready_ms=%.1f rss_kb=%ld status=%d\n",
	    (double)(t1 - t0) / 1e6, ru.ru_maxrss, WIFEXITED(status) ?
	    WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int
main(int argc, char **argv)
{
	util_setprogname(argv[0]);
	if (argc == 3 && strcmp(argv[1], "--jsonl") == 0)
		return cb_jsonl(util_parse_size("N", argv[2]));
	if (argc >= 3 && strcmp(argv[1], "--") == 0)
		return cb_time(argv + 2);
	fprintf(stderr, "usage: cassette_bench --jsonl N | -- CMD [ARGS...]\n");
	return 2;
}
