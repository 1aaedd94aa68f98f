/* Messages, usage, allocation and the checked close of stdout. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

#ifndef GPUDRV_VERSION
#define GPUDRV_VERSION "unknown" /* the Makefile gives VERSION */
#endif

const char *progname = "gpudrv";

static void *
cjson_malloc(size_t n)
{
	return xmalloc(n);
}

void
setprogname(const char *argv0)
{
	/* Every cJSON allocation checked: out of memory is a message and exit 2. */
	cJSON_Hooks hooks = { cjson_malloc, free };
	const char *slash;

	cJSON_InitHooks(&hooks);
	if (argv0 == NULL || *argv0 == '\0')
		return;
	slash = strrchr(argv0, '/');
	progname = slash ? slash + 1 : argv0;
}

static void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	size_t n = strlen(fmt);

	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	if (n > 0 && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
}

void
warnf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

/* Where die() goes instead of exiting, while a deferral is set (doc.c). */
static jmp_buf *defer_to;
static char *defer_msg;
static size_t defer_sz;

void
die_defer(jmp_buf *to, char *msg, size_t msgsz)
{
	defer_to = to;
	defer_msg = msg;
	defer_sz = msgsz;
}

void
die(const char *fmt, ...)
{
	jmp_buf *to = defer_to;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	if (to != NULL) {
		defer_to = NULL;
		vsnprintf(defer_msg, defer_sz, fmt, ap);
		va_end(ap);
		n = strlen(fmt);
		if (n > 0 && fmt[n - 1] == ':')
			snprintf(defer_msg + strlen(defer_msg), defer_sz - strlen(defer_msg), " %s",
			    strerror(errno));
		longjmp(*to, 1);
	}
	vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_TROUBLE);
}

void
usage_exit(const char *usage)
{
	fprintf(stderr, "usage: %s %s\n", progname, usage);
	exit(EXIT_TROUBLE);
}

/* A full disk or a closed pipe is an error, not silence. */
int
fshut(FILE *f, const char *name)
{
	int bad = fflush(f) != 0 || ferror(f);

	if (fclose(f) != 0)
		bad = 1;
	if (bad) {
		warnf("write error on %s:", name);
		return EXIT_TROUBLE;
	}
	return EXIT_CLEAN;
}

/*
 * A copy of s fit for one line of a message: quoted, control and non-ASCII
 * bytes escaped, cut at 64 bytes (qmsg: 400, for what an API server says).
 * Four rotating buffers, so a message can hold up to four of them.
 */
#define QMAX 400

static const char *
quoted(const char *s, size_t max)
{
	static char ring[4][QMAX * 4 + 8];
	static int next;
	char *out = ring[next++ % 4], *o = out;
	size_t i;

	if (s == NULL)
		return "(null)";
	*o++ = '"';
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == max) {
			memcpy(o, "...", 3);
			o += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(o, 5, "\\x%02x", c);
			o += 4;
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

const char *
qstr(const char *s)
{
	return quoted(s, 64);
}

const char *
qmsg(const char *s)
{
	return quoted(s, QMAX);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		die("out of memory:");
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory:");
	return p;
}

void *
xgrow(void *p, size_t *cap, size_t n, size_t first, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : first;
	return xrealloc(p, *cap * size);
}

/* A string printf makes, in memory of its own size (free it). */
char *
xsprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("cannot format a message");
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/*
 * getopt(3) with the program's own words for a bad option (getopt's name
 * its messages with the full argv[0]): "unknown option -x" or "option -m
 * needs an argument", then the usage line, exit 2.  -h, where opts has it,
 * prints the usage line on stdout and exits 0, --version (a word of its own,
 * where an option can be) the version.  Returns only options in opts.
 */
int
nextopt(int argc, char **argv, const char *opts, const char *usage)
{
	int c;

	if (optind < argc && strcmp(argv[optind], "--version") == 0) {
		printf("%s (gpudrv) %s\n", progname, GPUDRV_VERSION);
		exit(fshut(stdout, "stdout"));
	}
	opterr = 0;
	c = getopt(argc, argv, opts);
	if (c == 'h') {
		printf("usage: %s %s\n", progname, usage);
		exit(fshut(stdout, "stdout"));
	}
	if (c == '?') {
		if (optopt != 0 && optopt != ':' && strchr(opts, optopt) != NULL)
			warnf("option -%c needs an argument", optopt);
		else
			warnf("unknown option -%c", optopt);
		usage_exit(usage);
	}
	return c;
}
