/*
 * fault: fault injection rules (record --fault, mock --fault).  Pure: rules
 * are parsed from text, matched against messages given as bytes, and turned
 * into decisions; no I/O, no globals, no libevent, no SQLite.  Depends on
 * core/ only (jansson allowed).
 *
 * A rule is a selector and an action.  Text form (one --fault):
 *
 *	[SELECTOR=VALUE ...] ACTION [PARAM=VALUE ...]
 *
 * words separated by blanks; a value may be quoted "..." or '...'
 * (backslash escapes \" \' \\ inside; another backslash is kept; a bare
 * value is taken as written, quotes and backslashes included, so
 * value={"a":1} needs no quoting).  The first word that is an action
 * name is the action; words before it are selectors, after it params.
 * The JSON form (--faults FILE) is {"seed": N?, "rules": [OBJ, ...]} where
 * each OBJ has "action" and the same keys as the text form, with JSON
 * values (numbers as numbers, "data"/"value" as any JSON).  One table of
 * keys serves both forms.
 *
 * Selectors (all optional; a rule with none selects every message its
 * action can apply to):
 *	dir=c2s|s2c		the message's direction
 *	kind=request|response|error|notification
 *	method=GLOB		a glob (* ? [...] and \ as in fnmatch(3), "\"
 *				quoting in classes too, but matched in
 *				O(pattern * text); a "[" with no "]" is
 *				itself and what follows it a glob again, where
 *				glibc differs); a response's
 *				or error's method is its request's
 *	tool=GLOB		tools/call's params.name (a response: its
 *				request's)
 *	prompt=GLOB		prompts/get's params.name
 *	resource=GLOB		params.uri of resources/read, subscribe,
 *				unsubscribe
 *	first=N | nth=N | after=N	of the messages the selectors above
 *				match, counted per rule from 1: 1..N, only N,
 *				N+1 on
 *	p=P			probability per message: 0.1 or 10%; drawn
 *				from the set's seeded PRNG for every message
 *				the other selectors match, so the same traffic
 *				and seed give the same faults
 *
 * Actions and their params:
 *	delay ms=N [jitter=N]	hold the message N ms (+- uniform jitter)
 *	error [code=N] [message=S] [data=JSON]
 *				a request (c2s) is answered with a JSON-RPC
 *				error with its id; the server never sees it.
 *				Defaults: -32603 "Internal error (injected by
 *				mcpreel)"
 *	tool-error [text=S]	a tools/call request is answered with a
 *				result {content:[{type:text,text:S}],
 *				isError:true}; the server never sees it
 *	drop			the message is swallowed
 *	timeout ms=N		a request (c2s): it is forwarded, its answer
 *				held until N ms after the request, then
 *				dropped (if it came later: dropped).  The
 *				answer's own decision names the same rule
 *				with action FAULT_TIMEOUT and delay_ms N.
 *				A request whose id is too long to remember
 *				(FAULT_KEEP_MAX) is not selected; one
 *				forgotten (FAULT_PENDING_MAX) gets its
 *				answer as is, with no hit
 *	corrupt [mode=invalid-json|truncate|stray]
 *				the message is replaced by invalid JSON (the
 *				default), its first half, or is preceded by
 *				a line of stray non-JSON bytes
 *	close [mode=pipes|kill|reset|end-stream]
 *				when the message is selected, it is not
 *				forwarded and the transport is closed: stdio
 *				pipes (default) or SIGKILL of the server;
 *				HTTP: reset the client's connection
 *				(default) or end the SSE stream
 *	http-status status=401|404|429|500|503 [retry-after=N]
 *				[www-authenticate=S]  (HTTP only) a request
 *				is answered with that status and no
 *				JSON-RPC body; the server never sees it
 *	mutate set=JSONPATH value=JSON | remove=JSONPATH
 *				the message is forwarded changed: every place
 *				the path (core/jpath pattern) matches is set
 *				(an existing place, or a new key of an object)
 *				or removed (no step into a string's JSON;
 *				at most 48 levels deep and 2 ".." steps).
 *				A path that matches no place: the rule does
 *				not apply to that message
 *
 * Each action has the directions and kinds it can apply to (a table:
 * error/tool-error/http-status/timeout: c2s requests; corrupt: any, but
 * the default dir is s2c; ...).  A rule whose selectors cannot meet its
 * action (dir=s2c ... error) is a parse error that says so.
 * The first rule (in the order given) whose selectors match a message
 * applies; later rules do not see it (their counters do not count it).
 */
#ifndef MCPREEL_FAULT_H
#define MCPREEL_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

enum fault_action {
	FAULT_DELAY,
	FAULT_ERROR,
	FAULT_TOOL_ERROR,
	FAULT_DROP,
	FAULT_TIMEOUT,
	FAULT_CORRUPT,
	FAULT_CLOSE,
	FAULT_HTTP_STATUS,
	FAULT_MUTATE,
	FAULT_ACTION_MAX
};

enum fault_corrupt {
	FAULT_CORRUPT_INVALID_JSON,	/* the message made invalid JSON */
	FAULT_CORRUPT_TRUNCATE,		/* its first half */
	FAULT_CORRUPT_STRAY,		/* a stray line sent before it */
	FAULT_CORRUPT_MAX
};

enum fault_close {
	FAULT_CLOSE_PIPES,	/* stdio: close both of the server's pipes */
	FAULT_CLOSE_KILL,	/* stdio: SIGKILL the server */
	FAULT_CLOSE_RESET,	/* HTTP: reset the client's connection */
	FAULT_CLOSE_END_STREAM,	/* HTTP: end the SSE stream, cleanly */
	FAULT_CLOSE_MAX
};

/* Limits on what a rule set may hold (hostile --faults files). */
#define FAULT_RULES_MAX		256		/* rules in a set */
#define FAULT_RULE_TEXT_MAX	(64 * 1024)	/* one rule's text */
#define FAULT_FILE_MAX		(4 * 1024 * 1024) /* a --faults file */
#define FAULT_DELAY_MAX_MS	(24 * 3600 * 1000) /* delay, timeout */
/*
 * Requests remembered per set for matching responses by id: each keeps
 * at most about 2 KiB (its id twice, method and one name, all bounded),
 * so a set's remembered requests hold at most about 9 MiB.
 */
#define FAULT_PENDING_MAX	4096
/*
 * Messages that are not JSON-RPC (invalid, or a batch) are selected by no
 * rule.  Request ids and methods longer than 256 bytes and names longer
 * than 1024 are not kept (fault_int.h, FAULT_KEEP_MAX, FAULT_NAME_MAX).
 */

struct fault_set;

/*
 * A decision for one message.  Every pointer is owned by the hit and
 * freed by fault_hit_clear().
 */
struct fault_hit {
	int			 rule;		/* 1-based index in the set */
	const char		*rule_text;	/* the rule, canonical text
						   form (owned by the set) */
	enum fault_action	 action;
	int64_t			 delay_ms;	/* delay (jitter applied),
						   timeout */
	enum fault_close	 close;
	enum fault_corrupt	 corrupt;	/* corrupt: which mode */
	int			 status;	/* http-status */
	char			*retry_after;	/* header value, or NULL */
	char			*www_authenticate; /* or NULL */
	/*
	 * error, tool-error: the answer to send back to the sender (a whole
	 * JSON-RPC response, carrying the request's id as written).
	 * corrupt: the bytes to forward instead of the message (for mode
	 * stray: the stray line, to be sent before the message, which then
	 * goes on unchanged).  mutate: the changed message.
	 * No trailing newline; NULL for other actions.
	 */
	char			*bytes;
	size_t			 len;
	char			*detail;	/* what was done, in words, for
						   the record and logs */
};

/* A new empty set; seed is --seed (the same seed: the same draws). */
struct fault_set *fault_set_new(uint64_t);
void		 fault_set_free(struct fault_set *);
/* Add one rule from its text form; -1 with *cause on a bad rule. */
int		 fault_set_add_text(struct fault_set *, const char *, char **);
/*
 * Add the rules of a --faults file's contents (name for messages);
 * *seed_out is set to its "seed" when it has one (has_seed 1); a refused
 * file leaves it alone.
 */
int		 fault_set_add_json(struct fault_set *, const char *,
		     const char *, size_t, uint64_t *, int *, char **);
size_t		 fault_set_count(const struct fault_set *);
/* -1 with *cause when a rule's action cannot apply over this transport
   (http-status or close mode=reset over stdio, mode=pipes over HTTP). */
int		 fault_set_check_transport(const struct fault_set *, int,
		     char **);
/*
 * SIGHUP: dst takes src's rules (their counters from 0) and keeps its own
 * remembered requests and PRNG state; src is freed.
 */
void		 fault_set_take_rules(struct fault_set *, struct fault_set *);
const char	*fault_set_rule_text(const struct fault_set *, size_t);
/*
 * Decide for one complete message (its bytes as forwarded, no framing):
 * 1 and *hit filled when a rule applies, 0 when the message goes on
 * as is.  Requests are remembered (bounded by FAULT_PENDING_MAX, the
 * oldest forgotten) so that a response is matched by its request's
 * method, tool, prompt and resource.  transport_http: 1 over HTTP (so
 * http-status and reset/end-stream apply), 0 over stdio.
 */
int		 fault_decide(struct fault_set *, enum dir, const char *,
		     size_t, int, struct fault_hit *);
void		 fault_hit_clear(struct fault_hit *);
const char	*fault_action_name(enum fault_action);
/* The usage text of rules, for --help: one line per action/selector. */
const char	*fault_usage(void);

#endif
