/*
 * A small hash map from byte-string keys (JSON-RPC ids with a direction
 * prefix) to a row id and a method name: how a response finds its request.
 * Open addressing with linear probing and backward-shift deletion, so no
 * tombstones build up in a long session.
 */

#include <sys/random.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define IDMAP_MIN_SLOTS 64

struct idmap_slot {
	char	*key;		/* NULL when the slot is free */
	size_t	 keylen;
	uint64_t hash;
	int64_t	 value;
	char	*text;
};

struct idmap {
	struct idmap_slot	*slots;
	size_t			 nslots;	/* a power of two */
	size_t			 count;
	size_t			 bytes;		/* of keys and texts held */
	uint64_t		 probes;	/* slots looked at, ever */
};

/*
 * The hash key, drawn once per process: the keys come from peers and
 * recordings, so an unkeyed hash would let a hostile one choose ids that
 * all land in one probe run (each lookup then walks every id: quadratic
 * CPU).  SipHash-1-3 keyed with it makes slots unpredictable from outside.
 */
static uint64_t		idmap_key[2];
static pthread_once_t	idmap_keyed = PTHREAD_ONCE_INIT;	/* the writer
							   and live check
							   threads make
							   maps too */

/*
 * Fill the hash key from the kernel's random source, never waiting for
 * it (GRND_NONBLOCK: early in boot its pool may not be ready) and never
 * failing (a sandbox may refuse getrandom): without it, a mix of the
 * clocks, the pid and addresses (ASLR) is used, which a recording cannot
 * predict well enough to aim colliding ids at; said once.
 */
static void
idmap_seed(void)
{
	unsigned char	buf[16] = { 0 };
	size_t		off = 0;
	ssize_t		n = 0;
	struct timespec	rt, mono;
	uint64_t	mix[2];

	while (off < sizeof buf) {
		n = getrandom(buf + off, sizeof buf - off, GRND_NONBLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off < sizeof buf) {
		log_warnx("no random source (getrandom: %s): the id maps' hash "
		    "key is taken from the clocks and the pid",
		    n < 0 ? strerror(errno) : "short read");
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		mix[0] = ((uint64_t)rt.tv_sec << 32) ^ (uint64_t)rt.tv_nsec ^
		    ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&rt;
		mix[1] = ((uint64_t)mono.tv_sec << 32) ^
		    (uint64_t)mono.tv_nsec ^ (uint64_t)(uintptr_t)buf ^
		    (uint64_t)(uintptr_t)idmap_seed;
		for (off = 0; off < sizeof buf; off++)
			buf[off] ^= (unsigned char)(mix[off / 8] >>
			    (8 * (off % 8)));
	}
	memcpy(&idmap_key[0], buf, 8);
	memcpy(&idmap_key[1], buf + 8, 8);
}

#define IDMAP_ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

/* One SipHash round over the state v[4]. */
static inline void
idmap_sipround(uint64_t *v)
{
	v[0] += v[1]; v[1] = IDMAP_ROTL(v[1], 13); v[1] ^= v[0];
	v[0] = IDMAP_ROTL(v[0], 32);
	v[2] += v[3]; v[3] = IDMAP_ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = IDMAP_ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = IDMAP_ROTL(v[1], 17); v[1] ^= v[2];
	v[2] = IDMAP_ROTL(v[2], 32);
}

/* SipHash-1-3 of key under idmap_key (written from the paper). */
static uint64_t
idmap_hash(const void *key, size_t len)
{
	const unsigned char	*p = key;
	uint64_t		 v[4], m, b;
	size_t			 i, tail;

	v[0] = idmap_key[0] ^ 0x736f6d6570736575ULL;
	v[1] = idmap_key[1] ^ 0x646f72616e646f6dULL;
	v[2] = idmap_key[0] ^ 0x6c7967656e657261ULL;
	v[3] = idmap_key[1] ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);	/* host order: hashes never leave
					   the process */
		v[3] ^= m;
		idmap_sipround(v);
		v[0] ^= m;
	}
	b = (uint64_t)len << 56;
	tail = len - i;
	while (tail-- > 0)
		b |= (uint64_t)p[i + tail] << (8 * tail);
	v[3] ^= b;
	idmap_sipround(v);
	v[0] ^= b;
	v[2] ^= 0xff;
	idmap_sipround(v);
	idmap_sipround(v);
	idmap_sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

struct idmap *
idmap_new(void)
{
	struct idmap	*m = xcalloc(1, sizeof *m);

	if (pthread_once(&idmap_keyed, idmap_seed) != 0)
		fatalx("cannot seed the id map's hash");
	m->nslots = IDMAP_MIN_SLOTS;
	m->slots = xcalloc(m->nslots, sizeof *m->slots);
	return m;
}

void
idmap_free(struct idmap *m)
{
	size_t	i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nslots; i++) {
		free(m->slots[i].key);
		free(m->slots[i].text);
	}
	free(m->slots);
	free(m);
}

/* The bytes a slot's text holds, its NUL counted. */
static size_t
idmap_text_len(const char *text)
{
	return (text != NULL) ? strlen(text) + 1 : 0;
}

static void
idmap_insert_slot(struct idmap *m, struct idmap_slot *src)
{
	size_t	mask = m->nslots - 1, i = src->hash & mask;

	while (m->slots[i].key != NULL) {
		i = (i + 1) & mask;
		m->probes++;
	}
	m->slots[i] = *src;
}

static void
idmap_grow(struct idmap *m)
{
	struct idmap_slot	*old = m->slots;
	size_t			 oldn = m->nslots, i;

	m->nslots *= 2;
	m->slots = xcalloc(m->nslots, sizeof *m->slots);
	for (i = 0; i < oldn; i++) {
		if (old[i].key != NULL)
			idmap_insert_slot(m, &old[i]);
	}
	free(old);
}

static struct idmap_slot *
idmap_find(struct idmap *m, const void *key, size_t len, uint64_t h)
{
	size_t	mask = m->nslots - 1, i = h & mask;

	while (m->slots[i].key != NULL) {
		if (m->slots[i].hash == h && m->slots[i].keylen == len &&
		    memcmp(m->slots[i].key, key, len) == 0)
			return &m->slots[i];
		i = (i + 1) & mask;
		m->probes++;
	}
	return NULL;
}

/* Map key to (value, a copy of text); a key already present is replaced. */
void
idmap_put(struct idmap *m, const void *key, size_t len, int64_t value,
    const char *text)
{
	struct idmap_slot	 s, *old;
	uint64_t		 h = idmap_hash(key, len);

	if ((old = idmap_find(m, key, len, h)) != NULL) {
		m->bytes -= idmap_text_len(old->text);
		free(old->text);
		old->value = value;
		old->text = (text != NULL) ? xstrdup(text) : NULL;
		m->bytes += idmap_text_len(old->text);
		return;
	}
	if ((m->count + 1) * 4 > m->nslots * 3)
		idmap_grow(m);
	s.key = xstrndup(key, len);
	s.keylen = len;
	s.hash = h;
	s.value = value;
	s.text = (text != NULL) ? xstrdup(text) : NULL;
	idmap_insert_slot(m, &s);
	m->count++;
	m->bytes += len + idmap_text_len(s.text);
}

/*
 * Remove key, handing back its value and text (the caller frees text).
 * Returns 0 when found, -1 when absent.
 */
int
idmap_take(struct idmap *m, const void *key, size_t len, int64_t *value,
    char **text)
{
	struct idmap_slot	*s;
	size_t			 mask = m->nslots - 1, i, j, home;

	if ((s = idmap_find(m, key, len, idmap_hash(key, len))) == NULL)
		return -1;
	*value = s->value;
	m->bytes -= s->keylen + idmap_text_len(s->text);
	if (text != NULL)
		*text = s->text;
	else
		free(s->text);
	free(s->key);
	memset(s, 0, sizeof *s);
	m->count--;

	/* Shift later members of the probe run back into the hole. */
	i = (size_t)(s - m->slots);
	j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (m->slots[j].key == NULL)
			break;
		home = m->slots[j].hash & mask;
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			memset(&m->slots[j], 0, sizeof m->slots[j]);
			i = j;
		}
	}
	return 0;
}

static int
idmap_value_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Keep only the keep entries with the greatest values (the newest, when
 * values grow with time, as row ids do), at least: entries equal to the
 * cut value all stay.  Returns how many were removed.  The table is
 * rebuilt, O(slots + count log count): call it seldom (when a bound is
 * passed, then keep half of it), so that it costs O(1) per put.
 */
size_t
idmap_keep_newest(struct idmap *m, size_t keep)
{
	struct idmap_slot	*old = m->slots;
	int64_t			*v, cut;
	size_t			 oldn = m->nslots, i, n = 0, removed = 0;

	if (m->count <= keep)
		return 0;
	v = xreallocarray(NULL, m->count, sizeof *v);
	for (i = 0; i < oldn; i++) {
		if (old[i].key != NULL)
			v[n++] = old[i].value;
	}
	qsort(v, n, sizeof *v, idmap_value_cmp);
	cut = (keep == 0) ? INT64_MAX : v[n - keep];
	free(v);

	/* Rebuild at the size the kept entries need (no tombstones). */
	m->nslots = IDMAP_MIN_SLOTS;
	while (keep * 4 > m->nslots * 3)
		m->nslots *= 2;
	m->slots = xcalloc(m->nslots, sizeof *m->slots);
	m->count = 0;
	for (i = 0; i < oldn; i++) {
		if (old[i].key == NULL)
			continue;
		if (old[i].value < cut) {
			m->bytes -= old[i].keylen + idmap_text_len(old[i].text);
			free(old[i].key);
			free(old[i].text);
			removed++;
			continue;
		}
		if ((m->count + 1) * 4 > m->nslots * 3)
			idmap_grow(m);
		idmap_insert_slot(m, &old[i]);
		m->count++;
	}
	free(old);
	return removed;
}

/* Look key up without taking it out: 0 and its value, or -1. */
int
idmap_get(struct idmap *m, const void *key, size_t len, int64_t *value)
{
	struct idmap_slot	*s;

	if ((s = idmap_find(m, key, len, idmap_hash(key, len))) == NULL)
		return -1;
	*value = s->value;
	return 0;
}

size_t
idmap_count(const struct idmap *m)
{
	return m->count;
}

/* The bytes of the keys and texts it holds (not the table's slots). */
size_t
idmap_bytes(const struct idmap *m)
{
	return m->bytes;
}

/* How many slots past their first the map's lookups have looked at: the
   cost of collisions, which a test can bound without timing anything. */
uint64_t
idmap_probes(const struct idmap *m)
{
	return m->probes;
}
