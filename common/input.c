/* Reading a whole input, and turning byte offsets into line:column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* 1-based line and column (in bytes) of offset off. */
void
input_where(const struct input *in, size_t off, size_t *line, size_t *col)
{
	size_t i, l = 1, c = 1;

	if (off > in->len)
		off = in->len;
	for (i = 0; i < off; i++) {
		if (in->data[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}
