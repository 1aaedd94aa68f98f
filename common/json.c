/*
 * Strict JSON, a chunk at a time.  Every byte is checked (RFC 8259 grammar,
 * string escapes, cJSON's surrogate rules), but only the members the keeper
 * (keep.c) keeps are copied out and handed to cJSON; the rest
 * (status.images, ...) is skipped.
 *
 * Newlines are counted while skipping white space: anywhere else a raw newline
 * is an error, so the count is exact at every error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

/* Below cJSON's nesting limit (1000): what passes here, cJSON parses. */
#define DEPTH_MAX 500

struct js {
	struct reader *r;
	const char *p, *e;   /* the unread bytes of r->buf */
	size_t line, lstart; /* current line (1-based) and input offset of its start */
	int depth;
	int capturing;       /* copying bytes from cfrom on into cbuf */
	const char *cfrom;
	char *cbuf;
	size_t clen, ccap;
	const struct scan *sc;
};

static void
jtrunc(struct js *s)
{
	die("%s: truncated JSON: input ends inside a value (%zu bytes read)", s->r->name,
	    s->r->off + s->r->len);
}

static void
jbad(struct js *s, const char *p)
{
	size_t col = s->r->off + (size_t)(p - s->r->buf) - s->lstart + 1;
	char near[2] = { *p, '\0' };

	if (*p == '\0')
		die("%s:%zu:%zu: NUL byte in JSON input", s->r->name, s->line, col);
	die("%s:%zu:%zu: malformed JSON near %s", s->r->name, s->line, col, qstr(near));
}

/*
 * What is copied out is a kind, a name, a label, a flag: Kubernetes caps label
 * values at 63 bytes and names at 253.  A larger one is not kubectl output,
 * and refusing it keeps memory bounded whatever the input holds.
 */
#define CAPTURE_MAX 65536

static void
cappend(struct js *s, const char *from, size_t n)
{
	if (s->clen + n > CAPTURE_MAX)
		die("%s:%zu: a key or value gpudrv reads is over %d bytes: not kubectl output",
		    s->r->name, s->line, CAPTURE_MAX);
	if (s->clen + n + 1 > s->ccap) {
		while (s->clen + n + 1 > s->ccap)
			s->ccap = s->ccap ? s->ccap * 2 : 4096;
		s->cbuf = xrealloc(s->cbuf, s->ccap);
	}
	memcpy(s->cbuf + s->clen, from, n);
	s->clen += n;
	s->cbuf[s->clen] = '\0';
}

/* The next chunk, s->p having reached s->e; 0 at the end of the input. */
static int
jfill(struct js *s)
{
	if (s->capturing) {
		cappend(s, s->cfrom, (size_t)(s->e - s->cfrom));
		s->cfrom = s->r->buf;
	}
	reader_next(s->r);
	s->p = s->r->buf;
	s->e = s->r->buf + s->r->len;
	return s->r->len > 0;
}

/*
 * Eight bytes at a time: zero_bytes() has the high bit set in exactly the
 * bytes of x that are zero.  On little-endian machines the first such byte is
 * found with ctz; elsewhere the bytes are looked at one by one.
 */
#define ONES 0x0101010101010101ULL
#define LOW7 0x7f7f7f7f7f7f7f7fULL

static uint64_t
zero_bytes(uint64_t x)
{
	return ~(((x & LOW7) + LOW7) | x | LOW7);
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FIRST_BYTE(m) ((size_t)__builtin_ctzll(m) / 8)
#endif

/* The next byte that is not white space, not consumed; -1 at the end. */
static int
jws(struct js *s)
{
	for (;;) {
		const char *p = s->p, *e = s->e;

		while (p < e) {
			switch (*p) {
			case '\n':
				s->line++;
				s->lstart = s->r->off + (size_t)(p - s->r->buf) + 1;
				p++;
				/* the indentation, 8 bytes at a time */
				while (e - p >= 8) {
					uint64_t v, m;

					memcpy(&v, p, 8);
					m = ~zero_bytes(v ^ (ONES * ' ')) & ~LOW7;
					if (m == 0) {
						p += 8;
						continue;
					}
#ifdef FIRST_BYTE
					p += FIRST_BYTE(m);
#endif
					break;
				}
				continue;
			case ' ': case '\t': case '\r':
				p++;
				continue;
			}
			s->p = p;
			return (unsigned char)*p;
		}
		s->p = p;
		if (!jfill(s))
			return -1;
	}
}

static int
jnext(struct js *s)
{
	int c = jws(s);

	if (c < 0)
		jtrunc(s);
	return c;
}

static int
jget(struct js *s)
{
	if (s->p == s->e && !jfill(s))
		jtrunc(s);
	return (unsigned char)*s->p++;
}

static int
jpeek(struct js *s)
{
	if (s->p == s->e && !jfill(s))
		return -1;
	return (unsigned char)*s->p;
}

static unsigned
jhex4(struct js *s)
{
	unsigned v = 0;
	int i, c;

	for (i = 0; i < 4; i++) {
		c = jget(s);
		if (c >= '0' && c <= '9')
			v = v << 4 | (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v << 4 | (unsigned)((c | 0x20) - 'a' + 10);
		else
			jbad(s, s->p - 1);
	}
	return v;
}

/* After a backslash in a string.  Lone surrogates are refused, as cJSON does. */
static void
jesc(struct js *s)
{
	unsigned u;

	switch (jget(s)) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return;
	case 'u':
		break;
	default:
		jbad(s, s->p - 1);
	}
	u = jhex4(s);
	/* cJSON's strings end at a NUL: "a\u0000b" would read as "a". */
	if (u == 0)
		die("%s:%zu: \\u0000 (NUL) in a JSON string", s->r->name, s->line);
	if (u >= 0xdc00 && u <= 0xdfff)
		jbad(s, s->p - 1);
	if (u >= 0xd800 && u <= 0xdbff) {
		if (jget(s) != '\\')
			jbad(s, s->p - 1);
		if (jget(s) != 'u')
			jbad(s, s->p - 1);
		u = jhex4(s);
		if (u < 0xdc00 || u > 0xdfff)
			jbad(s, s->p - 1);
	}
}

/*
 * One UTF-8 sequence at s->p, whose lead byte is >= 0x80 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF).
 */
static void
jutf8(struct js *s)
{
	size_t col = s->r->off + (size_t)(s->p - s->r->buf) - s->lstart + 1;
	unsigned lo = 0x80, hi = 0xbf;
	int c = jget(s), n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 1;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		n = -3; /* not a lead byte */
	while (n-- > 0) {
		c = jget(s);
		if ((unsigned)c < lo || (unsigned)c > hi)
			n = -2;
		lo = 0x80, hi = 0xbf;
	}
	if (n < -1)
		die("%s:%zu:%zu: invalid UTF-8 in a JSON string", s->r->name, s->line, col);
}

/* The rest of a string, after its opening quote. */
static void
jstr(struct js *s)
{
	for (;;) {
		const char *p = s->p, *e = s->e;
		uint64_t v, m;

		while (e - p >= 8) {
			memcpy(&v, p, 8);
			/* '"', '\\', a control byte (top three bits clear) or non-ASCII */
			m = zero_bytes(v ^ (ONES * '"')) | zero_bytes(v ^ (ONES * '\\')) |
			    zero_bytes(v & (ONES * 0xe0)) | (v & (ONES * 0x80));
			if (m == 0) {
				p += 8;
				continue;
			}
#ifdef FIRST_BYTE
			p += FIRST_BYTE(m);
#else
			while (*p != '"' && *p != '\\' && (unsigned char)*p - 0x20u < 0x60u)
				p++;
#endif
			goto found;
		}
		while (p < e && *p != '"' && *p != '\\' && (unsigned char)*p - 0x20u < 0x60u)
			p++;
		if (p < e) {
found:
			if ((unsigned char)*p >= 0x80) {
				s->p = p;
				jutf8(s);
				continue;
			}
			s->p = p + 1;
			if (*p == '"')
				return;
			if (*p != '\\')
				jbad(s, p);
			jesc(s);
			continue;
		}
		s->p = p;
		if (!jfill(s))
			jtrunc(s);
	}
}

static int
digit(int c)
{
	return c >= '0' && c <= '9';
}

static void
jdigits(struct js *s)
{
	int c = jpeek(s);

	if (c < 0)
		jtrunc(s);
	if (!digit(c))
		jbad(s, s->p);
	while (digit(c)) {
		s->p++;
		c = jpeek(s);
	}
}

static void
jnum(struct js *s)
{
	int c;

	if (*s->p == '-')
		s->p++;
	c = jpeek(s);
	if (c == '0') {
		s->p++;
	} else {
		jdigits(s);
	}
	c = jpeek(s);
	if (c == '.') {
		s->p++;
		jdigits(s);
		c = jpeek(s);
	}
	if (c == 'e' || c == 'E') {
		s->p++;
		c = jpeek(s);
		if (c == '+' || c == '-')
			s->p++;
		jdigits(s);
	}
}

static void
jlit(struct js *s, const char *w)
{
	for (; *w != '\0'; w++) {
		if (s->p == s->e && !jfill(s))
			jtrunc(s);
		if (*s->p != *w)
			jbad(s, s->p);
		s->p++;
	}
}

static void
jdeeper(struct js *s)
{
	if (++s->depth > DEPTH_MAX)
		die("%s:%zu:%zu: JSON nested too deep (more than %d levels)", s->r->name,
		    s->line, s->r->off + (size_t)(s->p - s->r->buf) - s->lstart + 1, DEPTH_MAX);
	s->p++;
}

typedef void member_fn(struct js *s, void *ctx);

static void jvalue(struct js *s);

/*
 * The members of the object at s->p, each value left to on() (which must
 * consume it); with kp, each key, decoded as cJSON would (escapes; a \u0000
 * ends it), first given to the keeper.  on NULL: skip them all.
 */
static void
jobject(struct js *s, struct kept *kp, member_fn *on, void *ctx)
{
	int c;

	jdeeper(s);
	c = jnext(s);
	if (c == '}')
		goto done;
	for (;;) {
		if (c != '"')
			jbad(s, s->p);
		if (kp == NULL) {
			s->p++;
			jstr(s);
		} else {
			const char *name;
			cJSON *dec = NULL;
			size_t n;

			s->capturing = 1;
			s->cfrom = s->p;
			s->clen = 0;
			s->p++;
			jstr(s);
			cappend(s, s->cfrom, (size_t)(s->p - s->cfrom));
			s->capturing = 0;
			if (memchr(s->cbuf, '\\', s->clen) != NULL) {
				dec = cJSON_ParseWithLength(s->cbuf, s->clen);
				name = cJSON_IsString(dec) ? dec->valuestring : "";
				n = strlen(name);
			} else {
				name = s->cbuf + 1;
				n = s->clen - 2;
			}
			keep_key(kp, name, n);
			cJSON_Delete(dec);
		}
		if (jnext(s) != ':')
			jbad(s, s->p);
		s->p++;
		if (on != NULL)
			on(s, ctx);
		else
			jvalue(s);
		c = jnext(s);
		if (c == '}')
			break;
		if (c != ',')
			jbad(s, s->p);
		s->p++;
		c = jnext(s);
	}
done:
	s->p++;
	s->depth--;
}

/* An array opens: 1 if an element follows, 0 if it closed at once. */
static int
jarray_first(struct js *s)
{
	jdeeper(s);
	if (jnext(s) != ']')
		return 1;
	s->p++;
	s->depth--;
	return 0;
}

/* After an array element: 1 if another follows, 0 at the closing bracket. */
static int
jarray_more(struct js *s)
{
	int c = jnext(s);

	if (c == ',') {
		s->p++;
		return 1;
	}
	if (c != ']')
		jbad(s, s->p);
	s->p++;
	s->depth--;
	return 0;
}

/* One value, checked and skipped. */
static void
jvalue(struct js *s)
{
	int c = jnext(s);

	switch (c) {
	case '{':
		jobject(s, NULL, NULL, NULL);
		return;
	case '[':
		if (jarray_first(s))
			do
				jvalue(s);
			while (jarray_more(s));
		return;
	case '"':
		s->p++;
		jstr(s);
		return;
	case 't':
		jlit(s, "true");
		return;
	case 'f':
		jlit(s, "false");
		return;
	case 'n':
		jlit(s, "null");
		return;
	default:
		if (c == '-' || digit(c)) {
			jnum(s);
			return;
		}
		jbad(s, s->p);
	}
}

static const char *
skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * cJSON keeps a number as a double only, so 1.0 and 1e0 would read as the
 * integer 1: each number item gets its literal, as written, in its
 * valuestring (cJSON_Delete frees it, cJSON_Duplicate copies it), and
 * access.c takes only an integer literal for an integer.  p is the text
 * cJSON parsed into v, already checked by the scanner; the end of v's text
 * is returned.  The recursion is as deep as the nesting (DEPTH_MAX).
 */
static const char *
num_texts(cJSON *v, const char *p)
{
	const char *q;
	cJSON *c;
	int close;

	p = skip_space(p);
	switch (*p) {
	case '{': case '[':
		close = *p == '{' ? '}' : ']';
		p = skip_space(p + 1);
		for (c = v->child; *p != close; c = c->next) {
			if (close == '}') {
				p = num_texts(NULL, p);        /* the key */
				p = skip_space(p) + 1;         /* ':' */
			}
			p = skip_space(num_texts(c, p));
			if (*p == ',')
				p = skip_space(p + 1);
		}
		return p + 1;
	case '"':
		for (p++; *p != '"'; p++)
			if (*p == '\\')
				p++;
		return p + 1;
	case 't': case 'n':
		return p + 4;
	case 'f':
		return p + 5;
	}
	for (q = p; *q != '\0' && strchr("+-.0123456789eE", *q) != NULL; q++)
		;
	if (cJSON_IsNumber(v) && v->valuestring == NULL)
		v->valuestring = xstrndup(p, (size_t)(q - p));
	return q;
}

/* One value, checked, copied out and given to cJSON. */
static cJSON *
jcapture(struct js *s)
{
	cJSON *v;

	jnext(s);
	s->capturing = 1;
	s->cfrom = s->p;
	s->clen = 0;
	jvalue(s);
	cappend(s, s->cfrom, (size_t)(s->p - s->cfrom));
	s->capturing = 0;
	v = cJSON_ParseWithLengthOpts(s->cbuf, s->clen, NULL, 0);
	if (v == NULL)
		die("%s: JSON that cJSON does not read (line %zu)", s->r->name, s->line);
	num_texts(v, s->cbuf);
	tree_dups(v, s->r->name);
	return v;
}

/* The number of members or elements of the value at s->p, checked. */
static void
count_member(struct js *s, void *ctx)
{
	jvalue(s);
	++*(double *)ctx;
}

static cJSON *
jcount(struct js *s)
{
	double n = 0;

	if (jnext(s) == '{') {
		jobject(s, NULL, count_member, &n);
	} else if (jnext(s) == '[') {
		if (jarray_first(s))
			do {
				jvalue(s);
				n++;
			} while (jarray_more(s));
	} else {
		return jcapture(s);
	}
	return cJSON_CreateNumber(n);
}

/* A member of a kept object: its value as the keeper says. */
static void
kept_member(struct js *s, void *ctx)
{
	struct kept *kp = ctx, sub;
	const struct kspec *each;
	const char *kind;
	cJSON *list;
	size_t i = 0;
	int c = jnext(s);

	switch (keep_how(kp, c == '{', c == '[', s->r->name)) {
	case KEEP_NONE:
		jvalue(s);
		return;
	case KEEP_VALUE:
		keep_put(kp, jcapture(s));
		return;
	case KEEP_COUNT:
		keep_put(kp, jcount(s));
		return;
	case KEEP_OBJECT:
		keep_open(&sub, kp->at->sub, 0);
		jobject(s, &sub, kept_member, &sub);
		keep_put(kp, sub.obj);
		return;
	case KEEP_ITEMS:
		kind = j_str(kp->obj, "kind");
		if (jarray_first(s))
			do {
				if (jnext(s) == '{') {
					keep_open(&sub, s->sc->item, 0);
					jobject(s, &sub, kept_member, &sub);
				} else {
					sub.obj = jcapture(s);
				}
				keep_item(s->sc, sub.obj, &i, kind);
			} while (jarray_more(s));
		keep_put(kp, cJSON_CreateArray());
		return;
	case KEEP_EACH:
		each = keep_each(kp);
		list = cJSON_CreateArray();
		if (jarray_first(s))
			do {
				if (jnext(s) == '{') {
					keep_open(&sub, each, 0);
					jobject(s, &sub, kept_member, &sub);
				} else {
					sub.obj = jcapture(s);
				}
				cJSON_AddItemToArray(list, sub.obj);
			} while (jarray_more(s));
		keep_put(kp, list);
		return;
	}
}

static void
jinit(struct js *s, struct reader *r, const struct scan *sc)
{
	memset(s, 0, sizeof *s);
	s->r = r;
	s->sc = sc;
	s->p = r->buf;
	s->e = r->buf + r->len;
	s->line = 1;
	if (r->len >= 3 && memcmp(r->buf, "\xef\xbb\xbf", 3) == 0)
		s->p += 3;
}

/*
 * Before each document: 1 if one follows.  Only white space may follow the
 * last one, or anything at all the first, unless the scan takes many.
 */
static int
jmore(struct js *s, size_t docs)
{
	if (jws(s) < 0)
		return 0;
	if (docs > 0 && !s->sc->many && (*s->p == '{' || *s->p == '['))
		die("%s:%zu:%zu: more than one JSON document", s->r->name, s->line,
		    s->r->off + (size_t)(s->p - s->r->buf) - s->lstart + 1);
	if (docs > 0 && !s->sc->many)
		jbad(s, s->p);
	return 1;
}

void
json_stream(struct reader *r, const struct scan *sc)
{
	struct js s;
	struct kept top;
	size_t docs = 0;

	jinit(&s, r, sc);
	while (jmore(&s, docs++)) {
		top.obj = NULL;
		if (jnext(&s) == '{') {
			keep_open(&top, sc->top, 1);
			jobject(&s, &top, kept_member, &top);
		} else {
			jvalue(&s);
		}
		/* One document expected: not done until nothing follows. */
		if (!sc->many)
			jmore(&s, docs);
		sc->doc_fn(sc, top.obj);
		cJSON_Delete(top.obj);
	}
	free(s.cbuf);
}
