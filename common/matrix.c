/*
 * The support matrix: the precompiled driver images that exist.  Three forms,
 * told from the content:
 *   CSV       header driver_branch,kernel,os_tag, then one row per image
 *             (RFC 4180: a field may be quoted, "" being a quote in it);
 *   tag list  one tag per line (a registry's tag listing);
 *   JSON      what `skopeo list-tags` prints: {"Repository": ..., "Tags": [...]}.
 * CSV rows become tags through tag_build(), as node labels do.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

#define MATRIX_HEADER "driver_branch,kernel,os_tag"

struct matrix {
	struct strset *tags;
	size_t rows;
};

static const char *colname[] = { "driver_branch", "kernel", "os_tag" };

static void
add(struct matrix *m, const char *name, size_t line, const char *tag, int report_dups)
{
	int first = strset_add(m->tags, tag, line);

	m->rows++;
	if (first && report_dups)
		warnf("%s:%zu: duplicate of line %d (%s)", name, line, first, tag);
}

static void
load_json(struct matrix *m, const struct input *in, int report_dups)
{
	cJSON *doc = doc_parse(in);
	const cJSON *tags = j_get(doc, "Tags"), *t;
	size_t i = 0;

	if (!cJSON_IsArray(tags))
		die("%s: JSON matrix has no \"Tags\" list (expected `skopeo list-tags` output)",
		    in->name);
	cJSON_ArrayForEach(t, tags) {
		i++;
		if (!cJSON_IsString(t) || !tag_valid(t->valuestring))
			die("%s: Tags[%zu] %s is not an image tag", in->name, i - 1,
			    cJSON_IsString(t) ? qstr(t->valuestring) : j_type(t));
		add(m, in->name, i, t->valuestring, report_dups);
	}
	cJSON_Delete(doc);
}

static int
blank(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

/*
 * The fields of one CSV record, in place (RFC 4180: "a ""b""" is a "b"; a
 * quoted field may hold commas, though no tag part can).  -1 on more than max.
 */
static int
csv_fields(char *s, char **f, int max, const char *name, size_t ln)
{
	char *o;
	int n = 0;

	for (;;) {
		if (n == max)
			return -1;
		f[n++] = o = s;
		if (*s == '"') {
			for (s++;; s++) {
				if (*s == '\0')
					die("%s:%zu: a quoted field is not closed", name, ln);
				if (*s == '"' && s[1] == '"')
					s++;
				else if (*s == '"')
					break;
				*o++ = *s;
			}
			s++;
			if (*s != ',' && *s != '\0')
				die("%s:%zu: text after a quoted field's closing quote", name, ln);
		} else {
			while (*s != ',' && *s != '\0') {
				if (*s == '"')
					die("%s:%zu: a quote inside an unquoted field", name, ln);
				*o++ = *s++;
			}
		}
		if (*s == '\0') {
			*o = '\0';
			return n;
		}
		*o = '\0';
		s++;
	}
}

static void
load_csv_row(struct matrix *m, const char *name, size_t ln, char *s, int report_dups)
{
	char *f[3], tag[TAG_MAX + 1];
	const char *why;
	int n, bad;

	if ((n = csv_fields(s, f, 3, name, ln)) < 0)
		die("%s:%zu: more than 3 columns (expected %s)", name, ln, MATRIX_HEADER);
	if (n != 3)
		die("%s:%zu: %d column%s (expected 3: %s)", name, ln, n, n == 1 ? "" : "s",
		    MATRIX_HEADER);
	for (n = 0; n < 3; n++)
		if (*f[n] == '\0')
			die("%s:%zu: empty %s", name, ln, colname[n]);
	if ((bad = tag_build(tag, sizeof tag, f[0], f[1], f[2], &why)) != 0)
		die("%s:%zu: %s %s %s", name, ln, colname[bad - 1], qstr(f[bad - 1]), why);
	add(m, name, ln, tag, report_dups);
}

static void
load_text(struct matrix *m, struct input *in, int report_dups)
{
	char *s = in->data, *nl;
	size_t ln = 0, len;
	int csv = -1; /* not yet known */

	if (strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	for (; s != NULL && *s != '\0'; s = nl) {
		ln++;
		if ((nl = strchr(s, '\n')) != NULL)
			*nl++ = '\0';
		len = strlen(s);
		if (len > 0 && s[len - 1] == '\r')
			s[--len] = '\0';
		/* blank lines and comments, in either form */
		if (blank(s) || s[strspn(s, " \t")] == '#')
			continue;
		if (csv < 0) {
			csv = strchr(s, ',') != NULL;
			if (csv) {
				char *h[4], copy[64];
				int k;

				snprintf(copy, sizeof copy, "%s", s);
				k = strlen(s) < sizeof copy ? csv_fields(copy, h, 4, in->name, ln) : -1;
				if (k != 3 || strcmp(h[0], colname[0]) != 0 ||
				    strcmp(h[1], colname[1]) != 0 || strcmp(h[2], colname[2]) != 0)
					die("%s:%zu: header must be exactly %s, not %s", in->name, ln,
					    MATRIX_HEADER, qstr(s));
				continue;
			}
		}
		if (csv) {
			load_csv_row(m, in->name, ln, s, report_dups);
		} else if (!tag_valid(s)) {
			die("%s:%zu: %s is not an image tag%s", in->name, ln, qstr(s),
			    strchr(s, ':') || strchr(s, '/') ?
			    " (give the tag alone, without registry/repository:)" : "");
		} else {
			add(m, in->name, ln, s, report_dups);
		}
	}
	if (csv < 0)
		die("%s: empty matrix: expected the header %s", in->name, MATRIX_HEADER);
}

struct matrix *
matrix_load(const char *path, int report_dups)
{
	struct matrix *m = xmalloc(sizeof *m);
	struct input in;
	size_t i;

	m->tags = strset_new();
	m->rows = 0;
	input_read(&in, path);
	if (memchr(in.data, '\0', in.len) != NULL)
		die("%s: NUL byte in the matrix", in.name);
	i = text_start(in.data, in.len);
	if (i < in.len && in.data[i] == '{')
		load_json(m, &in, report_dups);
	else
		load_text(m, &in, report_dups);
	input_free(&in);
	return m;
}

int
matrix_has(const struct matrix *m, const char *tag)
{
	return strset_get(m->tags, tag) != 0;
}

size_t
matrix_rows(const struct matrix *m)
{
	return m->rows;
}

void
matrix_free(struct matrix *m)
{
	if (m == NULL)
		return;
	strset_free(m->tags);
	free(m);
}
