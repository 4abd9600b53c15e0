/*
 * What mock --fault says and records of each fault: one line on stderr
 * (the user asked for the fault, so at the default level), and when the
 * mock records (--on-miss forward) a faults row and the messages it
 * touched, each in its role.  It remembers the last client requests, to
 * name a response by its request's method, and the requests faults held,
 * to say so when the client cancels one.
 */

#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "replay.h"
#include "store.h"

/*
 * Client requests remembered, and faulted requests: enough for the ones
 * in flight of any client a mock serves.
 */
#define MFNOTE_IDS_MAX		1024
/*
 * An id or method longer than this is not remembered, as fault/ keeps
 * none longer (FAULT_KEEP_MAX): what is remembered then holds at most
 * MFNOTE_IDS_MAX * 2 * MFNOTE_KEEP_MAX bytes (512 KiB) for the requests
 * and MFNOTE_IDS_MAX * MFNOTE_KEEP_MAX (256 KiB) for the faulted ones,
 * whatever the client sends.
 */
#define MFNOTE_KEEP_MAX		256
/* A method or id longer than this is cut in the log line. */
#define MFNOTE_LOG_FIELD	128

/* A client request's id and method. */
struct mfreq {
	json_t			*id;
	char			*method;
};

struct mfnote {
	struct writer		*w;		/* NULL: the mock records not */
	struct wsession		*ws;
	int64_t			 nfaults;	/* numbered here without w */
	json_t			*faulted;	/* [[id, n], ...], oldest
						   first */
	struct mfreq		*reqs;		/* the last client requests, */
	size_t			 reqs_next;	/* a ring of MFNOTE_IDS_MAX */
};

/* What to say and record of faults, into w's session ws (w NULL: none). */
struct mfnote *
mfnote_new(struct writer *w, struct wsession *ws)
{
	struct mfnote	*nt = xcalloc(1, sizeof *nt);

	nt->w = w;
	nt->ws = ws;
	nt->faulted = json_array();
	nt->reqs = xcalloc(MFNOTE_IDS_MAX, sizeof *nt->reqs);
	return nt;
}

/* Free what mfnote_new made. */
void
mfnote_free(struct mfnote *nt)
{
	size_t	i;

	if (nt == NULL)
		return;
	for (i = 0; i < MFNOTE_IDS_MAX; i++) {
		json_decref(nt->reqs[i].id);
		free(nt->reqs[i].method);
	}
	free(nt->reqs);
	json_decref(nt->faulted);
	free(nt);
}

/*
 * The fault n that held request id, or 0; *deadline_ns (if not NULL) its
 * answer's deadline under a timeout rule, else 0.
 */
int64_t
mfnote_faulted_n(const struct mfnote *nt, const json_t *id,
    int64_t *deadline_ns)
{
	json_t	*t;
	size_t	 i;
	int64_t	 n = 0, deadline = 0;

	json_array_foreach(nt->faulted, i, t) {
		if (!json_equal(json_array_get(t, 0), id))
			continue;
		n = json_integer_value(json_array_get(t, 1));
		deadline = json_integer_value(json_array_get(t, 2));
	}
	if (deadline_ns != NULL)
		*deadline_ns = deadline;
	return n;
}

/* The id of a request (its JSON), or NULL (none, or too long to keep). */
json_t *
mfnote_id(const char *bytes, size_t len)
{
	struct scan	 sc;

	scan_message(bytes, len, &sc);
	if (!sc.has_id || sc.id_len > MFNOTE_KEEP_MAX)
		return NULL;
	return json_loadb(bytes + sc.id_off, sc.id_len, JSON_DECODE_ANY, NULL);
}

/* Remember a client request's method by its id (the last so many). */
void
mfnote_request(struct mfnote *nt, const char *bytes, size_t len)
{
	struct mfreq	*r;
	struct scan	 sc;

	scan_message(bytes, len, &sc);
	if (sc.kind != KIND_REQUEST || !sc.has_method || sc.id_len >
	    MFNOTE_KEEP_MAX || sc.method_len > MFNOTE_KEEP_MAX)
		return;
	r = &nt->reqs[nt->reqs_next++ % MFNOTE_IDS_MAX];
	json_decref(r->id);
	free(r->method);
	r->id = json_loadb(bytes + sc.id_off, sc.id_len, JSON_DECODE_ANY, NULL);
	r->method = xstrndup(bytes + sc.method_off, sc.method_len);
}

/* The method of the client request with id (its JSON text), or NULL. */
static const char *
mfnote_method(const struct mfnote *nt, const char *idtext)
{
	const struct mfreq	*r;
	json_t			*id;
	const char		*method = NULL;
	size_t			 i, n;

	if (idtext == NULL || (id = json_loads(idtext, JSON_DECODE_ANY,
	    NULL)) == NULL)
		return NULL;
	/* Newest first: over HTTP clients may reuse an id. */
	n = nt->reqs_next < MFNOTE_IDS_MAX ? nt->reqs_next :
	    MFNOTE_IDS_MAX;
	for (i = 1; i <= n && method == NULL; i++) {
		r = &nt->reqs[(nt->reqs_next - i) % MFNOTE_IDS_MAX];
		if (r->id != NULL && json_equal(r->id, id))
			method = r->method;
	}
	json_decref(id);
	return method;
}

/*
 * Remember that request id was faulted by fault n (for cancellations), and
 * under a timeout rule its answer's deadline (else 0).
 */
void
mfnote_faulted(struct mfnote *nt, json_t *id, int64_t n,
    int64_t deadline_ns)
{
	if (id == NULL)
		return;
	if (json_array_size(nt->faulted) >= MFNOTE_IDS_MAX)
		json_array_remove(nt->faulted, 0);
	json_array_append_new(nt->faulted, json_pack("[O, I, I]", id,
	    (json_int_t)n, (json_int_t)deadline_ns));
}

/* Record one message of fault n in its role (when the mock records). */
void
mfnote_record(struct mfnote *nt, enum dir d, const char *bytes, size_t len,
    int64_t n, int role)
{
	struct msg	*m;

	if (nt->w == NULL || bytes == NULL)
		return;
	m = msg_new(d, bytes, len);
	m->fault = n;
	m->fault_role = role;
	writer_message(nt->w, nt->ws, NULL, m);
}

/*
 * Record an s2c message of fault n in its role: as the fallback sent it
 * (fb, its id ours) when it came from the fallback, else as the mock made
 * it.
 */
void
mfnote_record_fb(struct mfnote *nt, const char *bytes, size_t len,
    const char *fb, size_t fblen, int64_t n, int role)
{
	if (fb != NULL)
		mfnote_record(nt, DIR_S2C, fb, fblen, n, role);
	else
		mfnote_record(nt, DIR_S2C, bytes, len, n, role);
}

/*
 * Record the s2c copy fault n made (bytes) in place of a message; one of
 * the fallback's (fb) keeps the fallback's id, as the session's other
 * messages do, when the copy is a JSON object with an id.
 */
void
mfnote_record_injected(struct mfnote *nt, const char *bytes, size_t len,
    const char *fb, size_t fblen, int64_t n)
{
	json_t	*copy, *id;
	char	*s;

	if (fb == NULL || bytes == NULL || (id = mfnote_id(fb, fblen)) ==
	    NULL) {
		mfnote_record(nt, DIR_S2C, bytes, len, n, FAULT_ROLE_INJECTED);
		return;
	}
	s = NULL;
	copy = json_loadb(bytes, len, 0, NULL);
	if (json_is_object(copy) && json_object_get(copy, "id") != NULL &&
	    json_object_set(copy, "id", id) == 0)
		s = json_dumps(copy, JSON_COMPACT);
	if (s != NULL)
		mfnote_record(nt, DIR_S2C, s, strlen(s), n,
		    FAULT_ROLE_INJECTED);
	else
		mfnote_record(nt, DIR_S2C, bytes, len, n, FAULT_ROLE_INJECTED);
	free(s);
	json_decref(copy);
	json_decref(id);
}

/* Blank s's control bytes (a rule's CR LF), for one log line; s or NULL. */
static char *
mfnote_blank(char *s)
{
	char	*p;

	for (p = s; p != NULL && *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	}
	return s;
}

/* A copy of s for one log line. */
static char *
mfnote_oneline(const char *s)
{
	return mfnote_blank(xstrdup(s != NULL ? s : ""));
}

/*
 * A rule applied to a message: number the fault, say it in one line and
 * write its faults row.  Returns its number.
 */
int64_t
mfnote_fault(struct mfnote *nt, const struct fault_hit *hit, enum dir d,
    const char *bytes, size_t len)
{
	struct wfault	 wf;
	struct scan	 sc;
	char		*method = NULL, *id = NULL, *rule, *detail;
	int64_t		 n;

	scan_message(bytes, len, &sc);
	if (sc.has_id)
		id = scan_id_dup(bytes, &sc);
	if (sc.has_method)
		method = xstrndup(bytes + sc.method_off, sc.method_len);
	else if ((sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) &&
	    d == DIR_S2C && mfnote_method(nt, id) != NULL)
		method = xstrdup(mfnote_method(nt, id));
	mfnote_blank(method);
	mfnote_blank(id);
	n = nt->w != NULL ? writer_session_next_fault(nt->ws) : ++nt->nfaults;
	rule = mfnote_oneline(hit->rule_text);
	detail = mfnote_oneline(hit->detail != NULL ? hit->detail :
	    fault_action_name(hit->action));
	log_warnx("mock: fault #%lld, rule %d `%s`: %s %.*s%s%.*s: %s",
	    (long long)n, hit->rule, rule, dir_name(d), MFNOTE_LOG_FIELD,
	    method != NULL ? method : kind_name(sc.kind), id != NULL ? " id " :
	    "", MFNOTE_LOG_FIELD, id != NULL ? id : "", detail);
	free(rule);
	free(detail);
	if (nt->w != NULL) {
		memset(&wf, 0, sizeof wf);
		wf.n = n;
		wf.ts_ns = clock_wall_ns();
		wf.mono_ns = clock_mono_ns();
		wf.rule_index = hit->rule;
		wf.rule = hit->rule_text;
		wf.action = fault_action_name(hit->action);
		wf.has_dir = 1;
		wf.dir = d;
		wf.method = method;
		wf.rpc_id = id;
		wf.detail = hit->detail;
		writer_fault(nt->w, nt->ws, &wf);
	}
	free(method);
	free(id);
	return n;
}

/* Whether bytes is a notifications/cancelled. */
int
mfnote_is_cancel(const char *bytes, size_t len)
{
	static const char	 m[] = "notifications/cancelled";
	struct scan		 sc;

	scan_message(bytes, len, &sc);
	return sc.kind == KIND_NOTIFICATION && sc.has_method &&
	    sc.method_len == sizeof m - 1 && memcmp(bytes + sc.method_off, m,
	    sizeof m - 1) == 0;
}

