/*
 * Re-recording a cassette keeps its bytes where nothing changed: a line
 * of the new recording equal to a line of the old one but for its times
 * (and the recorder's pid and version) is written as the old line, so an
 * unchanged session re-records to the same file and a changed answer
 * shows in a diff as that line alone.  Lines are matched in order, each
 * new line to the first old line with the same content (seq and reply_to
 * included) not taken yet; old lines are kept by their content's hash,
 * the content made again only to compare.  A new line with no match
 * keeps its own times, moved onto the old file's clock (by the shift of
 * the nearest matched line), so the gaps mock plays stay the recorded
 * ones.  And appending new exchanges to a cassette: their seq and
 * reply_to numbered on from the file's last.  Pure: buffers in, buffers
 * out.
 */

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Members that say when or by what a line was written, not what it is. */
static const char *restamp_volatile[] = {
	"ts_ns", "mono_ns", "started_ns", "ended_ns", "response_mono_ns",
	"recorder_pid", "mcpreel_version", "exported_by", "session"
};

/* The wall-clock and monotonic members a shift moves. */
static const char *restamp_wall[] = { "ts_ns", "started_ns", "ended_ns" };
static const char *restamp_mono[] = { "mono_ns", "response_mono_ns" };

/* The longest pause an appended recording's first line is put after. */
#define RESTAMP_APPEND_GAP_NS	((int64_t)1000000000)

#define NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* One line of a buffer, without its newline. */
struct rline {
	const char	*p;
	size_t		 len;
	uint64_t	 hash;		/* of its content but for times */
	int		 keyed;		/* it has one (a JSON object) */
	int		 taken;		/* old lines: matched already */
	ssize_t		 match;		/* new lines: the old line taken */
};

/* Old lines of one content hash, chained in order. */
struct rslot {
	uint64_t	 hash;
	size_t		 head;		/* SIZE_MAX: an empty slot */
	size_t		 tail;
};

/* How many old lines of one hash a new line looks at (collisions). */
#define RESTAMP_WALK_MAX	64

/* Split buf into lines (the last may lack its newline). */
static struct rline *
restamp_split(const char *buf, size_t len, size_t *n)
{
	struct rline	*v = NULL;
	const char	*p = buf, *end = buf + len, *nl;
	size_t		 alloc = 0;

	*n = 0;
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (*n == alloc) {
			alloc = alloc == 0 ? 64 : alloc * 2;
			v = xreallocarray(v, alloc, sizeof *v);
		}
		v[*n].p = p;
		v[*n].len = (size_t)(nl - p);
		v[*n].hash = 0;
		v[*n].keyed = 0;
		v[*n].taken = 0;
		v[*n].match = -1;
		(*n)++;
		p = nl + 1;
	}
	return v;
}

/*
 * Where the value of the top-level member name of the JSON object in line
 * is: its offset and length (a scalar: up to the next ',' or '}').
 * Returns 0 when found.  Nested members and strings are stepped over.
 */
int
restamp_member(const char *line, size_t len, const char *name, size_t *off,
    size_t *vlen)
{
	size_t	 i = 0, j, nlen = strlen(name);
	int	 depth = 0, want_key = 0;

	while (i < len) {
		switch (line[i]) {
		case '"':
			for (j = i + 1; j < len && line[j] != '"'; j++) {
				if (line[j] == '\\')
					j++;
			}
			if (j >= len)
				return -1;
			if (depth == 1 && want_key) {
				want_key = 0;
				if (j - i - 1 == nlen &&
				    memcmp(line + i + 1, name, nlen) == 0) {
					for (j++; j < len && (line[j] == ' ' ||
					    line[j] == ':'); j++)
						;
					*off = j;
					while (j < len && line[j] != ',' &&
					    line[j] != '}' && line[j] != ' ')
						j++;
					*vlen = j - *off;
					return 0;
				}
			}
			i = j + 1;
			continue;
		case '{':
		case '[':
			depth++;
			want_key = depth == 1 && line[i] == '{';
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			want_key = depth == 1;
			break;
		}
		i++;
	}
	return -1;
}

/* The integer value of a top-level member, or 0 when it has none. */
static int
restamp_int(const char *line, size_t len, const char *name, int64_t *v)
{
	size_t		 off, vlen;
	char		 tmp[32], *end;
	long long	 x;

	if (restamp_member(line, len, name, &off, &vlen) != 0 || vlen == 0 ||
	    vlen >= sizeof tmp)
		return 0;
	memcpy(tmp, line + off, vlen);
	tmp[vlen] = '\0';
	x = strtoll(tmp, &end, 10);
	if (*end != '\0' || end == tmp || x == LLONG_MIN || x == LLONG_MAX)
		return 0;
	*v = x;
	return 1;
}

/*
 * A copy of line (len bytes) with the integer member name increased by
 * delta, when it has one that does not overflow; *line and *len are
 * replaced (the old copy freed if owned).
 */
static void
restamp_add(char **line, size_t *len, int *owned, const char *name,
    int64_t delta)
{
	size_t	 off, vlen, nlen;
	int64_t	 v, nv;
	char	 num[32], *out;

	if (delta == 0 || !restamp_int(*line, *len, name, &v) ||
	    __builtin_add_overflow(v, delta, &nv))
		return;
	restamp_member(*line, *len, name, &off, &vlen);
	nlen = (size_t)snprintf(num, sizeof num, "%lld", (long long)nv);
	out = xmalloc(*len - vlen + nlen + 1);
	memcpy(out, *line, off);
	memcpy(out + off, num, nlen);
	memcpy(out + off + nlen, *line + off + vlen, *len - off - vlen);
	out[*len - vlen + nlen] = '\0';
	if (*owned)
		free(*line);
	*line = out;
	*len = *len - vlen + nlen;
	*owned = 1;
}

/*
 * What a line says but for its times: the JSON without the volatile
 * members, compact, members in their order.  NULL for a line that is not
 * a JSON object (never matched).
 */
static char *
restamp_key(const char *line, size_t len)
{
	json_t	*o;
	char	*s;
	size_t	 i;

	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (o == NULL || !json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	for (i = 0; i < NITEMS(restamp_volatile); i++)
		json_object_del(o, restamp_volatile[i]);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

/*
 * FNV-1a of a line's key: 0 with *keyed clear when it has none; the key
 * in *keep (caller frees) when keep is not NULL.
 */
static uint64_t
restamp_hash(const char *line, size_t len, int *keyed, char **keep)
{
	char		*key;
	const char	*p;
	uint64_t	 h = 0xcbf29ce484222325ULL;

	*keyed = 0;
	if ((key = restamp_key(line, len)) == NULL)
		return 0;
	for (p = key; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	if (keep != NULL)
		*keep = key;
	else
		free(key);
	*keyed = 1;
	return h;
}

/* Whether line a has the key kb (their hashes being equal). */
static int
restamp_same(const struct rline *a, const char *kb)
{
	char	*ka;
	int	 same;

	ka = restamp_key(a->p, a->len);
	same = ka != NULL && strcmp(ka, kb) == 0;
	free(ka);
	return same;
}

/* The slot of hash h in tab (mask + 1 slots): its own, or an empty one. */
static struct rslot *
restamp_slot(struct rslot *tab, size_t mask, uint64_t h)
{
	size_t	i = (size_t)h & mask;

	while (tab[i].head != SIZE_MAX && tab[i].hash != h)
		i = (i + 1) & mask;
	return &tab[i];
}

/* Append len bytes and a newline to out (kept NUL-terminated). */
static void
restamp_put(char **out, size_t *outlen, size_t *alloc, const char *p,
    size_t len)
{
	while (*outlen + len + 2 > *alloc) {
		*alloc = *alloc == 0 ? 4096 : *alloc * 2;
		*out = xreallocarray(*out, *alloc, 1);
	}
	memcpy(*out + *outlen, p, len);
	(*out)[*outlen + len] = '\n';
	*outlen += len + 1;
	(*out)[*outlen] = '\0';
}

/*
 * The shift of matched new line i onto its old line's clock: wall and
 * mono deltas; 0 when it has no such member.
 */
static int
restamp_delta(const struct rline *o, const struct rline *n, const char *name,
    int64_t *delta)
{
	int64_t	ov, nv, d;

	if (!restamp_int(o->p, o->len, name, &ov) ||
	    !restamp_int(n->p, n->len, name, &nv) ||
	    __builtin_sub_overflow(ov, nv, &d))
		return 0;
	*delta = d;
	return 1;
}

/*
 * The cassette newbuf, re-recorded over oldbuf (NULL: none): each line of
 * newbuf equal to a line of oldbuf but for its times becomes that old
 * line; the others keep theirs, shifted.  Returns the result (malloc'd,
 * every line ending in a newline), its length in *outlen.
 */
char *
restamp_stable(const char *oldbuf, size_t oldlen, const char *newbuf,
    size_t newlen, size_t *outlen)
{
	struct rline	*ov, *nv;
	size_t		 on = 0, nn, i, alloc = 0, *next = NULL;
	struct rslot	*tab, *sl;
	size_t		 mask, k, walk;
	char		*out = NULL, *line, *key = NULL;
	size_t		 llen;
	int64_t		*dwall, *dmono, w, m;
	int		*has, owned, hw, hm, have_w = 0, have_m = 0;
	ssize_t		 j;

	*outlen = 0;
	ov = oldbuf != NULL ? restamp_split(oldbuf, oldlen, &on) : NULL;
	nv = restamp_split(newbuf, newlen, &nn);
	if (on > 0)
		next = xreallocarray(NULL, on, sizeof *next);
	/*
	 * Old lines by their content's hash (the content itself is made
	 * again only to compare), each hash's lines chained in order.
	 */
	for (mask = 16; mask < 2 * on; mask *= 2)
		;
	tab = xreallocarray(NULL, mask, sizeof *tab);
	for (i = 0; i < mask; i++)
		tab[i].head = SIZE_MAX;
	mask--;
	for (i = 0; i < on; i++) {
		next[i] = SIZE_MAX;
		ov[i].hash = restamp_hash(ov[i].p, ov[i].len, &ov[i].keyed,
		    NULL);
		if (!ov[i].keyed)
			continue;
		sl = restamp_slot(tab, mask, ov[i].hash);
		if (sl->head == SIZE_MAX) {
			sl->hash = ov[i].hash;
			sl->head = sl->tail = i;
		} else {
			next[sl->tail] = i;
			sl->tail = i;
		}
	}
	/* Each new line takes the first old line of its content left. */
	for (i = 0; i < nn; i++) {
		nv[i].hash = restamp_hash(nv[i].p, nv[i].len, &nv[i].keyed,
		    &key);
		if (!nv[i].keyed)
			continue;
		sl = restamp_slot(tab, mask, nv[i].hash);
		if (sl->head >= on) {	/* none, or all taken */
			free(key);
			continue;
		}
		for (k = sl->head, walk = 0; k != SIZE_MAX && walk <
		    RESTAMP_WALK_MAX; k = next[k]) {
			if (ov[k].taken)
				continue;
			walk++;
			if (restamp_same(&ov[k], key)) {
				ov[k].taken = 1;
				nv[i].match = (ssize_t)k;
				break;
			}
		}
		free(key);
		while (sl->head < on && ov[sl->head].taken)
			sl->head = next[sl->head];
		if (sl->head == SIZE_MAX)
			sl->head = SIZE_MAX - 1;	/* spent, not empty */
	}
	/*
	 * The shifts: each unmatched line takes the nearest matched line's
	 * before it, or else after it.
	 */
	dwall = xcalloc(nn + 1, sizeof *dwall);
	dmono = xcalloc(nn + 1, sizeof *dmono);
	has = xcalloc(nn + 1, sizeof *has);
	w = m = 0;
	for (j = (ssize_t)nn - 1; j >= 0; j--) {
		if (nv[j].match >= 0) {
			if (restamp_delta(&ov[nv[j].match], &nv[j], "ts_ns", &w))
				have_w = 1;
			if (restamp_delta(&ov[nv[j].match], &nv[j], "mono_ns",
			    &m))
				have_m = 1;
		}
		dwall[j] = w;
		dmono[j] = m;
		has[j] = have_w | (have_m << 1);
	}
	w = m = 0;
	hw = hm = 0;
	for (i = 0; i < nn; i++) {
		if (nv[i].match >= 0) {
			if (restamp_delta(&ov[nv[i].match], &nv[i], "ts_ns",
			    &w))
				hw = 1;
			if (restamp_delta(&ov[nv[i].match], &nv[i], "mono_ns",
			    &m))
				hm = 1;
			restamp_put(&out, outlen, &alloc, ov[nv[i].match].p,
			    ov[nv[i].match].len);
			continue;
		}
		line = (char *)nv[i].p;
		llen = nv[i].len;
		owned = 0;
		for (j = 0; j < (ssize_t)NITEMS(restamp_wall); j++)
			restamp_add(&line, &llen, &owned, restamp_wall[j],
			    hw ? w : (has[i] & 1) ? dwall[i] : 0);
		for (j = 0; j < (ssize_t)NITEMS(restamp_mono); j++)
			restamp_add(&line, &llen, &owned, restamp_mono[j],
			    hm ? m : (has[i] & 2) ? dmono[i] : 0);
		restamp_put(&out, outlen, &alloc, line, llen);
		if (owned)
			free(line);
	}
	if (out == NULL)
		out = xcalloc(1, 1);
	free(tab);
	free(ov);
	free(nv);
	free(next);
	free(dwall);
	free(dmono);
	free(has);
	return out;
}

/* The largest top-level "seq" of buf's lines, 0 for none. */
int64_t
restamp_last_seq(const char *buf, size_t len)
{
	struct rline	*v;
	size_t		 n, i;
	int64_t		 seq, last = 0;

	v = restamp_split(buf, len, &n);
	for (i = 0; i < n; i++) {
		if (restamp_int(v[i].p, v[i].len, "seq", &seq) && seq > last)
			last = seq;
	}
	free(v);
	return last;
}

/*
 * The lines of a cassette but its header (the first line), with their seq
 * and reply_to numbered on from base and their times moved by dwall and
 * dmono.  Returns them (malloc'd), their length in *outlen.
 */
static char *
restamp_renumber_shift(const char *buf, size_t len, int64_t base,
    int64_t dwall, int64_t dmono, size_t *outlen)
{
	struct rline	*v;
	size_t		 n, i, alloc = 0, llen;
	char		*out = NULL, *line;
	int		 owned;

	*outlen = 0;
	v = restamp_split(buf, len, &n);
	for (i = 1; i < n; i++) {
		line = (char *)v[i].p;
		llen = v[i].len;
		owned = 0;
		restamp_add(&line, &llen, &owned, "seq", base);
		restamp_add(&line, &llen, &owned, "reply_to", base);
		restamp_add(&line, &llen, &owned, "ts_ns", dwall);
		restamp_add(&line, &llen, &owned, "mono_ns", dmono);
		restamp_add(&line, &llen, &owned, "response_mono_ns", dmono);
		restamp_put(&out, outlen, &alloc, line, llen);
		if (owned)
			free(line);
	}
	free(v);
	if (out == NULL)
		out = xcalloc(1, 1);
	return out;
}

/*
 * The lines of a cassette but its header (the first line), with their seq
 * and reply_to numbered on from base: what is appended to a cassette
 * whose last seq is base.  Returns them (malloc'd), their length in
 * *outlen.
 */
char *
restamp_renumber(const char *buf, size_t len, int64_t base, size_t *outlen)
{
	return restamp_renumber_shift(buf, len, base, 0, 0, outlen);
}

/*
 * The value of member name in the last line of buf that has it (0: none);
 * first: in the first line past the header instead.
 */
static int
restamp_edge(const char *buf, size_t len, const char *name, int first,
    int64_t *v)
{
	struct rline	*l;
	size_t		 n, i;
	int		 found = 0;

	l = restamp_split(buf, len, &n);
	for (i = 0; i < n && !found; i++) {
		if (first)
			found = i > 0 && restamp_int(l[i].p, l[i].len, name, v);
		else
			found = restamp_int(l[n - 1 - i].p, l[n - 1 - i].len,
			    name, v);
	}
	free(l);
	return found;
}

/*
 * What newbuf (a cassette recorded anew) appends to oldbuf: its lines but
 * the header, seq and reply_to numbered on from oldbuf's last seq, and
 * their times moved onto oldbuf's clocks: the first comes after oldbuf's
 * last line by the time the new recording took from its start to its
 * first line (at most RESTAMP_APPEND_GAP_NS), the rest as recorded after
 * it.  Returns them (malloc'd), their length in *outlen.
 */
char *
restamp_append(const char *oldbuf, size_t oldlen, const char *newbuf,
    size_t newlen, size_t *outlen)
{
	int64_t	 start, first, last, gap = 0, dwall = 0, dmono = 0;

	if (restamp_edge(newbuf, newlen, "started_ns", 0, &start) &&
	    restamp_edge(newbuf, newlen, "ts_ns", 1, &first) &&
	    !__builtin_sub_overflow(first, start, &gap))
		gap = gap < 0 ? 0 : gap > RESTAMP_APPEND_GAP_NS ?
		    RESTAMP_APPEND_GAP_NS : gap;
	if (restamp_edge(oldbuf, oldlen, "ts_ns", 0, &last) &&
	    restamp_edge(newbuf, newlen, "ts_ns", 1, &first) &&
	    (__builtin_add_overflow(last, gap, &last) ||
	    __builtin_sub_overflow(last, first, &dwall)))
		dwall = 0;
	if (restamp_edge(oldbuf, oldlen, "mono_ns", 0, &last) &&
	    restamp_edge(newbuf, newlen, "mono_ns", 1, &first) &&
	    (__builtin_add_overflow(last, gap, &last) ||
	    __builtin_sub_overflow(last, first, &dmono)))
		dmono = 0;
	return restamp_renumber_shift(newbuf, newlen, restamp_last_seq(oldbuf,
	    oldlen), dwall, dmono, outlen);
}
