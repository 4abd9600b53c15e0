/*
 * xport_check: a client transport (transport/xport_remote) from the
 * command line, to drive it against real and hostile servers
 * (tests/e2e/xport_sse.test.mjs).
 *
 *	xport_check auto|http|sse URL [-H 'Name: value'] ... < MESSAGES
 *
 * stdin holds one JSON-RPC message a line.  They are sent in order; after
 * a request (unless its line starts with '-', which is not sent) the next
 * waits for an answer (a response or error with its id,
 * as written) or a failure.  After the last, the transport is finished.
 * Each thing the transport reports is one line of JSON on stdout:
 * {"message": TEXT}, {"message": TEXT, "answers": ID} for the answer waited
 * for (ID the request's id text), {"note": TEXT}, {"failed": WHY, "body":
 * TEXT}, {"closed": WHY}.  Exit 0 when the transport closed, 1 on
 * a refused option or header, 2 when nothing happened for 30 s.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "transport.h"

#define CHECK_LINES_MAX		256
#define CHECK_HEADERS_MAX	16
#define CHECK_IDLE_S		30

static struct event_base	*check_base;
static struct xport		*check_x;
static char			*check_lines[CHECK_LINES_MAX];
static size_t			 check_n, check_next;
static int			 check_waiting, check_closed;
static char			*check_wait_id;	/* the id waited for */
static struct event		*check_idle;

/* Print one report line: {key: a[, bkey: b]}. */
static void
check_print2(const char *key, const char *a, size_t alen, const char *bkey,
    const char *b, size_t blen)
{
	json_t	*o = json_object();
	char	*s;

	json_object_set_new(o, key, json_stringn(a, alen));
	if (b != NULL)
		json_object_set_new(o, bkey, json_stringn(b, blen));
	s = json_dumps(o, JSON_COMPACT);
	printf("%s\n", s);
	fflush(stdout);
	free(s);
	json_decref(o);
}

/* Print one report line: {key: a[, "body": b]}. */
static void
check_print(const char *key, const char *a, size_t alen, const char *b,
    size_t blen)
{
	check_print2(key, a, alen, "body", b, blen);
}

/* Push the idle deadline on. */
static void
check_touch(void)
{
	struct timeval	tv = { CHECK_IDLE_S, 0 };

	evtimer_add(check_idle, &tv);
}

/* Send lines until a request (then wait for its answer) or the end. */
static void
check_send_more(void)
{
	struct scan	 sc;
	const char	*m;
	int		 nowait;

	while (!check_waiting && !check_closed) {
		if (check_next == check_n) {
			xport_finish(check_x);
			check_next++;
			return;
		}
		if (check_next > check_n)
			return;
		m = check_lines[check_next++];
		nowait = *m == '-';
		m += nowait;
		scan_message(m, strlen(m), &sc);
		check_waiting = sc.kind == KIND_REQUEST && !nowait;
		free(check_wait_id);
		check_wait_id = check_waiting ? xstrndup(m + sc.id_off,
		    sc.id_len) : NULL;
		xport_send(check_x, m, strlen(m), NULL);
	}
}

static void
check_message_cb(const char *bytes, size_t len, void *arg)
{
	struct scan	sc;

	check_touch();
	scan_message(bytes, len, &sc);
	if (check_waiting && (sc.kind == KIND_RESPONSE ||
	    sc.kind == KIND_ERROR) && sc.has_id &&
	    sc.id_len == strlen(check_wait_id) &&
	    memcmp(bytes + sc.id_off, check_wait_id, sc.id_len) == 0) {
		check_print2("message", bytes, len, "answers", check_wait_id,
		    sc.id_len);
		check_waiting = 0;
		check_send_more();
	} else
		check_print("message", bytes, len, NULL, 0);
}

static void
check_event_cb(const char *type, const char *bytes, size_t len, void *arg)
{
	check_touch();
	check_print(type, bytes, len, NULL, 0);
}

static void
check_failed_cb(const char *bytes, size_t len, const char *why, void *arg)
{
	check_touch();
	check_print("failed", why, strlen(why), bytes, len);
	check_waiting = 0;
	/* Not from inside xport_send: on the next loop pass. */
	event_base_once(check_base, -1, EV_TIMEOUT, (event_callback_fn)
	    check_send_more, NULL, NULL);
}

static void
check_closed_cb(const char *why, void *arg)
{
	check_closed = 1;
	check_print("closed", why, strlen(why), NULL, 0);
	event_base_loopexit(check_base, NULL);
}

static void
check_idle_cb(evutil_socket_t fd, short events, void *arg)
{
	fprintf(stderr, "xport_check: nothing for %d s\n", CHECK_IDLE_S);
	exit(2);
}

int
main(int argc, char **argv)
{
	struct xport_cbs	 cbs = { check_message_cb, check_event_cb,
				    check_closed_cb, check_failed_cb };
	enum xport_remote_kind	 kind;
	const char		*headers[CHECK_HEADERS_MAX];
	char			*cause = NULL, *line = NULL;
	size_t			 nheaders = 0, cap = 0;
	ssize_t			 got;
	int			 i, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: xport_check auto|http|sse URL "
		    "[-H 'Name: value'] ...\n");
		return 1;
	}
	if (strcmp(argv[1], "auto") == 0)
		kind = XPORT_REMOTE_AUTO;
	else if (strcmp(argv[1], "http") == 0)
		kind = XPORT_REMOTE_HTTP;
	else if (strcmp(argv[1], "sse") == 0)
		kind = XPORT_REMOTE_SSE;
	else {
		fprintf(stderr, "xport_check: unknown kind %s\n", argv[1]);
		return 1;
	}
	for (i = 3; i + 1 < argc && strcmp(argv[i], "-H") == 0 &&
	    nheaders < CHECK_HEADERS_MAX; i += 2)
		headers[nheaders++] = argv[i + 1];
	while (check_n < CHECK_LINES_MAX &&
	    (got = getline(&line, &cap, stdin)) != -1) {
		while (got > 0 && (line[got - 1] == '\n' ||
		    line[got - 1] == '\r'))
			line[--got] = '\0';
		if (got > 0)
			check_lines[check_n++] = xstrdup(line);
	}
	free(line);

	log_init(getenv("XPORT_CHECK_DEBUG") != NULL ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_WARN, NULL);
	check_base = event_base_new();
	check_idle = evtimer_new(check_base, check_idle_cb, NULL);
	check_touch();
	check_x = xport_remote(check_base, kind, argv[2], NULL, 0, 0, &cbs,
	    NULL, &cause);
	if (check_x == NULL || xport_set_headers(check_x, headers, nheaders,
	    &cause) != 0) {
		fprintf(stderr, "xport_check: %s\n", cause);
		free(cause);
		rc = 1;
	} else {
		check_send_more();
		event_base_dispatch(check_base);
	}
	xport_free(check_x);
	event_free(check_idle);
	event_base_free(check_base);
	free(check_wait_id);
	for (check_next = 0; check_next < check_n; check_next++)
		free(check_lines[check_next]);
	return rc;
}
