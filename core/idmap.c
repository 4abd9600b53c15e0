/*
 * A small hash map from byte-string keys (JSON-RPC ids with a direction
 * prefix) to a row id and a method name: how a response finds its request.
 * Open addressing with linear probing and backward-shift deletion, so no
 * tombstones build up in a long session.
 */

#include <stdlib.h>
#include <string.h>

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
};

static uint64_t
idmap_hash(const void *key, size_t len)
{
	const unsigned char	*p = key;
	uint64_t		 h = 1469598103934665603ULL;	/* FNV-1a */
	size_t			 i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	/*
	 * Ids differ in their last bytes ("41", "42"): mix the high bits
	 * down, or the slot index (the low bits) clusters under probing.
	 */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

struct idmap *
idmap_new(void)
{
	struct idmap	*m = xcalloc(1, sizeof *m);

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

static void
idmap_insert_slot(struct idmap *m, struct idmap_slot *src)
{
	size_t	mask = m->nslots - 1, i = src->hash & mask;

	while (m->slots[i].key != NULL)
		i = (i + 1) & mask;
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
		free(old->text);
		old->value = value;
		old->text = (text != NULL) ? xstrdup(text) : NULL;
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
