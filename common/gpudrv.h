/*
 * gpudrv: shared code of the gpudrv commands.
 * Each concern lives in one file of common/; this header declares them all.
 */
#ifndef GPUDRV_H
#define GPUDRV_H

#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

/* The exit-code contract of every gpudrv command. */
enum { EXIT_CLEAN = 0, EXIT_FINDINGS = 1, EXIT_TROUBLE = 2 };

/* err.c: messages on stderr prefixed with the program name. */
extern const char *progname;
void setprogname(const char *argv0);
void die(const char *fmt, ...);     /* exit 2; a format ending in ':' appends strerror */
void warnf(const char *fmt, ...);   /* a format ending in ':' appends strerror */
void usage_exit(const char *usage); /* "usage: prog ..." on stderr, exit 2 */
int nextopt(int argc, char **argv, const char *opts, const char *usage); /* getopt */
int fshut(FILE *f, const char *name); /* flush and check; 0 or 2 */
const char *qstr(const char *s);    /* quoted, escaped, bounded copy for messages */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrndup(const char *s, size_t n);

/* input.c: whole input from a file or stdin. */
struct input {
	char *data;       /* NUL-terminated copy of the bytes read */
	size_t len;
	const char *name; /* "<stdin>" or the path, for messages */
};
void input_read(struct input *in, const char *path); /* NULL or "-" is stdin; dies on error */
void input_free(struct input *in);
void input_where(const struct input *in, size_t off, size_t *line, size_t *col);

/* doc.c: kubectl JSON or YAML (detected from the content) as one cJSON tree. */
cJSON *doc_parse(const struct input *in); /* dies with file:line:col on error */
const cJSON *j_get(const cJSON *obj, const char *key); /* case-sensitive */
const char *j_str(const cJSON *obj, const char *key);  /* string member or NULL */
const cJSON *j_path(const cJSON *obj, const char *dotted); /* "metadata.name" */
int j_int(const cJSON *obj, const char *key, long *out);   /* integral number: 1 */
const char *j_type(const cJSON *item);                     /* "string", "object", ... */

/*
 * Streaming: an input read a chunk at a time (memory does not grow with its
 * size), and of a kubectl document only the members that are asked for.
 * reader_open reads up to the first non-space byte: reader_is_json tells the
 * format as doc_parse does.  The scanners hand each item of the top-level
 * "items" list to item(), as an object of the asked-for keys only (a
 * non-object item whole), and free it after; they return the top-level
 * object likewise, its "items" an empty list if it was one, or NULL if the
 * top level is not a mapping.  Every byte is checked as strictly as
 * doc_parse checks it, with the same messages: both die on bad input.
 */
struct reader {
	int fd;
	const char *name; /* "<stdin>" or the path, for messages */
	char *buf;        /* the current chunk */
	size_t len, cap;  /* bytes in buf, and its size */
	size_t pos;       /* bytes of buf already handed out (YAML) */
	size_t off;       /* input offset of buf[0] */
	int eof;
};
/* Members to keep; sub: of an object value keep only these, NULL: all of it. */
struct kspec {
	const char *key; /* NULL ends the list */
	const struct kspec *sub;
};
struct stream_cb {
	const struct kspec *keys;
	void (*item)(cJSON *item, size_t index, void *arg);
	void *arg;
};
void reader_open(struct reader *r, const char *path); /* dies on error or empty input */
int reader_is_json(const struct reader *r);
size_t text_start(const char *p, size_t n); /* offset past a UTF-8 BOM and white space */
size_t reader_next(struct reader *r); /* the next chunk into buf; 0 at the end */
void reader_close(struct reader *r);
cJSON *json_stream(struct reader *r, const struct stream_cb *cb); /* jstream.c */
cJSON *yaml_stream(struct reader *r, const struct stream_cb *cb); /* doc.c */
void json_check(const struct input *in); /* jstream.c: what doc_parse checks JSON with */

/* tag.c: the precompiled driver image tag, built in exactly one place. */
#define TAG_MAX 128
#define L_PRESENT "nvidia.com/gpu.present"
#define L_MAJOR   "nvidia.com/cuda.driver.major"
#define L_MINOR   "nvidia.com/cuda.driver.minor"
#define L_REV     "nvidia.com/cuda.driver.rev"
#define L_KERNEL  "feature.node.kubernetes.io/kernel-version.full"
#define L_OSID    "feature.node.kubernetes.io/system-os_release.ID"
#define L_OSVER   "feature.node.kubernetes.io/system-os_release.VERSION_ID"
#define L_STATE   "nvidia.com/gpu-driver-upgrade-state"

int tag_charset_ok(const char *s);   /* non-empty, only [A-Za-z0-9_.-] */
int tag_valid(const char *s);        /* OCI tag grammar */
/* Both return 0, or the 1-based number of the faulty part with *why set. */
int ostag_build(char *out, size_t outsz, const char *id, const char *version_id,
                const char **why);
int tag_build(char *out, size_t outsz, const char *branch, const char *kernel,
              const char *ostag, const char **why);

/* node.c: reading Nodes. */
struct tagfault {
	const char *label;  /* the label at fault, or NULL */
	const char *kind;   /* "missing", "empty", "not-a-string", "invalid" */
	const char *detail; /* human words */
};
struct tag_override {
	const char *branch; /* use instead of the node's driver major, or NULL */
	const char *kernel; /* use instead of the node's kernel, or NULL */
};
int dns_subdomain_ok(const char *s);
const char *node_name(const cJSON *node);            /* valid name or NULL */
const cJSON *node_labels(const cJSON *node);          /* object or NULL */
int node_label(const cJSON *node, const char *key, const char **val, struct tagfault *f);
/* The tag into out; also its matrix row (branch,kernel,os-tag) into row if not NULL. */
int node_tag(const cJSON *node, const struct tag_override *ov, char *out, size_t outsz,
             char *row, size_t rowsz, struct tagfault *f);
int node_unschedulable(const cJSON *node);
/* Calls fn for each Node of a Node, NodeList or List document; dies on a non-Node item. */
typedef void (*node_fn)(const cJSON *node, size_t index, void *arg);
size_t nodes_each(const cJSON *doc, const char *docname, int *was_list, node_fn fn, void *arg);
/*
 * The same, streamed (node.c): each Node holds only its kind, metadata.name,
 * the labels of tag.c (L_*) and, if want_spec, spec.unschedulable.  fn is called as items come, before the list is known to
 * be good (its kind comes after its items in kubectl's key order), so callers
 * buffer what they print until nodes_stream returns; discard (may be NULL)
 * is called if what fn was given must be forgotten (a Node with an "items"
 * member).  *was_list is right whenever fn is called.  Dies as doc_parse and nodes_each do, with the same messages.
 */
struct node_stream {
	node_fn fn;
	void (*discard)(void *arg);
	void *arg;
	int want_spec;
};
size_t nodes_stream(const char *path, const struct node_stream *ns, int *was_list);

/* matrix.c: the set of tags that exist (CSV matrix, tag list, or skopeo JSON). */
struct matrix;
struct matrix *matrix_load(const char *path, int report_dups); /* dies on error */
int matrix_has(const struct matrix *m, const char *tag);
size_t matrix_rows(const struct matrix *m);   /* data rows, header and blanks excluded */
void matrix_free(struct matrix *m);

/* strset.c: a hash set of strings. */
struct strset;
struct strset *strset_new(void);
int strset_add(struct strset *s, const char *str, size_t line); /* 0 added, else line of first */
size_t strset_get(const struct strset *s, const char *str);     /* line stored, or 0 */
void strset_free(struct strset *s);

/* lines.c: reading text line by line, CRLF tolerated. */
struct lines {
	FILE *f;
	const char *name;
	char *buf;
	size_t cap;
	size_t lineno;
};
void lines_open(struct lines *l, const char *path); /* NULL or "-" is stdin */
char *lines_next(struct lines *l, size_t *len);      /* NULL at end; dies on read error */
void lines_close(struct lines *l);
int split_fields(char *s, char **f, int max); /* on single spaces; count, or -1 if > max */

/* selector.c: Kubernetes label selectors. */
/* 0 if sel is a valid LabelSelector (NULL and null are: they select nothing),
 * else -1 with why filled in. */
int selector_check(const cJSON *sel, char *why, size_t whysz);
/* Does a checked selector select an object with these labels (object or NULL)?
 * Null selects nothing; {} selects everything. */
int selector_matches(const cJSON *sel, const cJSON *labels);

#endif
