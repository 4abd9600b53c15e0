/*
 * formats/ through its header alone, as the commands use it: a cassette
 * imported and exported again gives the same bytes, the sink reads what
 * import_file() would store and refuses what it would refuse, and the
 * file writer replaces a file whole, keeping its mode when asked.
 */

#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "formats.h"
#include "store.h"
#include "unit.h"

/* A small cassette: a session and three messages, one of them a batch. */
static const char formats_cassette[] =
    "{\"format\":\"mcpreel-jsonl\",\"version\":1,\"session\":7,"
    "\"name\":\"t\",\"transport\":\"stdio\",\"target\":\"[\\\"srv\\\"]\","
    "\"started_ns\":1000,\"ended_ns\":9000,\"exit_status\":0}\n"
    "{\"type\":\"message\",\"direction\":\"c2s\",\"ts_ns\":2000,"
    "\"mono_ns\":20,\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,"
    "\"method\":\"ping\"}}\n"
    "{\"type\":\"message\",\"direction\":\"s2c\",\"ts_ns\":3000,"
    "\"mono_ns\":30,\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,"
    "\"result\":{}}}\n"
    "{\"type\":\"message\",\"direction\":\"c2s\",\"ts_ns\":4000,"
    "\"mono_ns\":40,\"message\":[{\"jsonrpc\":\"2.0\","
    "\"method\":\"notifications/initialized\"}]}\n";

static char	formats_dir[64];

static void
formats_setup(void)
{
	snprintf(formats_dir, sizeof formats_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(formats_dir), "mkdtemp failed");
}

static int
formats_rm_cb(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	return remove(path);
}

static void
formats_teardown(void)
{
	if (formats_dir[0] != '\0')
		nftw(formats_dir, formats_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* The whole of a file, NUL-terminated. */
static char *
formats_slurp(const char *path, size_t *len)
{
	FILE	*f = fopen(path, "r");
	char	*buf;

	cr_assert_not_null(f, "cannot open %s", path);
	buf = calloc(1, 1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

/* Import text as a cassette into db, then export it to out. */
static int64_t
formats_through(const char *text, size_t len, const char *db,
    const char *out)
{
	struct import_opts	 o;
	struct import_result	 r;
	struct store		*st;
	char			*cause = NULL;
	int64_t			 id;

	memset(&o, 0, sizeof o);
	o.path = "cassette";
	o.file = fmemopen((void *)text, len, "r");
	o.format = IMPORT_AUTO;
	o.keep = 1;
	cr_assert_eq(import_file(&o, db, &r), 0, "import: %s", r.cause);
	fclose(o.file);
	cr_assert_eq(r.messages, 3);
	id = r.id;
	import_result_clear(&r);
	st = store_open(db, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	cr_assert_eq(formats_export(st, id, FORMATS_JSONL, out, &cause), 0,
	    "export: %s", cause);
	store_close(st);
	return id;
}

Test(formats, cassette_round_trip, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	char	 db1[128], db2[128], out1[128], out2[128], *a, *b;
	size_t	 alen, blen;

	snprintf(db1, sizeof db1, "%s/1.db", formats_dir);
	snprintf(db2, sizeof db2, "%s/2.db", formats_dir);
	snprintf(out1, sizeof out1, "%s/1.jsonl", formats_dir);
	snprintf(out2, sizeof out2, "%s/2.jsonl", formats_dir);
	cr_assert_eq(formats_through(formats_cassette,
	    sizeof formats_cassette - 1, db1, out1), 7);
	a = formats_slurp(out1, &alen);
	cr_assert_not_null(strstr(a, "\"message\":[{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/initialized\"}]}\n"),
	    "the batch is not written as it was: %s", a);
	cr_assert_not_null(strstr(a, "\"format\":\"mcpreel-jsonl\""));
	cr_assert_eq(formats_through(a, alen, db2, out2), 7);
	b = formats_slurp(out2, &blen);
	cr_assert_eq(alen, blen);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

/* What the sink was handed. */
struct formats_seen {
	int64_t	 seqs[8];
	size_t	 n;
};

static void
formats_sink_cb(struct msg *m, int64_t seq, void *arg)
{
	struct formats_seen	*fs = arg;

	if (fs->n < 8)
		fs->seqs[fs->n++] = seq;
	msg_free(m);
}

Test(formats, sink_numbers_and_refuses, .timeout = UNIT_TIMEOUT)
{
	static const char	 bad[] = "{\"format\":\"mcpreel-jsonl\","
	    "\"version\":1,\"name\":null,\"transport\":\"stdio\","
	    "\"target\":\"x\",\"started_ns\":1}\n"
	    "{\"type\":\"message\",\"direction\":\"sideways\",\"ts_ns\":1,"
	    "\"mono_ns\":1,\"message\":{}}\n";
	struct import_opts	 o;
	struct import_result	 r;
	struct formats_seen	 fs;

	memset(&o, 0, sizeof o);
	memset(&fs, 0, sizeof fs);
	o.path = "c.jsonl";
	o.file = fmemopen((void *)formats_cassette,
	    sizeof formats_cassette - 1, "r");
	o.format = IMPORT_JSONL;
	o.keep = 1;
	o.sink = formats_sink_cb;
	o.sink_arg = &fs;
	cr_assert_eq(import_sink(&o, &r), 0, "%s", r.cause);
	fclose(o.file);
	cr_assert_eq(r.id, 7);
	cr_assert_str_eq(r.name, "t");
	cr_assert_eq(r.messages, 3);
	cr_assert_eq(fs.n, 3);
	cr_assert_eq(fs.seqs[0], 1);
	cr_assert_eq(fs.seqs[2], 3);
	import_result_clear(&r);

	o.file = fmemopen((void *)bad, sizeof bad - 1, "r");
	cr_assert_eq(import_sink(&o, &r), -1);
	fclose(o.file);
	cr_assert_not_null(r.cause);
	cr_assert_not_null(strstr(r.cause, "c.jsonl line 2: \"direction\""),
	    "%s", r.cause);
	cr_assert_eq(r.store_failed, 0);
	import_result_clear(&r);

	/* No sink: refused with a reason, the file not read. */
	o.sink = NULL;
	o.file = fmemopen((void *)formats_cassette,
	    sizeof formats_cassette - 1, "r");
	cr_assert_eq(import_sink(&o, &r), -1);
	cr_assert_eq(ftell(o.file), 0);
	fclose(o.file);
	cr_assert_not_null(r.cause);
	cr_assert_not_null(strstr(r.cause, "no sink"), "%s", r.cause);
	import_result_clear(&r);
}

Test(formats, write_file_whole_keeping_mode, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	const char		*parts[] = { "new ", "bytes\n", NULL };
	const size_t		 lens[] = { 4, 6 };
	struct formats_file	 ff;
	struct stat		 sb;
	char			 path[128], fresh[128], *buf, *cause = NULL;
	size_t			 len;
	FILE			*f;

	snprintf(path, sizeof path, "%s/fixture.jsonl", formats_dir);
	f = fopen(path, "w");
	fputs("old bytes that are longer\n", f);
	fclose(f);
	chmod(path, 0644);
	cr_assert_eq(formats_write_file(path, parts, lens, &cause), 0, "%s",
	    cause);
	buf = formats_slurp(path, &len);
	cr_assert_str_eq(buf, "new bytes\n");
	free(buf);
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_mode & 07777, 0644);

	/* A new file is private; a directory is refused with its name. */
	snprintf(fresh, sizeof fresh, "%s/fresh", formats_dir);
	cr_assert_not_null(formats_open(&ff, fresh, 0, &cause));
	cr_assert_eq(formats_close(&ff, 0, &cause), 0, "%s", cause);
	cr_assert_eq(stat(fresh, &sb), 0);
	cr_assert_eq(sb.st_mode & 07777, 0600);
	cr_assert_null(formats_open(&ff, formats_dir, 0, &cause));
	cr_assert_not_null(strstr(cause, "is a directory"), "%s", cause);
	free(cause);
}

Test(formats, write_file_never_stdout, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	const char	*parts[] = { "cassette\n", NULL };
	const size_t	 lens[] = { 9 };
	struct stat	 sb;
	char		 out[128], *cause = NULL;
	int		 fd;

	/* stdout into a file, to see that nothing reaches it. */
	snprintf(out, sizeof out, "%s/stdout", formats_dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_neq(fd, -1);
	fflush(stdout);
	cr_assert_neq(dup2(fd, STDOUT_FILENO), -1);
	close(fd);
	cr_assert_eq(chdir(formats_dir), 0);
	cr_assert_eq(formats_write_file("-", parts, lens, &cause), -1);
	cr_assert_not_null(strstr(cause, "./- for a file named -"), "%s",
	    cause);
	free(cause);
	cause = NULL;
	fflush(stdout);
	cr_assert_eq(stat(out, &sb), 0);
	cr_assert_eq(sb.st_size, 0, "%lld bytes on stdout",
	    (long long)sb.st_size);
	cr_assert_neq(stat("-", &sb), 0, "a file named - was made");

	/* A device is not a file to write whole. */
	cr_assert_eq(formats_write_file("/dev/null", parts, lens, &cause), -1);
	cr_assert_not_null(strstr(cause, "not a regular file"), "%s", cause);
	free(cause);
}

/* How many entries dir holds, "." and ".." aside. */
static int
formats_entries(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	cr_assert_not_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

Test(formats, write_file_keeps_a_symlink, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	const char	*parts[] = { "new\n", NULL };
	const size_t	 lens[] = { 4 };
	struct stat	 sb;
	char		 real[128], link[128], *buf, *cause = NULL;
	size_t		 len;
	FILE		*f;

	snprintf(real, sizeof real, "%s/real.jsonl", formats_dir);
	snprintf(link, sizeof link, "%s/link.jsonl", formats_dir);
	cr_assert_not_null(f = fopen(real, "w"));
	fputs("old\n", f);
	fclose(f);
	cr_assert_eq(symlink("real.jsonl", link), 0);
	cr_assert_eq(formats_write_file(link, parts, lens, &cause), 0, "%s",
	    cause);
	cr_assert_eq(lstat(link, &sb), 0);
	cr_assert(S_ISLNK(sb.st_mode), "the link was replaced by a file");
	buf = formats_slurp(real, &len);
	cr_assert_str_eq(buf, "new\n");
	free(buf);
	cr_assert_eq(formats_entries(formats_dir), 2, "a temporary file left");
}

Test(formats, write_file_failed_leaves_old_file, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	static char	 big[64 * 1024];
	const char	*parts[] = { big, NULL };
	const size_t	 lens[] = { sizeof big };
	struct rlimit	 rl = { 4096, 4096 };
	char		 path[128], *buf, *cause = NULL;
	size_t		 len;
	FILE		*f;

	/* A file size limit below what is written: EFBIG, not SIGXFSZ. */
	snprintf(path, sizeof path, "%s/old.jsonl", formats_dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("old bytes\n", f);
	fclose(f);
	memset(big, 'x', sizeof big);
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_eq(formats_write_file(path, parts, lens, &cause), -1);
	cr_assert_not_null(strstr(cause, "File too large"), "%s", cause);
	free(cause);
	buf = formats_slurp(path, &len);
	cr_assert_str_eq(buf, "old bytes\n");
	free(buf);
	cr_assert_eq(formats_entries(formats_dir), 1, "a temporary file left");
}

Test(formats, close_rename_failed_removes_temp, .init = formats_setup,
    .fini = formats_teardown, .timeout = UNIT_TIMEOUT)
{
	struct formats_file	 ff;
	char			 path[128], inner[128], *cause = NULL;
	FILE			*f;

	/* The target becomes a directory with a file in it meanwhile. */
	snprintf(path, sizeof path, "%s/target", formats_dir);
	snprintf(inner, sizeof inner, "%s/target/inner", formats_dir);
	cr_assert_not_null(f = formats_open(&ff, path, 1, &cause), "%s",
	    cause);
	fputs("bytes\n", f);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_not_null(f = fopen(inner, "w"));
	fclose(f);
	cr_assert_eq(formats_close(&ff, 0, &cause), -1);
	cr_assert_not_null(strstr(cause, "cannot rename"), "%s", cause);
	free(cause);
	cr_assert_eq(formats_entries(formats_dir), 1, "a temporary file left");
	cr_assert_eq(formats_entries(path), 1);
}
