/*
 * gpudrv: shared code of the gpudrv commands.
 * Each concern lives in one file of common/; this header declares them all.
 */
#ifndef GPUDRV_H
#define GPUDRV_H

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

/* The exit-code contract of every gpudrv command. */
enum { EXIT_CLEAN = 0, EXIT_FINDINGS = 1, EXIT_TROUBLE = 2 };

/* err.c: messages on stderr prefixed with the program name. */
extern const char *progname;
void setprogname(const char *argv0); /* first in main: also makes cJSON allocate by xmalloc */
void die(const char *fmt, ...);     /* exit 2; a format ending in ':' appends strerror */
/* Until the next die(), it writes its message into msg and longjmps to
 * *to instead (doc.c, so a bad item is reported once its document is known
 * to be whole); NULL ends that. */
void die_defer(jmp_buf *to, char *msg, size_t msgsz);
void warnf(const char *fmt, ...);   /* a format ending in ':' appends strerror */
void usage_exit(const char *usage); /* "usage: prog ..." on stderr, exit 2 */
int nextopt(int argc, char **argv, const char *opts, const char *usage); /* getopt */
int fshut(FILE *f, const char *name); /* flush and check; 0 or 2 */
const char *qstr(const char *s);    /* quoted, escaped, bounded copy for messages */
const char *qmsg(const char *s);    /* the same, longer: what a server said */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
/* p, an array of *cap elements of size bytes, made to hold n + 1: doubled, or first. */
void *xgrow(void *p, size_t *cap, size_t n, size_t first, size_t size);
char *xstrndup(const char *s, size_t n);
char *xsprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* allocated */

/* input.c: whole input, or a chunk at a time; the format, told from the content. */
struct input {
	char *data;       /* NUL-terminated copy of the bytes read */
	size_t len;
	const char *name; /* "<stdin>" or the path, for messages */
};
void input_read(struct input *in, const char *path); /* NULL or "-" is stdin; dies on error */
void input_free(struct input *in);
size_t text_start(const char *p, size_t n); /* offset past a UTF-8 BOM and white space */
/*
 * 1 for JSON ('{' or '['), 0 for YAML (anything else), at the first byte
 * text_start finds.  Dies on an HTML page (a proxy's error, not kubectl's)
 * and on input that holds nothing.
 */
int text_is_json(const char *p, size_t n, const char *name);

/* A reader: an input a chunk at a time, so memory does not grow with its size. */
struct reader {
	int fd;
	const char *name; /* "<stdin>" or the path, for messages */
	char *buf;        /* the current chunk */
	size_t len, cap;  /* bytes in buf, and its size */
	size_t pos;       /* bytes of buf already handed out (YAML) */
	size_t off;       /* input offset of buf[0] */
	int eof;
	int json;         /* the format, as text_is_json tells it */
};
void reader_open(struct reader *r, const char *path); /* dies on error or empty input */
/* reader_open, but 0 for an empty input (white space only), which a watch
 * that saw no event gives; the reader is closed by the caller either way. */
int reader_try(struct reader *r, const char *path);
size_t reader_next(struct reader *r); /* the next chunk into buf; 0 at the end */
void reader_close(struct reader *r);

/*
 * Scanning kubectl documents (json.c, yaml.c).  Every byte is checked, but of
 * a document only the members asked for are kept: of its top level (sc->top)
 * and of each item of its top-level "items" list (sc->item), which is handed
 * over item by item and then freed.  Both formats give the same calls.
 */
struct kspec {
	const char *key; /* NULL ends the list */
	const struct kspec *sub; /* of an object value keep only these; NULL: all; KS_COUNT */
};
extern const struct kspec KS_COUNT[]; /* keep.c: keep only the number of members or elements */
/*
 * keep.c: a key whose sub starts with the entry { KS_EACH, each } holds a
 * list, and of each object in it only each is kept (a pod's containers:
 * their resources alone); any other element is kept whole.
 */
extern const char KS_EACH[];
struct scan {
	const struct kspec *top;  /* "items" must be one of them */
	const struct kspec *item;
	int many;                 /* documents back to back (kubectl get -w) */
	/* An item of the document's "items" list; kind: the document's kind if it came first. */
	void (*item_fn)(const struct scan *sc, const cJSON *item, size_t index, const char *kind);
	/* A document's end: its kept top level ("items" an empty list if it was a
	 * list), or NULL if it is not a mapping. */
	void (*doc_fn)(const struct scan *sc, const cJSON *top);
	void *arg;
};
void json_stream(struct reader *r, const struct scan *sc);
void yaml_stream(struct reader *r, const struct scan *sc);
/*
 * keep.c, the keeper: what is kept of an object as a scanner meets it.  The
 * scanner opens it (keep_open: obj a new object), gives each key (keep_key),
 * asks what becomes of its value (keep_how), and hands over what it built
 * (keep_put), or each item of the items list (keep_item).
 */
enum keep_how {
	KEEP_NONE,   /* checked and skipped */
	KEEP_VALUE,  /* built whole */
	KEEP_OBJECT, /* a mapping kept in part: keep_open with at->sub */
	KEEP_COUNT,  /* its number of members or elements, as a number */
	KEEP_ITEMS,  /* the top level's items: each to keep_item, then an empty list */
	KEEP_EACH    /* a list: of each object in it, at->sub->sub kept (keep_each) */
};
struct kept {
	cJSON *obj;               /* what is kept so far */
	const struct kspec *keys; /* what is to be kept */
	const struct kspec *at;   /* the entry of the key whose value comes next, or NULL */
	int top;                  /* a document's top level */
};
const struct kspec *keep_find(const struct kspec *keys, const char *key, size_t n);
void keep_open(struct kept *k, const struct kspec *keys, int top);
void keep_key(struct kept *k, const char *key, size_t n);
/* map, seq: what the value is; dies "name: duplicate key" on a kept key given twice. */
enum keep_how keep_how(const struct kept *k, int map, int seq, const char *name);
void keep_put(struct kept *k, cJSON *v);
/* KEEP_EACH: what to keep of each object of the list. */
const struct kspec *keep_each(const struct kept *k);
/* To sc->item_fn as item *index (then one more), then freed. */
void keep_item(const struct scan *sc, cJSON *item, size_t *index, const char *kind);
/* A key given twice in an object anywhere in v is an error. */
void tree_dups(const cJSON *v, const char *name);

/* access.c: reading a cJSON tree by Kubernetes' rules (keys are case-sensitive). */
const cJSON *j_get(const cJSON *obj, const char *key);
const char *j_str(const cJSON *obj, const char *key);  /* string member or NULL */
const cJSON *j_path(const cJSON *obj, const char *dotted); /* "metadata.name" */
int j_int(const cJSON *obj, const char *key, long *out);   /* an integer as written (not 1.0, 1e0): 1 */
const char *j_type(const cJSON *item);                     /* "a string", "an object", ... */
/* Required: the non-empty string at a dotted path; dies "<where>: <path> is ...". */
const char *need_str(const cJSON *obj, const char *path, const char *where);
/* Optional 32-bit integer: 1 with *out, 0 if absent or null (*out = 0, as Go
 * reads it); dies "<where>: <path> is ..." on anything else. */
int opt_int32(const cJSON *obj, const char *key, const char *path, long *out, const char *where);
/* Optional object: the object, NULL if absent or null; dies on anything else. */
const cJSON *opt_obj(const cJSON *obj, const char *key, const char *path, const char *where);
/* Optional boolean: def if absent or null; dies on anything else. */
int opt_bool(const cJSON *obj, const char *key, const char *path, int def, const char *where);
/* Optional string: NULL if absent, null or empty; dies on anything else. */
const char *opt_str(const cJSON *obj, const char *key, const char *path, const char *where);
/* If present, an object or a string: NULL if absent; dies on anything else, null too. */
const cJSON *obj_if_present(const cJSON *obj, const char *key, const char *path, const char *where);
const char *str_if_present(const cJSON *obj, const char *key, const char *path, const char *where);
/* Optional object of strings (labels): NULL if absent or null; dies "<where>:
 * <what> "k" is ..., not a string" on a member that is not one. */
const cJSON *opt_strmap(const cJSON *obj, const char *key, const char *path, const char *what,
    const char *where);
/* Optional IntOrString: 0 if absent or null; 1 with *n, an integer (opt_int32's
 * rules); 2 with *s, a string; dies on anything else. */
int opt_intstr(const cJSON *obj, const char *key, const char *path, long *n, const char **s,
    const char *where);
int j_has(const cJSON *obj, const char *key);   /* the member is there, and not null */
int j_true(const cJSON *obj, const char *key);  /* the member is true */
long j_count(const cJSON *obj, const char *key); /* a KS_COUNT member's number, else 0 */
/* The elements of a list (members of an object) in turn: prev NULL gives the
 * first; NULL after the last, and for anything else. */
const cJSON *j_next(const cJSON *v, const cJSON *prev);

/*
 * doc.c: a kubectl document of the kinds a command reads, item by item: a
 * List, a typed list (NodeList, PodList, ...: items may then omit their
 * kind) or, with single, one such object; with many, documents back to back;
 * with watch, watch events (kubectl get -w --output-watch-events).  A reader
 * that did not ask for events dies on any (an ERROR, a BOOKMARK too: the list
 * it wanted was not read).  A Kubernetes Status is named as such, with its
 * message.  Streamed, always (the tests' whole-tree reader is t/whole.c).
 */
struct item {
	const cJSON *obj;
	const char *kind;  /* its own, or the one its typed list implies */
	size_t index;      /* in its list */
	int in_list;       /* an item of a list, not a document of its own */
	const char *event; /* a watch event's type (ADDED, ...), or NULL */
};
struct doc_reader {
	const char *const *kinds; /* the item kinds read, NULL-terminated */
	const char *const *lists; /* lists[i] is the typed list of kinds[i] */
	const char *what;         /* "a Node nor a list of Nodes", for messages */
	const char *hint;         /* appended to the kind message, or NULL */
	int single, many;
	const struct kspec *keys; /* kept of an item (and of a single object) */
	/* An item, as items come (a list's kind may come after them, so a
	 * command holds what it prints until end says the document is good). */
	void (*item)(const struct item *it, void *arg);
	/* After each document: ok 1, what item was given stands; 0, forget it
	 * (a single object with an "items" member: its items were not items). */
	void (*end)(int ok, void *arg);
	void *arg;
	int watch;                /* watch events are read (an ERROR: a warning, status 2) */
	/* Or NULL: after end, for each list read whole, its kind ("List" or one of
	 * lists) and its top level (what keys keeps of its metadata, with the
	 * paging members), so that a command can tell which lists it was given. */
	void (*listed)(const char *kind, const cJSON *list, void *arg);
	/* An empty input (white space only) is no document, not an error: a
	 * watch from a resourceVersion that saw no event answers nothing. */
	int empty_ok;
};
/* 0, or 2 if a watch reported an error (watch only); dies, naming
 * file:line:col, on bad input.  A caller never drops it. */
int doc_each(const char *path, const struct doc_reader *dr);
/* One JSON document read in memory, whole (the matrix's JSON form): checked
 * as any input is, then parsed.  Dies on bad input. */
cJSON *doc_parse(const struct input *in);
/*
 * Whether the body at path is the whole list asked for: one JSON object,
 * every byte checked, whose own kind (not an item's) is list, with an items
 * list: 0; else 1, with what it is instead in why, one line ("an empty
 * body", "a body cut short (not one whole JSON object)", "an object that
 * has the member "K" twice", "a body that is not one JSON object", "an
 * object that has no kind", "a Status (CODE REASON: MESSAGE)", "kind K",
 * "kind K but no items list", "one page of a longer list (...)"; strings
 * as written, escapes and all).  Only
 * the top level is judged: the items are the reader's.  Dies only when
 * path cannot be read.
 */
int doc_is_list(const char *path, const char *list, char *why, size_t whysz);

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
#define L_SKIP    "nvidia.com/gpu-driver-upgrade.skip"
#define A_INITIAL "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable"
/* Pods the operator's drain leaves (its podSelector gets "<this>!=true"). */
#define L_DRAIN_SKIP "nvidia.com/gpu-driver-upgrade-drain.skip"
/* gpudrv's own record that its upgrade cordoned the node ("true"): a cordon
 * without it was someone else's, and stays. */
#define A_CORDONED "gpudrv/cordoned"
/* The GPU Operator's start times (Unix seconds) of two of its waits. */
#define A_VALIDATION "nvidia.com/gpu-driver-upgrade-validation-start-time"
#define A_JOBS    "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time"
/* The values of L_STATE, in the order an upgrade goes through them (the GPU
 * Operator's upgrade library, pkg/upgrade/consts.go); sh/lib/node.sh spells
 * the same, and t/0010-house.t checks that the two agree. */
#define S_REQUIRED         "upgrade-required"
#define S_CORDON           "cordon-required"
#define S_WAIT_JOBS        "wait-for-jobs-required"
#define S_POD_DELETION     "pod-deletion-required"
#define S_DRAIN            "drain-required"
#define S_MAINTENANCE      "node-maintenance-required"
#define S_POST_MAINTENANCE "post-maintenance-required"
#define S_POD_RESTART      "pod-restart-required"
#define S_VALIDATION       "validation-required"
#define S_UNCORDON         "uncordon-required"
#define S_DONE             "upgrade-done"
#define S_FAILED           "upgrade-failed"
/* labels2tag -F's record, a line a node: its fields, in order (node.sh's
 * record_fields). */
enum rec_field {
	RF_NODE, RF_TAG, RF_DRIVER, RF_STATE, RF_SKIP, RF_CORDON, RF_READY, RF_INITIAL,
	RF_SINCE, RF_CORDONER, RF_UID, RF_COUNT
};
/* node.c: a record split in place into f (RF_COUNT + 1 slots); 0, or -1
 * when it is not one, each field a word of its kind. */
int record_split(char *line, char **f);

int tag_charset_ok(const char *s);   /* non-empty, only [A-Za-z0-9_.-] */
int tag_valid(const char *s);        /* OCI tag grammar */
/* The GPU Operator release whose OS tag rule is followed (tag.c says each). */
enum tagrule { RULE_2607, RULE_2603, RULE_2510 };
int tagrule_parse(const char *s, enum tagrule *out); /* "26.7", "v26.3", ...: 0 or -1 */
enum tagrule tagrule_env(void);      /* GPUDRV_TAG_RULE, default 26.7 */
#define DRIVER_WHAT "is not a driver branch or version (digits and dots, e.g. 550 or 535.104.05)"
int driver_ok(const char *s);        /* a branch or a version, digits and dots */
/* Both return 0, or the 1-based number of the faulty part with *why set. */
int ostag_build(char *out, size_t outsz, const char *id, const char *version_id,
                enum tagrule rule, const char **why);
int tag_build(char *out, size_t outsz, const char *branch, const char *kernel,
              const char *ostag, const char **why);

/* image.c: image references (registry/path:tag), the registry always named. */
#define REPO_MAX 255 /* a repository: registry/path */
#define REF_MAX (REPO_MAX + 1 + TAG_MAX) /* repository:tag */
/* 0 if repo is a repository that names its registry, else -1 with *why
 * saying what is wrong with it. */
int repo_check(const char *repo, const char **why);
/* The reference repo:tag, repo checked: 0, or -1 with *why. */
int image_ref(char *out, size_t outsz, const char *repo, const char *tag, const char **why);

/* node.c: reading Nodes. */
/*
 * Why a node gets no tag: struct tagfault's kind, and the <fault> of
 * labels2tag's "UNKNOWN <fault>:<label>" that matrix-grep reads back; the
 * one list of them (TF_CONFLICT is target_of's two NVIDIADrivers).
 */
enum { TF_MISSING, TF_EMPTY, TF_NOT_STRING, TF_INVALID, TF_CONFLICT };
extern const char *const tag_faults[]; /* by TF_*, NULL-terminated */
struct tagfault {
	const char *label;  /* the label at fault, or NULL */
	const char *kind;   /* one of tag_faults */
	const char *detail; /* human words */
};
struct tag_override {
	const char *branch; /* use instead of the node's driver major, or NULL */
	const char *kernel; /* use instead of the node's kernel, or NULL */
	enum tagrule rule;  /* the OS tag rule */
};
int dns_subdomain_ok(const char *s);
const char *node_name(const cJSON *node);            /* valid name or NULL */
const cJSON *node_labels(const cJSON *node);          /* object or NULL */
int node_label(const cJSON *node, const char *key, const char **val, struct tagfault *f);
/* The tag into out; also its matrix row (branch,kernel,os-tag) into row if not NULL. */
int node_tag(const cJSON *node, const struct tag_override *ov, char *out, size_t outsz,
             char *row, size_t rowsz, struct tagfault *f);
int node_unschedulable(const cJSON *node);
/*
 * What the upgrade scripts decide on, beside the tag (labels2tag -F): each
 * value checked as the API server would have it, or the node is refused.
 */
struct node_facts {
	char driver[64];   /* major.minor.rev from the driver labels, or "-" */
	const char *state; /* the upgrade-state label, or "-" */
	int skip;          /* the skip label is "true" (only that counts, as for the operator) */
	int cordoned;      /* spec.unschedulable */
	const char *ready; /* the Ready condition: "ready", "not-ready" or "unknown" */
	int initial;       /* cordoned, by someone else before the upgrade: the initial-state annotation */
	int ours;          /* cordoned by gpudrv: its A_CORDONED, and no other manager of the cordon */
	const char *uid;   /* metadata.uid, or "-" */
	/* When the state began, in Unix seconds, or -1: not known.  since_from
	 * says how it is known: "validation" or "jobs" (the operator's start-time
	 * annotation of that wait), "label" (the metadata.managedFields entry
	 * that owns the state label: its manager's last change). */
	long long since;
	const char *since_from;
	char cordoner[64]; /* the field manager that owns spec.unschedulable, or "-" */
};
/* 0, or -1 with f saying which field is wrong (f->label the field's path). */
int node_facts(const cJSON *node, struct node_facts *nf, struct tagfault *f);
/*
 * Calls fn for each Node of a Node, NodeList or List document, by doc_each's
 * rules (hold what you print until end); want_spec keeps spec.unschedulable,
 * many reads documents back to back (kubectl get -w output), watch its
 * watch events (--output-watch-events).
 */
typedef void (*node_fn)(const struct item *node, void *arg);
struct node_reader {
	node_fn fn;
	void (*end)(int ok, void *arg);
	void *arg;
	int want_spec, many;
	int all_labels; /* keep every label, not only those gpudrv reads */
	int want_facts; /* keep what node_facts reads */
	int watch;      /* watch events are read (doc_reader.watch); else any is an error */
};
int nodes_read(const char *path, const struct node_reader *nr); /* as doc_each */

/* target.c: the driver the GPU Operator will deploy on each node. */
struct targets;
/* Why a node needs no precompiled image: struct target's skip, and the <why>
 * of labels2tag's "SKIP <why>:<source>" that matrix-grep reads back. */
enum { TS_NOT_PRECOMPILED, TS_DRIVER_DISABLED, TS_NO_OWNER };
extern const char *const target_skips[]; /* by TS_*, NULL-terminated */
struct target {
	const char *version; /* the driver part of the tag, or NULL */
	const char *skip;    /* one of target_skips, or NULL */
	const char *source;  /* "clusterpolicy/NAME", "nvidiadriver/NAME", a label */
	const char *other;   /* a second NVIDIADriver selecting the node */
	/* The repository of its image, as the source object names it (internal/
	 * image ImagePath: repository/image, or image up to its tag), or NULL. */
	const char *repository;
	/* The object whose upgradePolicy the operator applies to the node
	 * ("clusterpolicy/NAME", "nvidiadriver/NAME"), or "-": none does. */
	const char *owner;
	const cJSON *policy; /* its upgradePolicy, or NULL */
	int nvd;             /* the owner is an NVIDIADriver */
};
/*
 * ClusterPolicy and NVIDIADriver objects (lists back to back); dies on
 * error, and, unless any, when there is neither a ClusterPolicy nor a
 * GPUCluster (no driver is deployed; with any, every node has no owner).
 */
struct targets *targets_load(const char *path, int any);
/* 0 and version; 1 and skip; -1: two NVIDIADrivers select the node. */
int target_of(const struct targets *t, const cJSON *node, struct target *out);
int targets_one_ostag(const struct targets *t); /* the ClusterPolicy decides */
/* Each object whose upgradePolicy applies to the nodes it owns, in turn. */
void targets_owners(const struct targets *t, void (*fn)(const char *owner,
    const cJSON *upgrade_policy, int nvd, void *arg), void *arg);
void targets_free(struct targets *t);

/* matrix.c: the set of tags that exist (CSV matrix, tag list, or skopeo JSON). */
struct matrix;
struct matrix *matrix_load(const char *path, int report_dups); /* dies on error */
int matrix_has(const struct matrix *m, const char *tag);
size_t matrix_rows(const struct matrix *m);   /* data rows, header and blanks excluded */
void matrix_free(struct matrix *m);

/* pdb.c: PodDisruptionBudgets and Pods, as the eviction API and kubectl drain see them. */
struct intstr {        /* minAvailable or maxUnavailable */
	int set, pct;
	long val;
	char text[24]; /* as written: "4" or "50%" */
};
struct budget {
	char *ns, *name;
	size_t index;
	cJSON *selector; /* a copy: items are freed as they go by */
	struct intstr minav, maxun;
	int always_allow; /* unhealthyPodEvictionPolicy: AlwaysAllow */
	long gen, obsgen, healthy, desired, allowed, expected, disrupted;
	int has_obsgen, has_healthy, has_desired, has_allowed, has_expected;
	const char *missing; /* the first status field missing, or NULL */
	char *syncfailed;    /* why the disruption controller cannot count it, or NULL */
	/* The node's pods whose eviction draws on it (drain_node). */
	struct pod **pods;
	size_t npods, cap, unready;
};
struct pod {
	char *ns, *name;
	char *node;    /* every node read: spec.nodeName, a copy; else NULL */
	size_t seq;    /* its place among the pods kept */
	cJSON *labels; /* a copy, or NULL (and, without a policy, NULL if skipped) */
	const char *skip; /* why its eviction consults no budget ("daemonset", ...), or NULL */
	int nocontroller;
	int ready;
	int multi; /* selected by more than one budget (drain_node) */
	int daemonset, mirror, finished; /* kubectl drain's filters' words */
	int local;     /* an emptyDir volume: its data goes with the pod */
	int gpu;       /* it holds a GPU, by the GPU Operator's filter */
	int go;        /* the removal takes it (removal_plan) */
	const char *refused; /* or would, but one of the RF_* refuses it; NULL */
};
/* What was read: every budget, and the pods on the node (node NULL: on any node). */
struct cluster {
	const char *node;
	const char *name; /* the input, for messages: "<stdin>" or the path */
	struct budget *budgets;
	struct pod *pods;
	size_t nb, np, bcap, pcap;
	int lists, budget_list, pod_list; /* the lists read whole: List, and the typed ones */
	int policy; /* the pods read for a removal_plan */
};
/*
 * One pass over path (NULL or "-": stdin), kubectl get pdb,pods -A or the
 * two get --raw lists back to back: 0, or 2 if the reader said why.  Dies
 * on bad input, and on input that does not prove it holds both lists.
 * policy: the pods are read for removal_plan too (their volumes, what their
 * containers ask for, their labels whatever they are).
 */
int cluster_read(struct cluster *cl, const char *path, const char *node, int policy);
void cluster_by_node(struct cluster *cl); /* sorts the pods by node, then input order */
size_t node_pods_end(const struct cluster *cl, size_t i); /* past the pods on pods[i]'s node */
void cluster_free(struct cluster *cl); /* all cluster_read kept */
/* Pods alone, a line each onto out: "node namespace/name phase ready restarts"
 * ("-": not set), a document's lines once it is whole (pdb-check -p).  0, or
 * 2 if the reader said why; dies on bad input and on input with no list. */
int pods_print(const char *path, FILE *out, int watch);
/* Budgets alone, the same way: "namespace/name allowed healthy desired
 * expected", the status's disruptionsAllowed, currentHealthy, desiredHealthy
 * and expectedPods (pdb-check -b). */
int budgets_print(const char *path, FILE *out, int watch);

struct policy;
/* remove.c: which pods of a node an upgrade removes, and how (its upgradePolicy). */
enum { RM_NONE, RM_DELETION, RM_DRAIN };
extern const char *const removal_methods[]; /* by RM_*: "none", "pod-deletion", "drain" */
#define RF_LOCAL "LOCAL-STORAGE"     /* an emptyDir, and deleteEmptyDir false */
#define RF_UNMANAGED "NO-CONTROLLER" /* no controller, and force false */
#define RF_UNDELETABLE "UNDELETABLE" /* a GPU pod the pod deletion cannot take (a DaemonSet's, a mirror) */
struct removal {
	int policy;                  /* from a policy (else pdb-check's plain drain) */
	int deletion, del_force, del_emptydir;     /* the pod deletion */
	int drain, drain_force, drain_emptydir;    /* drain.enable, ... */
	cJSON *drain_sel;            /* drain.podSelector, parsed; NULL: every pod */
};
/* kubectl drain --ignore-daemonsets --delete-emptydir-data, no policy. */
void removal_plain(struct removal *rm);
/* From a node's policy: 0, or -1 with why (its drain.podSelector). */
int removal_from(struct removal *rm, const struct policy *p, char *why, size_t whysz);
void removal_free(struct removal *rm);
/*
 * The pods of one node: the method (RM_*), each pod's go and refused; a
 * drain in place of a pod deletion that would fail sets *fell, the first
 * pod it could not take, and *fell_why (an RF_*), else NULL.
 */
int removal_plan(const struct removal *rm, struct pod *pods, size_t np, const struct pod **fell,
    const char **fell_why);

/* drain.c: the eviction API's rules, the disruption controller's arithmetic. */
#define MAX_DISRUPTED 2000 /* eviction.go MaxDisruptedPodSize */
/* pct% of total, rounded up: minAvailable's and maxUnavailable's percentages. */
long long pct_ceil(long long pct, long long total);
/* A count or a percentage of total, rounded up (intstr's GetScaledValueFromIntOrPercent
 * with roundUp, as the disruption controller and the GPU Operator's maxUnavailable). */
long long intstr_scaled(const struct intstr *v, long long total);
/* "4" or "25%" (at most 100%, nine digits): 0, or -1. */
int intstr_parse(const char *s, struct intstr *out);
long long desired_for(const struct budget *b, long long expected); /* desiredHealthy */
int unready_goes(const struct budget *b);  /* its unready pods are evicted outright */
long long needed(const struct budget *b);  /* disruptions its pods on the node need now */
int budget_blocks(const struct budget *b); /* their eviction would be refused */
void block_why(const struct budget *b, char *out, size_t outsz); /* why, and what to do */
/* The budgets, and the room a node's check works in. */
struct drain {
	struct budget **idx; /* by namespace */
	size_t nb;
	struct budget **match; /* budgets_of's answer */
	struct budget **used;  /* drain_node's: the budgets drawn on, in input order */
	size_t nused, matchcap, usedcap;
};
void drain_init(struct drain *d, struct budget *budgets, size_t nb); /* indexes the budgets */
size_t budgets_of(struct drain *d, const struct pod *p); /* into d->match; how many */
/* Each of a node's pods to the budget it draws on; multi if several select it. */
void drain_node(struct drain *d, struct pod *pods, size_t np);
void drain_next(struct drain *d); /* the budgets left without pods, for the next node */
void drain_free(struct drain *d); /* the index and the room, not the budgets */

/* plan.c: the fleet rollout's decisions (rollout-plan(1)). */
struct plan_input {
	const char *facts;   /* labels2tag -F records of every GPU node */
	const char *draws;   /* pdb-check -a's lines */
	const char *scope;   /* the rollout's nodes, one a line, or NULL: all */
	const char *running; /* the nodes under way, or NULL */
	const char *gone;    /* the nodes this run is done with, or NULL */
	const char *held;    /* "node budget": what each drew on when it started, or NULL */
	const char *version; /* the driver version the rollout goes to */
	long par;            /* maxParallelUpgrades, 0: no limit */
	struct intstr maxun; /* maxUnavailable */
	const char *policies; /* upgrade-policy's output: each owner's limits, or NULL: par, maxun */
};
struct plan;
struct plan *plan_load(const struct plan_input *in); /* dies on bad input, naming it */
/* The decisions, one line each (rollout-plan(1)); dry: the whole rollout,
 * as if the nodes ended in the order they started. */
void plan_print(struct plan *p, int dry, FILE *out);
void plan_free(struct plan *p);

/* policy.c: the upgradePolicy in force for a node, and where each field came from. */
enum { PF_AUTO, PF_PAR, PF_MAXUN, PF_WFC_SEL, PF_WFC_TIMEOUT, PF_PD_FORCE, PF_PD_TIMEOUT,
	PF_PD_EMPTYDIR, PF_DR_ENABLE, PF_DR_FORCE, PF_DR_SEL, PF_DR_TIMEOUT, PF_DR_EMPTYDIR,
	PF_FILTER, PF_N };
extern const char *const policy_sources[]; /* "default", "object", "flag", NULL */
struct policy {
	char *owner;              /* "clusterpolicy/NAME", "nvidiadriver/NAME" or "-" */
	char *value[PF_N];        /* as text: "true", "300", "25%", a selector */
	const char *source[PF_N]; /* one of policy_sources */
};
int policy_field(const char *name);    /* "drain.enable": its PF_*, or -1 */
const char *policy_field_name(int f);
/* The policy of owner from its upgradePolicy (NULL: none; nvd: an
 * NVIDIADriver's); dies naming the owner and the field on a bad value. */
void policy_from(struct policy *p, const char *owner, const cJSON *upgrade_policy, int nvd);
/* "FIELD=VALUE" over it, as a flag: 0, or -1 with *why. */
int policy_set(struct policy *p, const char *assign, const char **why);
void policy_free(struct policy *p);
int policy_bool(const struct policy *p, int f);
long policy_count(const struct policy *p, int f);
char *policy_drain_selector(const struct policy *p); /* to free: the drain's podSelector */
/* upgrade-policy's output read back: each node's owner, each owner's policy. */
struct policies;
struct policies *policies_read(const char *path); /* dies on bad input, naming the line */
const struct policy *policies_node(const struct policies *ps, const char *node); /* or NULL */
size_t policies_count(const struct policies *ps);
const struct policy *policies_at(const struct policies *ps, size_t i);
void policies_free(struct policies *ps);

/* strset.c: a hash set of strings; and a word in a short list. */
int word_in(const char *s, const char *const *words); /* words NULL-terminated */
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
/* A selector as text ("app=a,tier in (x,y),!gone", labels.Parse's grammar) as a
 * LabelSelector selector_matches takes ("" selects everything); NULL with why
 * filled in when it is not one. */
cJSON *selector_parse(const char *text, char *why, size_t whysz);

#endif
