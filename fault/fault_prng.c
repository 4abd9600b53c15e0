/*
 * The rule set's pseudo-random draws: SplitMix64 (Steele, Lea and Flood,
 * 2014), small, fast and fully determined by its seed, so that --seed N
 * repeats a run's probability draws and jitters exactly.  Not for secrets.
 */

#include <stdint.h>

#include "fault_int.h"

/* Start the generator from a seed (any value, 0 included). */
void
fault_prng_seed(struct fault_prng *g, uint64_t seed)
{
	g->state = seed;
}

/* The next 64 random bits. */
uint64_t
fault_prng_next(struct fault_prng *g)
{
	uint64_t	z;

	z = (g->state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform draw in [0, 1) with 53 random bits. */
double
fault_prng_unit(struct fault_prng *g)
{
	return (double)(fault_prng_next(g) >> 11) * 0x1.0p-53;
}

/*
 * A uniform draw in [lo, hi] (lo <= hi); the modulo bias is below 2^-30
 * for the spans rules use (delays in ms), which is fine for jitter.
 */
int64_t
fault_prng_range(struct fault_prng *g, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t)hi - (uint64_t)lo + 1;

	if (span == 0)
		return (int64_t)fault_prng_next(g);
	return (int64_t)((uint64_t)lo + fault_prng_next(g) % span);
}
