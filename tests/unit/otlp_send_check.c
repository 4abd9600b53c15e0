/*
 * otlp_send_check: the OTLP exporter (formats/otlp_export.c) from the
 * command line, to watch it against a test collector.
 *
 *	otlp_send_check [-bjp] [-c] [-d STOP_MS] [-t TIMEOUT_MS]
 *	    [-H 'Name: value'] ... URL|env
 *
 * stdin holds one line per event:
 *	c2s JSON	a message the client sent (raw JSON-RPC)
 *	s2c JSON	a message the server sent
 *	sleep MS	wait MS milliseconds
 *	session		end the session and begin another
 * -b block (export --otlp), -j http/json, -p payloads, -c the client
 * side, -d otlp_stop's deadline (default 5000), -t the export timeout.
 * At the end one line of JSON on stdout: {"sent", "dropped", "sessions":
 * [dropped per session], "max_message_us" (the longest otlp_message
 * call; "p99_message_us" the 99th percentile: on a loaded machine
 * the longest is a preemption), "stop_ms" (how long otlp_stop took)}.
 * Exit 1 when the configuration is refused.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "formats.h"

#define CHECK_SESSIONS_MAX	64

/* Sleep ms milliseconds. */
static void
check_sleep(long ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* For qsort: int64_t in ascending order. */
static int
check_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* A session of the exporter, numbered n. */
static struct otlp_sess *
check_session(struct otlp *o, int n)
{
	struct otlp_sess_info	si;
	char			target[32];

	memset(&si, 0, sizeof si);
	snprintf(target, sizeof target, "otlp_send_check %d", n);
	si.transport = "stdio";
	si.started_ns = clock_wall_ns();
	si.target = target;
	return otlp_session(o, &si);
}

/* Export the events of stdin with the configuration of argv. */
int
main(int argc, char **argv)
{
	struct otlp_config	 c;
	struct otlp		*o;
	struct otlp_sess	*sess[CHECK_SESSIONS_MAX];
	struct msg		*m;
	char			*line = NULL, *cause = NULL, *raw;
	char			**hdrs = NULL;
	size_t			 cap = 0, nh = 0, i;
	ssize_t			 n;
	int			 ch, block = 0, json = 0, payloads = 0;
	int			 client = 0, stop_ms = 5000, timeout_ms = 0;
	int			 ns = 0;
	int64_t			 t0, dt, max_us = 0, *us = NULL, p99 = 0;
	size_t			 nus = 0, usecap = 0;
	uint64_t		 sent, dropped;
	json_t			*out, *arr;

	log_init(LOG_LEVEL_WARN, NULL);
	while ((ch = getopt(argc, argv, "bjpcd:t:H:")) != -1) {
		switch (ch) {
		case 'b': block = 1; break;
		case 'j': json = 1; break;
		case 'p': payloads = 1; break;
		case 'c': client = 1; break;
		case 'd': stop_ms = atoi(optarg); break;
		case 't': timeout_ms = atoi(optarg); break;
		case 'H':
			hdrs = reallocarray(hdrs, nh + 1, sizeof *hdrs);
			hdrs[nh++] = optarg;
			break;
		default:
			fprintf(stderr, "usage: otlp_send_check [-bjpc] "
			    "[-d ms] [-t ms] [-H 'Name: value'] URL|env\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "otlp_send_check: one URL (or env)\n");
		return 2;
	}
	if (otlp_config_env(&c, argv[optind], &cause) != 0) {
		fprintf(stderr, "otlp_send_check: %s\n", cause);
		free(cause);
		return 1;
	}
	for (i = 0; i < nh; i++)
		if (otlp_config_header(&c, hdrs[i], &cause) != 0) {
			fprintf(stderr, "otlp_send_check: %s\n", cause);
			return 1;
		}
	free(hdrs);
	c.block = block;
	c.payloads = payloads;
	if (json)
		c.protocol = OTLP_HTTP_JSON;
	if (client)
		c.side = OTLP_SIDE_CLIENT;
	if (timeout_ms > 0)
		c.timeout_ms = timeout_ms;
	if ((o = otlp_start(&c, &cause)) == NULL) {
		fprintf(stderr, "otlp_send_check: %s\n", cause);
		free(cause);
		otlp_config_clear(&c);
		return 1;
	}
	otlp_config_clear(&c);
	sess[ns] = check_session(o, ns);
	ns++;
	while ((n = getline(&line, &cap, stdin)) != -1) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strncmp(line, "sleep ", 6) == 0) {
			check_sleep(atol(line + 6));
			continue;
		}
		if (strcmp(line, "session") == 0) {
			if (ns == CHECK_SESSIONS_MAX) {
				fprintf(stderr, "otlp_send_check: more than %d "
				    "sessions\n", CHECK_SESSIONS_MAX);
				exit(1);
			}
			otlp_session_end(o, sess[ns - 1], clock_wall_ns());
			sess[ns] = check_session(o, ns);
			ns++;
			continue;
		}
		if (strncmp(line, "c2s ", 4) != 0 &&
		    strncmp(line, "s2c ", 4) != 0)
			continue;
		raw = line + 4;
		m = msg_new(line[0] == 'c' ? DIR_C2S : DIR_S2C, raw,
		    strlen(raw));
		m->ts_ns = clock_wall_ns();
		t0 = clock_mono_ns();
		otlp_message(o, sess[ns - 1], m);
		dt = (clock_mono_ns() - t0) / 1000;
		if (dt > max_us)
			max_us = dt;
		if (nus == usecap) {
			usecap = usecap == 0 ? 1024 : usecap * 2;
			us = reallocarray(us, usecap, sizeof *us);
		}
		us[nus++] = dt;
		msg_free(m);
	}
	free(line);
	if (nus > 0) {
		qsort(us, nus, sizeof *us, check_cmp);
		p99 = us[nus * 99 / 100];
	}
	free(us);
	otlp_session_end(o, sess[ns - 1], clock_wall_ns());
	t0 = clock_mono_ns();
	otlp_stop(o, stop_ms);
	dt = (clock_mono_ns() - t0) / 1000000;
	otlp_totals(o, &sent, &dropped);
	arr = json_array();
	for (i = 0; i < (size_t)ns; i++)
		json_array_append_new(arr, json_integer(
		    (json_int_t)otlp_session_dropped(sess[i])));
	out = json_pack("{s:I, s:I, s:o, s:I, s:I, s:I}", "sent",
	    (json_int_t)sent, "dropped", (json_int_t)dropped, "sessions", arr,
	    "max_message_us", (json_int_t)max_us, "p99_message_us",
	    (json_int_t)p99, "stop_ms", (json_int_t)dt);
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	otlp_free(o);
	log_close();
	return 0;
}
