/* The live server replay and mock talk to: a command, or a URL. */

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "replay.h"
#include "store.h"

/*
 * Open t as the client side of its transport: Streamable HTTP when it has
 * a URL, else its command over stdio (t->code gets the shell's status for
 * a command that cannot start).
 */
struct xport *
cli_target_open(struct event_base *base, const struct xport_cbs *cbs,
    void *arg, void *target, char **cause)
{
	struct cli_target	*t = target;

	if (t->url != NULL)
		return xport_http(base, t->url, t->cacert, t->insecure,
		    t->max_body, cbs, arg, cause);
	return xport_stdio(base, t->argv, t->max_body, cbs, arg, &t->code,
	    cause);
}

/* The server's argv as a JSON array, for sessions.target. */
char *
cli_target_json(char **argv)
{
	json_t	*a = json_array(), *v;
	char	*s, *p;
	int	 i;

	for (i = 0; argv[i] != NULL; i++) {
		if ((v = json_string(argv[i])) == NULL) {
			/* Not UTF-8: keep its shape, lose its odd bytes. */
			s = xstrdup(argv[i]);
			for (p = s; *p != '\0'; p++) {
				if ((unsigned char)*p >= 0x80)
					*p = '?';
			}
			v = json_string(s);
			free(s);
		}
		json_array_append_new(a, v);
	}
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s != NULL ? s : xstrdup("[]");
}

/*
 * What a session recorded by replay or mock stores as its target: the
 * server it ran against (t's command as a JSON array, or its URL), with
 * the built-in redaction rules applied, as record applies them.
 */
char *
cli_target_label(const struct cli_target *t)
{
	struct redact	*rules = redact_new(1);
	char		*s, *red, **shown;
	size_t		 rlen;

	if (t->url != NULL)
		s = redact_url(rules, t->url);
	else {
		shown = redact_argv(rules, t->argv);
		s = cli_target_json(shown);
		redact_argv_free(shown);
	}
	if (redact_buf(rules, s, strlen(s), &red, &rlen) != 0) {
		free(s);
		s = xstrndup(red, rlen);
		free(red);
	}
	redact_free(rules);
	return s;
}

/* Add recorded message r (a message, not an event) to plan p. */
void
cli_plan_add(struct plan *p, const struct timeline_row *r)
{
	plan_add(p, r->m.seq, r->m.dir, r->m.mono_ns, r->m.raw, r->m.len);
	if (r->m.truncated)
		plan_set_truncated(p, r->m.kind, r->m.method, r->m.rpc_id);
}

static int
load_cb(const struct timeline_row *r, void *arg)
{
	if (!r->is_event)
		cli_plan_add(arg, r);
	return 0;
}

/*
 * Load session id's messages into p and build the plan.  The messages of
 * injected faults that did not reach their receiver as sent, or that
 * mcpreel made, are left out (as if absent) unless include_faults, and
 * cmd says how many on stderr.
 */
int
cli_load_plan(struct store *st, int64_t id, int include_faults,
    const char *cmd, struct plan *p, char **cause)
{
	if (!include_faults && cli_faults_note(st, id, cmd, cause) != 0)
		return -1;
	if (query_timeline(st, id, include_faults ? 0 : QUERY_UNFAULTED,
	    load_cb, p, cause) != 0)
		return -1;
	plan_build(p);
	return 0;
}

/*
 * Say once on stderr how many messages of injected faults cmd leaves out
 * of session id (every session if 0), if any.
 */
int
cli_faults_note(struct store *st, int64_t id, const char *cmd, char **cause)
{
	int64_t	n;

	if (faults_left_out(st, id, &n, cause) != 0)
		return -1;
	cli_faults_say(cmd, n);
	return 0;
}

/* Say on stderr that cmd leaves out n messages of injected faults, if any. */
void
cli_faults_say(const char *cmd, int64_t n)
{
	if (n > 0)
		log_info("%s: left out %lld message%s of injected faults that "
		    "did not pass between mcpreel and the server (c2s "
		    "original, s2c injected); --include-faults keeps them",
		    cmd, (long long)n,
		    n == 1 ? "" : "s");
}

/*
 * Whether cmd may listen on addr: a loopback address always, another only
 * with allow_remote (--allow-remote).  Says why not on stderr.
 */
int
cli_listen_check(const char *cmd, const char *addr, int allow_remote)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			*cause = NULL;

	if (net_parse_listen(addr, &ss, &len, &cause) != 0) {
		fprintf(stderr, "mcpreel %s: %s\n", cmd, cause);
		free(cause);
		return -1;
	}
	if (!allow_remote && !net_addr_is_loopback(&ss)) {
		fprintf(stderr, "mcpreel %s: not listening on %s: it is not a "
		    "loopback address, so other machines could use it.  "
		    "Listen on 127.0.0.1, or give --allow-remote to listen "
		    "there anyway\n", cmd, addr);
		return -1;
	}
	return 0;
}
