/* gen: the tests' and benchmarks' generated inputs (usage in main.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OBJ, ARR };

/* write.c: one writer for kubectl's JSON (-r: compact) and YAML */
extern int yaml, raw, dquote;
void key(const char *k);
void scalar(const char *v, int is_str);
void str(const char *v);
void num(long long v);
void open_(int kind);
void close_(void);
void closen(int n);                  /* close_() n times */
void ko(const char *k, int kind);    /* key k, opening a mapping or a sequence */
void kv(const char *k, const char *v);
void kn(const char *k, long long v);
void kb(const char *k, int v);

void usage(void);
extern int kwok, create;
extern const char *uidfile;
void nodes(long n, long broken_every); /* nodes.c */
void matrix(long rows);
void pods(long npods, long npdbs, long nnodes, const char *what); /* pods.c */
void list_open(const char *api, const char *kind);
void list_close(void);
void slim(const char *what, long n, long nnodes); /* slim.c */
int evict(unsigned long long seed, long n, const char *run, const char *dir); /* evict.c */
