/*
 * Strict JSON, a chunk at a time.  Every byte is checked (RFC 8259 grammar,
 * string escapes, cJSON's surrogate rules), but only the members the keeper
 * (keep.c) keeps are built into cJSON items, as cJSON's parser would have
 * built them; the rest (status.images, ...) is skipped.
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
	int building;        /* building the value that starts at input offset vstart */
	size_t vstart;
	int unread;          /* it holds a number cJSON's parser would not have read */
	size_t escapes;      /* backslashes met in strings so far */
	const char *key;     /* the key of the member whose value comes next (in cbuf) */
	size_t keylen;
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
too_long(const struct js *s, size_t n)
{
	if (n > CAPTURE_MAX)
		die("%s:%zu: a key or value gpudrv reads is over %d bytes: not kubectl output",
		    s->r->name, s->line, CAPTURE_MAX);
}

/* The input offset of s->p. */
static size_t
offset(const struct js *s)
{
	return s->r->off + (size_t)(s->p - s->r->buf);
}

/*
 * What a scan holds on the heap between its steps, the capture buffer and
 * the top level kept so far, is reachable from here too: a die() deferred
 * out of a scan that keeps nothing (doc_is_list's) then leaks nothing, and
 * the next scan (scans are never nested) frees it.
 */
static char *held_cbuf;
static cJSON *held_top;

static void
cappend(struct js *s, const char *from, size_t n)
{
	too_long(s, s->clen + n);
	if (s->clen + n + 1 > s->ccap) {
		while (s->clen + n + 1 > s->ccap)
			s->ccap = s->ccap ? s->ccap * 2 : 4096;
		held_cbuf = s->cbuf = xrealloc(s->cbuf, s->ccap);
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
	if (s->building)
		too_long(s, s->r->off + s->r->len - s->vstart);
	reader_next(s->r);
	s->p = s->r->buf;
	s->e = s->r->buf + s->r->len;
	return s->r->len > 0;
}

/*
 * The scanner's innermost steps (white space, strings, the next byte) are
 * inlined where they are used: a call a token cost more than the step.
 */
#ifdef __GNUC__
#define INNER static inline __attribute__((always_inline))
#else
#define INNER static inline
#endif

/*
 * Most bytes are indentation or inside strings, so those two runs are
 * scanned a block at a time: a mask of the block's bytes that end the run,
 * and first_byte() the first of them.  16 bytes with SSE2 (every x86-64 has
 * it), else 8 in a 64-bit word.
 */
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>

#define BLOCK 16
typedef unsigned bmask; /* bit i: byte i */

static bmask
movemask(__m128i m)
{
	return (bmask)_mm_movemask_epi8(m);
}

/* The bytes of p[0..BLOCK) that are not a space. */
INNER bmask
not_spaces(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	return movemask(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) ^ 0xffffu;
}

/* The bytes of p[0..BLOCK) a string's plain run stops at: '"', '\\', a control byte, non-ASCII. */
INNER bmask
string_stops(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);

	/* as signed bytes, control bytes and non-ASCII are all below 0x20 */
	return movemask(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
	    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
}

INNER size_t
first_byte(bmask m)
{
	return (size_t)__builtin_ctz(m);
}
#else
#define BLOCK 8
typedef uint64_t bmask; /* the high bit of byte i, each byte apart */
#define ONES 0x0101010101010101ULL
#define LOW7 0x7f7f7f7f7f7f7f7fULL

/* The high bit set in exactly the bytes of x that are zero (no carry crosses a byte). */
static uint64_t
zero_bytes(uint64_t x)
{
	return ~(((x & LOW7) + LOW7) | x | LOW7);
}

INNER bmask
not_spaces(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return ~zero_bytes(v ^ (ONES * ' ')) & ~LOW7;
}

INNER bmask
string_stops(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	/* control bytes have their top three bits clear */
	return zero_bytes(v ^ (ONES * '"')) | zero_bytes(v ^ (ONES * '\\')) |
	    zero_bytes(v & (ONES * 0xe0)) | (v & (ONES * 0x80));
}

/* The mask's bytes are in the block's order, whatever the machine's byte order. */
INNER size_t
first_byte(bmask m)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (size_t)__builtin_ctzll(m) / 8;
#else
	unsigned char b[8];
	size_t i = 0;

	memcpy(b, &m, 8);
	while (b[i] == 0)
		i++;
	return i;
#endif
}
#endif

/* The next byte that is not white space, not consumed; -1 at the end. */
INNER int
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
				/* the indentation, a block at a time */
				while (e - p >= BLOCK) {
					bmask m = not_spaces(p);

					if (m == 0) {
						p += BLOCK;
						continue;
					}
					p += first_byte(m);
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

INNER int
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

	s->escapes++;
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
INNER void
jstr(struct js *s)
{
	for (;;) {
		const char *p = s->p, *e = s->e;

		while (e - p >= BLOCK) {
			bmask m = string_stops(p);

			if (m == 0) {
				p += BLOCK;
				continue;
			}
			p += first_byte(m);
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

/* The token at s->p, checked by scan, copied into s->cbuf (s->clen bytes). */
static void
jtext(struct js *s, void (*scan)(struct js *))
{
	s->capturing = 1;
	s->cfrom = s->p;
	s->clen = 0;
	scan(s);
	cappend(s, s->cfrom, (size_t)(s->p - s->cfrom));
	s->capturing = 0;
}

static void
jquoted(struct js *s)
{
	s->p++;
	jstr(s);
}

/*
 * The string at s->p, checked and decoded as cJSON decodes it (escapes; a
 * \u0000 would end it), in s->cbuf: its bytes returned, their number in *n.
 */
static const char *
jstring(struct js *s, size_t *n)
{
	size_t escapes = s->escapes;
	cJSON *dec;

	jtext(s, jquoted);
	if (s->escapes == escapes) {
		s->cbuf[s->clen - 1] = '\0';
		*n = s->clen - 2;
		return s->cbuf + 1;
	}
	/* never longer than its literal */
	dec = cJSON_ParseWithLength(s->cbuf, s->clen);
	*n = cJSON_IsString(dec) ? strlen(dec->valuestring) : 0;
	memcpy(s->cbuf, *n ? dec->valuestring : "", *n + 1);
	cJSON_Delete(dec);
	return s->cbuf;
}

typedef void member_fn(struct js *s, void *ctx);

static void jvalue(struct js *s);

/*
 * The members of the object at s->p, each value left to on() (which must
 * consume it); with keyed, each key decoded first into s->key and
 * s->keylen.  on NULL: skip them all.
 */
static void
jobject(struct js *s, int keyed, member_fn *on, void *ctx)
{
	int c;

	jdeeper(s);
	c = jnext(s);
	if (c == '}')
		goto done;
	for (;;) {
		if (c != '"')
			jbad(s, s->p);
		if (keyed) {
			s->key = jstring(s, &s->keylen);
		} else {
			s->p++;
			jstr(s);
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
		jobject(s, 0, NULL, NULL);
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

static cJSON *jbuild(struct js *s, int nested);

/* A member of an object being built: the child gets the key, as in cJSON's parser. */
static void
build_member(struct js *s, void *ctx)
{
	char *key = xstrndup(s->key, s->keylen);
	cJSON *v = jbuild(s, 1);

	v->string = key;
	cJSON_AddItemToArray(ctx, v);
}

/*
 * A number as cJSON's parser reads it, parsed by cJSON from its literal.  A
 * cJSON that reads less than the whole literal (before Debian's fix of
 * CVE-2023-26819, 63 bytes at most) would have stopped there inside a value
 * and failed, so the value is refused (unread); a number that is the whole
 * value it reads as far as it goes, as before.  cJSON keeps a number as a
 * double only, so 1.0 and 1e0 would read as the integer 1: each number item
 * gets its literal, as written, in its valuestring (cJSON_Delete frees it,
 * cJSON_Duplicate copies it), and access.c takes only an integer literal for
 * an integer.
 */
static cJSON *
jnumber(struct js *s, int nested)
{
	const char *end = NULL;
	cJSON *v;

	jtext(s, jnum);
	v = cJSON_ParseWithLengthOpts(s->cbuf, s->clen, &end, 0);
	if (v == NULL || (nested && end != s->cbuf + s->clen))
		s->unread = 1;
	if (v == NULL)
		v = cJSON_CreateNull();
	else
		v->valuestring = xstrndup(s->cbuf, s->clen);
	return v;
}

/* One value, checked and built as cJSON's parser would have built it. */
static cJSON *
jbuild(struct js *s, int nested)
{
	const char *str;
	size_t n;
	cJSON *v;
	int c = jnext(s);

	switch (c) {
	case '{':
		v = cJSON_CreateObject();
		jobject(s, 1, build_member, v);
		return v;
	case '[':
		v = cJSON_CreateArray();
		if (jarray_first(s))
			do
				cJSON_AddItemToArray(v, jbuild(s, 1));
			while (jarray_more(s));
		return v;
	case '"':
		str = jstring(s, &n);
		return cJSON_CreateString(str);
	case 't':
		jlit(s, "true");
		return cJSON_CreateTrue();
	case 'f':
		jlit(s, "false");
		return cJSON_CreateFalse();
	case 'n':
		jlit(s, "null");
		return cJSON_CreateNull();
	}
	if (c != '-' && !digit(c))
		jbad(s, s->p);
	return jnumber(s, nested);
}

/*
 * The value a kept key holds, checked and built as cJSON's parser would
 * have read its text: no longer than CAPTURE_MAX, and no key in it given
 * twice.
 */
static cJSON *
jcapture(struct js *s)
{
	cJSON *v;

	jnext(s);
	s->building = 1;
	s->vstart = offset(s);
	s->unread = 0;
	v = jbuild(s, 0);
	s->building = 0;
	too_long(s, offset(s) - s->vstart);
	if (s->unread)
		die("%s: JSON that cJSON does not read (line %zu)", s->r->name, s->line);
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
		jobject(s, 0, count_member, &n);
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
	int c;

	keep_key(kp, s->key, s->keylen);
	c = jnext(s);

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
		jobject(s, 1, kept_member, &sub);
		keep_put(kp, sub.obj);
		return;
	case KEEP_ITEMS:
		kind = j_str(kp->obj, "kind");
		if (jarray_first(s))
			do {
				if (jnext(s) == '{') {
					keep_open(&sub, s->sc->item, 0);
					jobject(s, 1, kept_member, &sub);
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
					jobject(s, 1, kept_member, &sub);
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

	free(held_cbuf);
	cJSON_Delete(held_top);
	held_cbuf = NULL;
	held_top = NULL;
	jinit(&s, r, sc);
	while (jmore(&s, docs++)) {
		top.obj = NULL;
		if (jnext(&s) == '{') {
			keep_open(&top, sc->top, 1);
			held_top = top.obj;
			jobject(&s, 1, kept_member, &top);
		} else {
			jvalue(&s);
		}
		/* One document expected: not done until nothing follows. */
		if (!sc->many)
			jmore(&s, docs);
		sc->doc_fn(sc, top.obj);
		cJSON_Delete(top.obj);
		held_top = NULL;
	}
	free(s.cbuf);
	held_cbuf = NULL;
}
