/* What every unit test file shares. */
#ifndef MCPREEL_UNIT_H
#define MCPREEL_UNIT_H

/*
 * The timeout every test declares: long enough for the slowest under the
 * sanitizers.  Criterion's sandbox mishandles tests with different
 * timeouts running at once (see unit.c), so unit.c gives every test the
 * longest timeout any declares, and this is its floor.
 */
#define UNIT_TIMEOUT	120

#endif
