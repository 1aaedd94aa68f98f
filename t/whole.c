/*
 * whole: the tests' reference reader, independent of gpudrv's streaming
 * scanners (common/json.c, common/yaml.c).  It parses its input whole, with
 * plain cJSON_ParseWithLengthOpts for JSON and libyaml's document API for
 * YAML, and writes each document back as one line of compact JSON.  A
 * command given that output must say on stdout what it says of the input
 * itself, with the same exit status (t/0150, t/0160): where the two
 * disagree, one of the readers is wrong.
 *
 *   whole [file]    exit 0; 1 with a message when the input is not JSON or
 *                   YAML a kubectl would write (then the command must refuse
 *                   it too)
 *
 * YAML is read by the rules kubectl reads it by (sigs.k8s.io/yaml, YAML
 * 1.1), written out here from their definitions: null (~, null, empty),
 * booleans (y, yes, on, true, ... and their negatives), integers as Go's
 * strconv.ParseInt(s, 0, 64) reads them (0x, 0o, 0b, a leading 0 octal,
 * underscores dropped), floats as go-yaml's pattern, the rest strings;
 * quoted, block and !!str scalars are strings; no aliases, merge keys,
 * duplicate keys, non-string keys, infinities or NaNs, NUL bytes, or tags
 * but the standard ones.  Numbers are written so that an integer stays an
 * integer literal and a float never becomes one (1.0 stays 1.0).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <yaml.h>

#define TAG "tag:yaml.org,2002:"

static const char *name = "<stdin>";

static void
fail(const char *what, size_t line)
{
	if (line > 0)
		fprintf(stderr, "whole: %s:%zu: %s\n", name, line, what);
	else
		fprintf(stderr, "whole: %s: %s\n", name, what);
	exit(1);
}

static char *
slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	char *b = malloc(cap);

	while (b != NULL && (got = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n < 2 && (b = realloc(b, cap *= 2)) == NULL)
			break;
	}
	if (b == NULL || ferror(f))
		fail("cannot read", 0);
	b[n] = '\0';
	*len = n;
	return b;
}

/* ---- JSON: cJSON, documents back to back ---- */

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?, all n bytes of p: cJSON takes 01 and 1. */
static int
rfc_number(const char *p, size_t n)
{
	const char *e = p + n;
	size_t k;

	p += p < e && *p == '-';
	if (p < e && *p == '0')
		p++;
	else if (p < e && *p >= '1' && *p <= '9')
		while (p < e && isdigit((unsigned char)*p))
			p++;
	else
		return 0;
	if (p < e && *p == '.') {
		for (p++, k = 0; p < e && isdigit((unsigned char)*p); p++)
			k++;
		if (k == 0)
			return 0;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		p += p < e && (*p == '+' || *p == '-');
		for (k = 0; p < e && isdigit((unsigned char)*p); p++)
			k++;
		if (k == 0)
			return 0;
	}
	return p == e;
}


/*
 * cJSON keeps a number's double only; written back, 1.0 would read as the
 * integer 1.  So each number gets its literal back: the number tokens of
 * the text, in order (cJSON has checked the text: a token is a number), in
 * the order of the tree's numbers, which is the text's.
 */
static const char *
next_number(const char *p, const char *end, size_t *n)
{
	while (p < end) {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
			p++;
		} else if (*p == '-' || isdigit((unsigned char)*p)) {
			*n = strspn(p, "+-0123456789.eE");
			return p;
		} else {
			p++;
		}
	}
	return NULL;
}

static const char *
literals(cJSON *v, const char *p, const char *end)
{
	cJSON *c;
	size_t n = 0;

	if (cJSON_IsNumber(v)) {
		if ((p = next_number(p, end, &n)) == NULL)
			fail("a number without its text", 0);
		if (!rfc_number(p, n))
			fail("a number RFC 8259 refuses (01, 1., +1)", 0);
		v->type = cJSON_Raw;
		v->valuestring = malloc(n + 1);
		memcpy(v->valuestring, p, n);
		v->valuestring[n] = '\0';
		return p + n;
	}
	/* keys are strings, which next_number skips */
	for (c = v->child; c != NULL && (cJSON_IsArray(v) || cJSON_IsObject(v)); c = c->next)
		p = literals(c, p, end);
	return p;
}

/*
 * What RFC 8259 refuses and cJSON lets by: a raw control byte in a string,
 * or taken for white space;
 * and what gpudrv refuses of JSON that is otherwise good: a NUL, escaped
 * (\u0000) or not.
 */
static void
json_strict(const char *p, const char *end)
{
	int str = 0;

	for (; p < end; p++) {
		if (*p == '\0')
			fail("a NUL byte", 0);
		if (!str) {
			/* white space is space, tab, newline and return; cJSON takes any byte below 33 */
			if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
				fail("a control byte outside a string", 0);
			str = *p == '"';
			continue;
		}
		if ((unsigned char)*p < 0x20)
			fail("a control byte in a string", 0);
		if (*p == '\\') {
			if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0)
				fail("an escaped NUL", 0);
			p++;
		} else if (*p == '"') {
			str = 0;
		}
	}
}

static void
json_docs(const char *p, size_t len)
{
	const char *end = p + len, *stop;
	cJSON *doc;
	char *out;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p == end)
			return;
		stop = NULL;
		doc = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop, 0);
		if (doc == NULL || stop == NULL || stop == p)
			fail("not JSON", 0);
		json_strict(p, stop);
		literals(doc, p, stop);
		if ((out = cJSON_PrintUnformatted(doc)) == NULL)
			fail("out of memory", 0);
		puts(out);
		fflush(stdout);
		free(out);
		cJSON_Delete(doc);
		p = stop;
	}
}

/* ---- YAML: libyaml's documents, resolved as kubectl resolves them ---- */

static int
word(const char *s, const char *list)
{
	const char *w = list;
	size_t n = strlen(s);

	while (*w != '\0') {
		size_t k = strcspn(w, " ");

		if (k == n && strncmp(w, s, n) == 0)
			return 1;
		w += k;
		while (*w == ' ')
			w++;
	}
	return 0;
}

/* go-yaml's float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int
is_float(const char *s)
{
	size_t n;

	s += *s == '-' || *s == '+';
	if (*s == '.') {
		if ((n = strspn(s + 1, "0123456789")) == 0)
			return 0;
		s += 1 + n;
	} else {
		if ((n = strspn(s, "0123456789")) == 0)
			return 0;
		s += n;
		if (*s == '.')
			s += 1 + strspn(s + 1, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '-' || *s == '+';
		if ((n = strspn(s, "0123456789")) == 0)
			return 0;
		s += n;
	}
	return *s == '\0';
}

/* Go's strconv.ParseInt(s, 0, 64): into out as a decimal literal. */
static int
is_int(const char *s, char *out, size_t outsz)
{
	int neg = 0, base = 10;
	const char *ok = "0123456789";
	unsigned long long v;
	char *e;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (s[0] == '0' && strchr("xX", s[1]) != NULL && s[1] != '\0')
		base = 16, s += 2, ok = "0123456789abcdefABCDEF";
	else if (s[0] == '0' && strchr("oO", s[1]) != NULL && s[1] != '\0')
		base = 8, s += 2, ok = "01234567";
	else if (s[0] == '0' && strchr("bB", s[1]) != NULL && s[1] != '\0')
		base = 2, s += 2, ok = "01";
	else if (s[0] == '0' && s[1] != '\0')
		base = 8, s += 1, ok = "01234567";
	if (*s == '\0' || strspn(s, ok) != strlen(s))
		return 0;
	errno = 0;
	v = strtoull(s, &e, base);
	if (errno != 0 || (neg && v > 9223372036854775808ULL) || (!neg && v > 9223372036854775807ULL))
		return 0;
	snprintf(out, outsz, "%s%llu", neg && v > 0 ? "-" : "", v);
	return 1;
}

/* A number as a JSON literal: cJSON_CreateRaw keeps it as written. */
static cJSON *
number(const char *plain)
{
	char lit[64];
	double d;

	if (plain[0] != '.' && is_int(plain, lit, sizeof lit))
		return cJSON_CreateRaw(lit);
	if (!is_float(plain))
		return NULL;
	/* as written where JSON can write it so (1e0, 10E-1), else rewritten */
	if (rfc_number(plain, strlen(plain)) && strpbrk(plain, ".eE") != NULL)
		return cJSON_CreateRaw(plain);
	d = strtod(plain, NULL);
	snprintf(lit, sizeof lit, "%.17g", d);
	if (strpbrk(lit, ".eE") == NULL)
		strcat(lit, ".0");
	return cJSON_CreateRaw(lit);
}

/*
 * The tag each node was given in the text, or NULL: libyaml's documents
 * give every untagged node a default tag, so an explicit !!str 550 and a
 * plain 550 would look alike.  Nodes come in the events' order, which is
 * the documents' node order; etags holds them for the whole stream.
 */
static char **etags;
static size_t netags, base;

static const char *
etag(const yaml_document_t *d, const yaml_node_t *n)
{
	size_t i = base + (size_t)(n - d->nodes.start);

	return i < netags ? etags[i] : NULL;
}

static cJSON *
scalar(const yaml_document_t *d, const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;
	const char *tag = etag(d, n);
	const char *t = tag != NULL && strncmp(tag, TAG, sizeof TAG - 1) == 0 ? tag + sizeof TAG - 1 : NULL;
	int plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	size_t line = n->start_mark.line + 1;
	char *digits, *o;
	const char *i;
	cJSON *v = NULL;

	if (memchr(s, '\0', n->data.scalar.length) != NULL)
		fail("NUL in a scalar", line);
	/* quoted, block, "!" and !!str: a string */
	if ((tag == NULL && !plain) || (tag != NULL && strcmp(tag, "!") == 0) ||
	    (t != NULL && strcmp(t, "str") == 0))
		return cJSON_CreateString(s);
	if (tag != NULL && (t == NULL || (strcmp(t, "int") != 0 && strcmp(t, "float") != 0 &&
	    strcmp(t, "bool") != 0 && strcmp(t, "null") != 0)))
		fail("a tag kubectl does not write", line);
	if (word(s, "~ null Null NULL") || s[0] == '\0')
		v = cJSON_CreateNull();
	else if (word(s, "y Y yes Yes YES true True TRUE on On ON"))
		v = cJSON_CreateTrue();
	else if (word(s, "n N no No NO false False FALSE off Off OFF"))
		v = cJSON_CreateFalse();
	else if (word(s, ".inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF .nan .NaN .NAN"))
		fail("an infinity or NaN", line);
	else if (strcmp(s, "<<") == 0)
		fail("a merge key", line);
	else if (strchr("+-.0123456789", s[0]) != NULL) {
		digits = malloc(strlen(s) + 1);
		for (i = s, o = digits; *i != '\0'; i++)
			if (*i != '_')
				*o++ = *i;
		*o = '\0';
		v = number(digits);
		free(digits);
	}
	if (t != NULL) {
		/* a tag says what the scalar must be */
		if (v == NULL || (strcmp(t, "int") == 0 && (!cJSON_IsRaw(v) || strpbrk(v->valuestring, ".eE"))) ||
		    (strcmp(t, "float") == 0 && !cJSON_IsRaw(v)) ||
		    (strcmp(t, "bool") == 0 && !cJSON_IsBool(v)) ||
		    (strcmp(t, "null") == 0 && !cJSON_IsNull(v)))
			fail("a scalar that is not what its tag says", line);
		return v;
	}
	return v != NULL ? v : cJSON_CreateString(s);
}

static void
coll_tag(const yaml_document_t *d, const yaml_node_t *n, const char *want)
{
	const char *tag = etag(d, n);

	if (tag != NULL && strcmp(tag, want) != 0 && strcmp(tag, "!") != 0)
		fail("a tag kubectl does not write", n->start_mark.line + 1);
}

static cJSON *
node(yaml_document_t *d, const yaml_node_t *n, int depth)
{
	yaml_node_item_t *it;
	yaml_node_pair_t *p;
	cJSON *v, *k;

	if (depth > 1000)
		fail("nested too deep", n->start_mark.line + 1);
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return scalar(d, n);
	case YAML_SEQUENCE_NODE:
		coll_tag(d, n, TAG "seq");
		v = cJSON_CreateArray();
		for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			cJSON_AddItemToArray(v, node(d, yaml_document_get_node(d, *it), depth + 1));
		return v;
	case YAML_MAPPING_NODE:
		coll_tag(d, n, TAG "map");
		v = cJSON_CreateObject();
		for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			k = node(d, yaml_document_get_node(d, p->key), depth + 1);
			if (!cJSON_IsString(k))
				fail("a key that is not a string", n->start_mark.line + 1);
			if (cJSON_GetObjectItemCaseSensitive(v, k->valuestring) != NULL)
				fail("a duplicate key", n->start_mark.line + 1);
			cJSON_AddItemToObject(v, k->valuestring,
			    node(d, yaml_document_get_node(d, p->value), depth + 1));
			cJSON_Delete(k);
		}
		return v;
	default:
		fail("an empty node", n->start_mark.line + 1);
	}
	return NULL;
}

/* The events first: each node's tag as written, and no alias (libyaml's
 * documents would resolve one silently). */
static void
events(const char *p, size_t len)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	const yaml_char_t *tag;
	int done = 0;

	yaml_parser_initialize(&ps);
	yaml_parser_set_input_string(&ps, (const unsigned char *)p, len);
	while (!done) {
		if (!yaml_parser_parse(&ps, &ev))
			fail("not YAML", ps.problem_mark.line + 1);
		if (ev.type == YAML_ALIAS_EVENT)
			fail("an alias", ev.start_mark.line + 1);
		tag = ev.type == YAML_SCALAR_EVENT ? ev.data.scalar.tag :
		    ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.tag :
		    ev.type == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.tag : NULL;
		if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) {
			etags = realloc(etags, (netags + 1) * sizeof *etags);
			etags[netags++] = tag != NULL ? strdup((const char *)tag) : NULL;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ps);
}

static void
yaml_docs(const char *p, size_t len)
{
	yaml_parser_t ps;
	yaml_document_t d;
	yaml_node_t *root;
	cJSON *v;
	char *out;
	int docs = 0;

	events(p, len);
	yaml_parser_initialize(&ps);
	yaml_parser_set_input_string(&ps, (const unsigned char *)p, len);
	for (;;) {
		if (!yaml_parser_load(&ps, &d))
			fail("not YAML", ps.problem_mark.line + 1);
		if ((root = yaml_document_get_root_node(&d)) == NULL) {
			yaml_document_delete(&d);
			break;
		}
		v = node(&d, root, 0);
		/* "---" with nothing after it holds no document */
		if (!(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
		    etag(&d, root) == NULL && root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
			if ((out = cJSON_PrintUnformatted(v)) == NULL)
				fail("out of memory", 0);
			puts(out);
			free(out);
			docs++;
		}
		cJSON_Delete(v);
		base += (size_t)(d.nodes.top - d.nodes.start);
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&ps);
	if (docs == 0)
		fail("no document", 0);
}

int
main(int argc, char **argv)
{
	FILE *f = stdin;
	size_t len, i = 0;
	char *data;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-h") == 0)) {
		fputs("usage: whole [file]\n", stderr);
		return 2;
	}
	if (argc == 2 && strcmp(argv[1], "-") != 0) {
		name = argv[1];
		if ((f = fopen(name, "rb")) == NULL)
			fail(strerror(errno), 0);
	}
	data = slurp(f, &len);
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && isspace((unsigned char)data[i]))
		i++;
	if (i == len)
		fail("empty input", 0);
	if (data[i] == '{' || data[i] == '[')
		json_docs(data + i, len - i);
	else
		yaml_docs(data, len);
	free(data);
	if (fflush(stdout) != 0 || ferror(stdout))
		fail("cannot write", 0);
	return 0;
}
