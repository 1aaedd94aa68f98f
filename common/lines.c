/* Reading text line by line: CRLF tolerated, line numbers kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

void
lines_open(struct lines *l, const char *path)
{
	memset(l, 0, sizeof *l);
	if (path == NULL || strcmp(path, "-") == 0) {
		l->f = stdin;
		l->name = "<stdin>";
		return;
	}
	l->f = fopen(path, "r");
	if (l->f == NULL)
		die("cannot open %s:", path);
	l->name = path;
}

/* The next line without its line end, or NULL at the end of input. */
char *
lines_next(struct lines *l, size_t *len)
{
	ssize_t n = getline(&l->buf, &l->cap, l->f);

	if (n < 0) {
		if (ferror(l->f))
			die("read error on %s:", l->name);
		return NULL;
	}
	l->lineno++;
	if (n > 0 && l->buf[n - 1] == '\n')
		l->buf[--n] = '\0';
	if (n > 0 && l->buf[n - 1] == '\r')
		l->buf[--n] = '\0';
	if ((size_t)n != strlen(l->buf))
		die("%s:%zu: NUL byte in line", l->name, l->lineno);
	if (len != NULL)
		*len = (size_t)n;
	return l->buf;
}

void
lines_close(struct lines *l)
{
	if (l->f != NULL && l->f != stdin)
		fclose(l->f);
	free(l->buf);
	memset(l, 0, sizeof *l);
}

/* Splits s in place on single spaces.  The field count, or -1 when over max. */
int
split_fields(char *s, char **f, int max)
{
	int n = 0;

	for (;;) {
		if (n == max)
			return -1;
		f[n++] = s;
		s = strchr(s, ' ');
		if (s == NULL)
			return n;
		*s++ = '\0';
	}
}
