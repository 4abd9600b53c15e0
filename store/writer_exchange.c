/*
 * An HTTP exchange's rows as queue items: its request head, its response
 * head, its trailers and its end, written with its messages in queue
 * order (the writer thread fills the exchanges row, rows.c).
 */

#include <stdlib.h>

#include "store.h"
#include "store_int.h"

/* Begin recording an HTTP exchange of session s (its request side). */
struct wexchange *
writer_exchange_begin(struct writer *w, struct wsession *s,
    const struct wexchange_info *info)
{
	struct item	*it = xcalloc(1, sizeof *it);
	struct wexchange *x = xcalloc(1, sizeof *x);

	it->type = ITEM_EXCHANGE_BEGIN;
	it->session = s;
	it->x = x;
	it->info = *info;
	it->info.method = writer_strdup(info->method);
	it->info.path = writer_strdup(info->path);
	it->info.headers = writer_strdup(info->headers);
	writer_enqueue(w, it, sizeof *it);
	return x;
}

/* The response head of an exchange arrived: status and headers. */
void
writer_exchange_response(struct writer *w, struct wexchange *x, int status,
    const struct wexchange_info *info)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_RESPONSE;
	it->x = x;
	it->exit_status = status;
	it->info = *info;
	it->info.method = it->info.path = NULL;
	it->info.headers = writer_strdup(info->headers);
	writer_enqueue(w, it, sizeof *it);
}

/*
 * The trailer fields of an exchange's request and response (JSON arrays
 * of [name, value], or NULL for none); before writer_exchange_end().
 */
void
writer_exchange_trailers(struct writer *w, struct wexchange *x,
    const char *request, const char *response)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_TRAILERS;
	it->x = x;
	it->info.path = writer_strdup(request);
	it->info.headers = writer_strdup(response);
	writer_enqueue(w, it, sizeof *it);
}

/*
 * An exchange ended; outcome says how, body is a response body kept for
 * people (an error page), or NULL.  x is the writer's from here on.
 */
void
writer_exchange_end(struct writer *w, struct wexchange *x,
    const char *outcome, const void *body, size_t len)
{
	writer_exchange_end_at(w, x, clock_wall_ns(), outcome, body, len);
}

/*
 * writer_exchange_end() at a given time (ns since the epoch), or with no
 * end time when ended_ns is WRITER_NO_TIME: for an imported exchange.
 */
void
writer_exchange_end_at(struct writer *w, struct wexchange *x,
    int64_t ended_ns, const char *outcome, const void *body, size_t len)
{
	struct item	*it = xcalloc(1, sizeof *it);

	it->type = ITEM_EXCHANGE_END;
	it->x = x;
	it->info.ts_ns = ended_ns;
	it->reason = writer_strdup(outcome);
	if (body != NULL)
		it->msg = msg_new(DIR_S2C, body, len);
	writer_enqueue(w, it, sizeof *it + len);
}
