/*
 * The unified diff `wrap --dry-run` and `unwrap --dry-run` print: lines
 * of context as diff -u, hunks that patch(1) applies.  Bounded: the
 * common head and tail are set aside, and the rest is diffed line by
 * line (Myers' algorithm) only up to FILES_DIFF_MAX_EDITS edits and
 * FILES_DIFF_MAX_WORK comparisons; past them it is printed whole.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

/* Lines of context around each change (as diff -u). */
#define FILES_DIFF_CONTEXT	3
/*
 * Past this many line comparisons (a few hundred milliseconds), the
 * middle is printed whole too, as past FILES_DIFF_MAX_EDITS.
 */
#define FILES_DIFF_MAX_WORK	(50u * 1000 * 1000)

/* One line of a file being diffed. */
struct files_diff_line {
	const char	*p;
	size_t		 len;	/* without its '\n' */
	int		 nl;	/* ends in '\n' */
};

/* Split buf into lines (a new array; *n of them). */
static struct files_diff_line *
files_diff_lines(const char *buf, size_t len, size_t *n)
{
	struct files_diff_line	*v;
	const char		*p = buf, *end = buf + len, *nl;
	size_t			 count = 0, i = 0;

	for (nl = buf; nl < end; nl++)
		count += *nl == '\n';
	v = xcalloc(count + 2, sizeof *v);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		v[i].p = p;
		v[i].len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		v[i].nl = nl != NULL;
		i++;
		p = nl != NULL ? nl + 1 : end;
	}
	*n = i;
	return v;
}

/* Whether two lines are the same bytes (and both end in '\n' or not). */
static int
files_diff_line_eq(const struct files_diff_line *a,
    const struct files_diff_line *b)
{
	return a->len == b->len && a->nl == b->nl &&
	    memcmp(a->p, b->p, a->len) == 0;
}

/* An edit script's step: ' ' kept, '-' deleted, '+' inserted. */
struct files_diff_op {
	char	op;
	size_t	ai, bi;		/* the line in a (' ', '-'), in b ('+') */
};

/*
 * The shortest edit script from a[0..n) to b[0..m) (Myers' greedy
 * algorithm, keeping each round's diagonals to walk back), into ops.
 * Returns the number of ops, or 0 past maxd rounds (too different: the
 * caller prints it whole).
 */
static size_t
files_diff_myers(const struct files_diff_line *a, size_t n,
    const struct files_diff_line *b, size_t m, size_t maxd,
    struct files_diff_op *ops)
{
	long	**vs, *v, *prev, k, x, y, d, D = -1;
	size_t	  nops = 0, i;
	long	  N = (long)n, M = (long)m;
	size_t	  work = 0;

	vs = xcalloc(maxd + 1, sizeof *vs);
	for (d = 0; d <= (long)maxd && D < 0; d++) {
		/* Round d's furthest x on diagonal k is v[k + d]. */
		v = vs[d] = xcalloc(2 * (size_t)d + 1, sizeof *v);
		prev = d > 0 ? vs[d - 1] : NULL;
		for (k = -d; k <= d; k += 2) {
			if (d == 0)
				x = 0;
			else if (k == -d || (k != d &&
			    prev[k - 1 + (d - 1)] < prev[k + 1 + (d - 1)]))
				x = prev[k + 1 + (d - 1)];	/* down */
			else
				x = prev[k - 1 + (d - 1)] + 1;	/* right */
			y = x - k;
			while (x < N && y < M && files_diff_line_eq(&a[x], &b[y]) &&
			    work++ < FILES_DIFF_MAX_WORK) {
				x++;
				y++;
			}
			if (work >= FILES_DIFF_MAX_WORK) {
				d = (long)maxd;		/* give up */
				break;
			}
			v[k + d] = x;
			if (x >= N && y >= M) {
				D = d;
				break;
			}
		}
	}
	if (D >= 0) {
		/* Walk back from (N, M), writing ops from the end. */
		size_t	 at = n + m;
		long	 pk, px, py;

		x = N;
		y = M;
		for (d = D; d > 0; d--) {
			prev = vs[d - 1];
			k = x - y;
			if (k == -d || (k != d &&
			    prev[k - 1 + (d - 1)] < prev[k + 1 + (d - 1)]))
				pk = k + 1;
			else
				pk = k - 1;
			px = prev[pk + (d - 1)];
			py = px - pk;
			while (x > px && y > py) {
				x--;
				y--;
				ops[--at] = (struct files_diff_op){ ' ',
				    (size_t)x, (size_t)y };
			}
			if (pk == k + 1) {	/* down: b's line inserted */
				y--;
				ops[--at] = (struct files_diff_op){ '+',
				    (size_t)x, (size_t)y };
			} else {		/* right: a's line deleted */
				x--;
				ops[--at] = (struct files_diff_op){ '-',
				    (size_t)x, (size_t)y };
			}
		}
		while (x > 0 && y > 0) {
			x--;
			y--;
			ops[--at] = (struct files_diff_op){ ' ', (size_t)x,
			    (size_t)y };
		}
		nops = n + m - at;
		memmove(ops, ops + at, nops * sizeof *ops);
	}
	for (i = 0; i <= maxd; i++)
		free(vs[i]);
	free(vs);
	return nops;
}

/* Print one diff line. */
static void
files_diff_put(FILE *f, char op, const struct files_diff_line *l)
{
	fputc(op, f);
	fwrite(l->p, 1, l->len, f);
	fputc('\n', f);
	if (!l->nl)
		fputs("\\ No newline at end of file\n", f);
}

/*
 * A unified diff of a to b on f, labelled from and to, with three lines
 * of context (nothing when they are the same).  The common head and tail
 * are set aside first; a middle too different for FILES_DIFF_MAX_EDITS is
 * printed as one hunk, all of a's lines then all of b's.
 */
void
files_diff(FILE *f, const char *from, const char *to, const char *a,
    size_t alen, const char *b, size_t blen)
{
	struct files_diff_line	*la, *lb;
	struct files_diff_op		*ops;
	size_t			 na, nb, head = 0, tail = 0, n, nops, i, j;
	size_t			 start, end, as, bs, ac, bc, e, last;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return;
	la = files_diff_lines(a, alen, &na);
	lb = files_diff_lines(b, blen, &nb);
	while (head < na && head < nb && files_diff_line_eq(&la[head], &lb[head]))
		head++;
	while (tail < na - head && tail < nb - head &&
	    files_diff_line_eq(&la[na - 1 - tail], &lb[nb - 1 - tail]))
		tail++;

	/* The whole edit script: head, the middle's, tail. */
	ops = xcalloc(na + nb + 1, sizeof *ops);
	for (i = 0; i < head; i++)
		ops[i] = (struct files_diff_op){ ' ', i, i };
	n = head;
	nops = files_diff_myers(la + head, na - head - tail, lb + head,
	    nb - head - tail, FILES_DIFF_MAX_EDITS, ops + n);
	if (nops == 0 && (na - head - tail) + (nb - head - tail) > 0) {
		for (i = head; i < na - tail; i++)
			ops[n++] = (struct files_diff_op){ '-', i, head };
		for (i = head; i < nb - tail; i++)
			ops[n++] = (struct files_diff_op){ '+', na - tail, i };
	} else {
		for (i = n; i < n + nops; i++) {
			ops[i].ai += head;
			ops[i].bi += head;
		}
		n += nops;
	}
	for (i = 0; i < tail; i++)
		ops[n++] = (struct files_diff_op){ ' ', na - tail + i,
		    nb - tail + i };

	fprintf(f, "--- %s\n+++ %s\n", from, to);
	for (i = 0; i < n; ) {
		if (ops[i].op == ' ') {
			i++;
			continue;
		}
		/* A hunk: from this change, joined to the next ones while
		   fewer than 2 * context kept lines lie between. */
		start = i > FILES_DIFF_CONTEXT ? i - FILES_DIFF_CONTEXT : 0;
		last = i;
		for (j = i; j < n; j++) {
			if (ops[j].op != ' ')
				last = j;
			else if (j - last > 2 * FILES_DIFF_CONTEXT)
				break;
		}
		end = last + 1 + FILES_DIFF_CONTEXT;
		if (end > n)
			end = n;
		as = ops[start].ai;
		bs = ops[start].bi;
		ac = bc = 0;
		for (e = start; e < end; e++) {
			ac += ops[e].op != '+';
			bc += ops[e].op != '-';
		}
		fprintf(f, "@@ -%zu,%zu +%zu,%zu @@\n", ac > 0 ? as + 1 : as,
		    ac, bc > 0 ? bs + 1 : bs, bc);
		for (e = start; e < end; e++) {
			if (ops[e].op == '+')
				files_diff_put(f, '+', &lb[ops[e].bi]);
			else
				files_diff_put(f, ops[e].op, &la[ops[e].ai]);
		}
		i = end;
	}
	free(ops);
	free(la);
	free(lb);
}
