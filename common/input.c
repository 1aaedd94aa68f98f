/* Reading a whole input, or a chunk at a time; the format, told from the content. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

void
input_read(struct input *in, const char *path)
{
	FILE *f;
	size_t cap = 1 << 16, n;

	if (path == NULL || strcmp(path, "-") == 0) {
		f = stdin;
		in->name = "<stdin>";
	} else {
		f = fopen(path, "rb");
		if (f == NULL)
			die("cannot open %s:", path);
		in->name = path;
	}
	in->data = xmalloc(cap);
	in->len = 0;
	while ((n = fread(in->data + in->len, 1, cap - in->len - 1, f)) > 0) {
		in->len += n;
		if (cap - in->len - 1 == 0) {
			cap *= 2;
			in->data = xrealloc(in->data, cap);
		}
	}
	if (ferror(f))
		die("read error on %s:", in->name);
	if (f != stdin)
		fclose(f);
	in->data[in->len] = '\0';
}

void
input_free(struct input *in)
{
	free(in->data);
	in->data = NULL;
	in->len = 0;
}

/*
 * Chunked reading for the streaming scanners: 64 KiB at a time, so memory
 * stays flat however long the input.  A chunk that fits the CPU's cache is
 * still there when the scanner reads it: with 1 MiB chunks the kernel's copy
 * alone cost 0.6 s of 1.5 GB, with 64 KiB 0.15 s.  Only leading white space
 * (format detection needs the first byte after it) can make the buffer grow.
 */
#define CHUNK (1 << 16)

static size_t
read_some(struct reader *r, char *buf, size_t n)
{
	ssize_t got;

	do
		got = read(r->fd, buf, n);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		die("read error on %s:", r->name);
	if (got == 0)
		r->eof = 1;
	return (size_t)got;
}

size_t
text_start(const char *p, size_t n)
{
	size_t i = 0;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && isspace((unsigned char)p[i]))
		i++;
	return i;
}

int
text_is_json(const char *p, size_t n, const char *name)
{
	size_t i = text_start(p, n), e;
	char line[201];

	if (i == n)
		die("%s: empty input: expected kubectl JSON or YAML", name);
	if (p[i] == '<') {
		for (e = i; e < n && e - i < sizeof line - 1 && p[e] != '\n' && p[e] != '\r'; e++)
			;
		memcpy(line, p + i, e - i);
		line[e - i] = '\0';
		die("%s: an HTML page, not kubectl output (did a proxy or load balancer answer "
		    "instead of the API server?): %s", name, qstr(line));
	}
	return p[i] == '{' || p[i] == '[';
}

static size_t
first_byte(const struct reader *r)
{
	return text_start(r->buf, r->len);
}

void
reader_open(struct reader *r, const char *path)
{
	if (!reader_try(r, path))
		die("%s: empty input: expected kubectl JSON or YAML", r->name);
}

int
reader_try(struct reader *r, const char *path)
{
	memset(r, 0, sizeof *r);
	if (path == NULL || strcmp(path, "-") == 0) {
		r->fd = 0;
		r->name = "<stdin>";
	} else {
		r->fd = open(path, O_RDONLY);
		if (r->fd < 0)
			die("cannot open %s:", path);
		r->name = path;
	}
	r->cap = CHUNK;
	r->buf = xmalloc(r->cap);
	while (!r->eof && (r->len < 3 || first_byte(r) == r->len)) {
		if (r->len == r->cap)
			r->buf = xrealloc(r->buf, r->cap *= 2);
		r->len += read_some(r, r->buf + r->len, r->cap - r->len);
	}
	if (first_byte(r) == r->len)
		return 0;
	r->json = text_is_json(r->buf, r->len, r->name);
	return 1;
}

/* The next chunk into buf, replacing what it held; 0 at the end. */
size_t
reader_next(struct reader *r)
{
	r->off += r->len;
	r->len = 0;
	r->pos = 0;
	if (r->fd < 0 || r->eof)
		return 0;
	r->len = read_some(r, r->buf, r->cap);
	return r->len;
}

void
reader_close(struct reader *r)
{
	if (r->fd > 0)
		close(r->fd);
	if (r->fd >= 0)
		free(r->buf);
	r->buf = NULL;
}
