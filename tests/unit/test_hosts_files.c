/*
 * hosts/files.c and files_diff.c: the table's paths expanded, the safe
 * write (a file changed meanwhile refused, the mode kept, a symlink's
 * target written), the state's ledger written and read back (text that
 * is not UTF-8 too), merging and dropping changes, and the diff's exact
 * output.  Each test runs in its own process (criterion), so setenv()
 * stays in it.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "hosts.h"
#include "unit.h"

static char	hf_dir[64];

static void
hf_setup(void)
{
	snprintf(hf_dir, sizeof hf_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(hf_dir), "mkdtemp failed");
	setenv("HOME", hf_dir, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_STATE_HOME");
	unsetenv("CODEX_HOME");
}

static int
hf_rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void
hf_teardown(void)
{
	if (hf_dir[0] != '\0')
		nftw(hf_dir, hf_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write a file of text under the test's directory; its path (static). */
static const char *
hf_put(const char *name, const char *text, mode_t mode)
{
	static char	 path[256];
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", hf_dir, name);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

/* The text of a file (free it). */
static char *
hf_get(const char *path)
{
	char	*buf, *cause = NULL;
	size_t	 len;

	cr_assert_eq(files_read(path, &buf, &len, &cause), 0, "%s", cause);
	return buf;
}

Test(hosts_files, expand, .init = hf_setup, .fini = hf_teardown,
    .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*tmpl, *want;	/* want: after HOME's dir */
	} rows[] = {
		{ "~/.claude.json", "/.claude.json" },
		{ "$XDG_CONFIG_HOME/Code/User/mcp.json",
		    "/.config/Code/User/mcp.json" },
		{ "$CODEX_HOME/config.toml", "/.codex/config.toml" },
	};
	char	*p, *cause = NULL, want[256];
	size_t	 i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		p = files_expand(rows[i].tmpl, "/proj", &cause);
		snprintf(want, sizeof want, "%s%s", hf_dir, rows[i].want);
		cr_assert_str_eq(p, want, "%s", rows[i].tmpl);
		free(p);
	}
	p = files_expand(".vscode/mcp.json", "/proj", &cause);
	cr_assert_str_eq(p, "/proj/.vscode/mcp.json");
	free(p);

	setenv("XDG_CONFIG_HOME", "/cfg", 1);
	setenv("CODEX_HOME", "/cx", 1);
	p = files_expand("$XDG_CONFIG_HOME/Claude/x.json", "/proj", &cause);
	cr_assert_str_eq(p, "/cfg/Claude/x.json");
	free(p);
	p = files_expand("$CODEX_HOME/config.toml", "/proj", &cause);
	cr_assert_str_eq(p, "/cx/config.toml");
	free(p);
	/* A relative XDG_CONFIG_HOME is ignored, as the spec says. */
	setenv("XDG_CONFIG_HOME", "rel", 1);
	p = files_expand("$XDG_CONFIG_HOME/a", "/proj", &cause);
	snprintf(want, sizeof want, "%s/.config/a", hf_dir);
	cr_assert_str_eq(p, want);
	free(p);

	cr_assert_null(files_expand("%APPDATA%\\Claude\\x.json", "/p",
	    &cause));
	cr_assert_not_null(strstr(cause, "Windows"));
	free(cause);
	cause = NULL;
	unsetenv("HOME");
	cr_assert_null(files_expand("~/.claude.json", "/p", &cause));
	cr_assert_not_null(strstr(cause, "HOME"));
	free(cause);
}

Test(hosts_files, write_refuses_a_file_changed_meanwhile, .init = hf_setup,
    .fini = hf_teardown, .timeout = UNIT_TIMEOUT)
{
	const char	*p = hf_put("c.json", "{\"a\": 2}\n", 0640);
	char		*cause = NULL, *now;
	struct stat	 sb;

	/* Read as {"a": 1}; someone wrote {"a": 2} since. */
	cr_assert_eq(files_write(p, "{\"a\": 1}\n", 9, "{}\n", 3, &cause),
	    -1);
	cr_assert_not_null(strstr(cause, "changed while mcpreel was editing "
	    "it"), "%s", cause);
	free(cause);
	cause = NULL;
	now = hf_get(p);
	cr_assert_str_eq(now, "{\"a\": 2}\n", "untouched");
	free(now);

	cr_assert_eq(files_write(p, "{\"a\": 2}\n", 9, "{}\n", 3, &cause), 0,
	    "%s", cause);
	now = hf_get(p);
	cr_assert_str_eq(now, "{}\n");
	free(now);
	cr_assert_eq(stat(p, &sb), 0);
	cr_assert_eq(sb.st_mode & 07777, 0640, "the mode kept");
}

Test(hosts_files, write_follows_a_symlink, .init = hf_setup,
    .fini = hf_teardown, .timeout = UNIT_TIMEOUT)
{
	char		 target[256], link[256], *cause = NULL, *now;
	struct stat	 sb;

	snprintf(target, sizeof target, "%s", hf_put("real.json", "old",
	    0600));
	snprintf(link, sizeof link, "%s/link.json", hf_dir);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(files_write(link, "old", 3, "new", 3, &cause), 0, "%s",
	    cause);
	cr_assert_eq(lstat(link, &sb), 0);
	cr_assert(S_ISLNK(sb.st_mode), "still a link");
	now = hf_get(target);
	cr_assert_str_eq(now, "new");
	free(now);
}

Test(hosts_files, read_bounds_and_absence, .init = hf_setup,
    .fini = hf_teardown, .timeout = UNIT_TIMEOUT)
{
	char	 path[256], *buf, *cause = NULL;
	size_t	 len;
	FILE	*f;

	snprintf(path, sizeof path, "%s/none", hf_dir);
	cr_assert_eq(files_read(path, &buf, &len, &cause), 1);
	cr_assert_eq(files_read(hf_dir, &buf, &len, &cause), -1);
	cr_assert_not_null(strstr(cause, "not a regular file"));
	free(cause);
	cause = NULL;
	snprintf(path, sizeof path, "%s/big", hf_dir);
	cr_assert_not_null(f = fopen(path, "w"));
	cr_assert_eq(ftruncate(fileno(f), (off_t)FILES_MAX_BYTES + 1), 0);
	fclose(f);
	cr_assert_eq(files_read(path, &buf, &len, &cause), -1);
	cr_assert_not_null(strstr(cause, "larger than"));
	free(cause);
}

Test(hosts_files, state_round_trip, .init = hf_setup, .fini = hf_teardown,
    .timeout = UNIT_TIMEOUT)
{
	struct files_state	 st, back;
	struct hcfg_change	 ch[2] = {
		{ "mcpServers", "a", "{\"command\": \"x\"}", "{\"w\": 1}" },
		{ "projects\x1f/p\x1fmcpServers", "b", "\xff\xfe not utf-8",
		    "after" },
	};
	struct hcfg_change	 again = { "mcpServers", "a", "{\"new\": 0}",
		"{\"w\": 2}" };
	struct hcfg_changes	 add = { ch, 2 }, one = { &again, 1 };
	char			*cause = NULL, *dir;
	struct stat		 sb;

	cr_assert_eq(files_state_load("/some/config.json", &st, &cause), 0,
	    "%s", cause);
	cr_assert_eq(st.exists, 0);
	cr_assert_eq(files_state_backup(&st, "orig", 4, &cause), 0, "%s",
	    cause);
	/* Never overwritten while it is there. */
	cr_assert_eq(files_state_backup(&st, "other", 5, &cause), 0);
	files_state_merge(&st, &add);
	files_state_merge(&st, &one);
	st.sha256 = files_sha256("wrapped", 7);
	cr_assert_eq(files_state_save(&st, &cause), 0, "%s", cause);

	dir = files_state_dir(0, &cause);
	cr_assert_eq(stat(dir, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0700);
	free(dir);
	cr_assert_eq(stat(st.json, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);
	cr_assert_eq(stat(st.backup, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);
	dir = hf_get(st.backup);
	cr_assert_str_eq(dir, "orig");
	free(dir);

	cr_assert_eq(files_state_load("/some/config.json", &back, &cause), 0,
	    "%s", cause);
	cr_assert_eq(back.exists, 1);
	cr_assert_str_eq(back.sha256, st.sha256);
	cr_assert_eq(back.changes.n, 2);
	/* The second wrap of a replaced the whole change. */
	cr_assert_str_eq(back.changes.v[0].before, "{\"new\": 0}");
	cr_assert_str_eq(back.changes.v[0].after, "{\"w\": 2}");
	cr_assert_str_eq(back.changes.v[1].container,
	    "projects\x1f/p\x1fmcpServers");
	cr_assert_str_eq(back.changes.v[1].before, "\xff\xfe not utf-8");

	files_state_drop(&back, &add);
	cr_assert_eq(back.changes.n, 0);
	cr_assert_eq(files_state_remove(&back, &cause), 0);
	cr_assert_eq(stat(st.json, &sb), -1);
	cr_assert_eq(stat(st.backup, &sb), -1);
	files_state_clear(&back);
	files_state_clear(&st);
}

/* The diff of a to b, as printed (free it). */
static char *
hf_diff(const char *a, const char *b)
{
	char	*out = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&out, &len);

	files_diff(f, "x", "x (wrapped)", a, strlen(a), b, strlen(b));
	fclose(f);
	return out;
}

Test(hosts_files, diff_exact, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*a, *b, *want;
	} rows[] = {
		{ "same\n", "same\n", "" },
		{ "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
		    "--- x\n+++ x (wrapped)\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n"
		    "+five\n 6\n 7\n 8\n" },
		/* Two changes 7 lines apart: two hunks. */
		{ "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
		    "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n",
		    "--- x\n+++ x (wrapped)\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n"
		    " d\n@@ -7,4 +7,4 @@\n g\n h\n i\n-j\n+J\n" },
		/* An insertion into an empty file; a last line without \n. */
		{ "", "new\n", "--- x\n+++ x (wrapped)\n@@ -0,0 +1,1 @@\n"
		    "+new\n" },
		{ "a\nb", "a\nc", "--- x\n+++ x (wrapped)\n@@ -1,2 +1,2 @@\n"
		    " a\n-b\n\\ No newline at end of file\n+c\n"
		    "\\ No newline at end of file\n" },
	};
	size_t	 i;
	char	*got;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		got = hf_diff(rows[i].a, rows[i].b);
		cr_assert_str_eq(got, rows[i].want, "row %zu:\n%s", i, got);
		free(got);
	}
}
