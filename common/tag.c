/*
 * The precompiled driver image tag: <driver-branch>-<kernel>-<os-tag>, e.g.
 * 550-5.15.0-107-generic-ubuntu22.04.  Built here and only here, from its
 * parts; a tag is never split apart (the kernel holds hyphens).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

#define NOT_TAG "cannot be part of an image tag (only letters, digits, '_', '.' and '-')"

static int
tagchar(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

int
tag_charset_ok(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!tagchar((unsigned char)*s) || (unsigned char)*s > 0x7f)
			return 0;
	return 1;
}

/* The OCI distribution spec's tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. */
int
tag_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= TAG_MAX && s[0] != '.' && s[0] != '-' && tag_charset_ok(s);
}

/*
 * The GPU Operator's OS tag rule, by release:
 *   26.7 (v26.7.0 on): ID then VERSION_ID, the minor version dropped for rhel,
 *        rocky and ol (rhel9, ol9, rocky9); every other ID keeps it whole
 *        (ubuntu22.04, rhcos4.16, sles15-SP6, talosv1.12.6).
 *   26.3 (v26.3.x): the minor dropped for rocky, and for rhel 10 and later
 *        (rhel10, but rhel9.4).
 *   25.10 (v25.10.x and before): VERSION_ID always whole (rhel9.4, rocky9.4).
 */
static const struct {
	const char *name;
	enum tagrule rule;
} rules[] = { { "26.7", RULE_2607 }, { "26.3", RULE_2603 }, { "25.10", RULE_2510 } };

int
tagrule_parse(const char *s, enum tagrule *out)
{
	size_t i;

	if (s != NULL && s[0] == 'v')
		s++;
	for (i = 0; s != NULL && i < sizeof rules / sizeof rules[0]; i++)
		if (strcmp(s, rules[i].name) == 0) {
			*out = rules[i].rule;
			return 0;
		}
	return -1;
}

/* GPUDRV_TAG_RULE, or today's rule; dies on a value that names none. */
enum tagrule
tagrule_env(void)
{
	const char *s = getenv("GPUDRV_TAG_RULE");
	enum tagrule r = RULE_2607;

	if (s != NULL && *s != '\0' && tagrule_parse(s, &r) != 0)
		die("GPUDRV_TAG_RULE=%s: not a tag rule (26.7, today's; 26.3; or 25.10)", qstr(s));
	return r;
}

/* OS tag = os-release ID followed by VERSION_ID (ubuntu + 22.04 = ubuntu22.04). */
int
ostag_build(char *out, size_t outsz, const char *id, const char *version_id,
            enum tagrule rule, const char **why)
{
	const char *dot;
	int vlen, n, el, rocky, rhel;
	long major;
	char *end;

	if (!tag_charset_ok(id)) {
		*why = NOT_TAG;
		return 1;
	}
	if (!tag_charset_ok(version_id)) {
		*why = NOT_TAG;
		return 2;
	}
	vlen = (int)strlen(version_id);
	rocky = strcmp(id, "rocky") == 0;
	rhel = strcmp(id, "rhel") == 0;
	el = rocky || rhel || strcmp(id, "ol") == 0;
	if (el && rule != RULE_2510 && (rule == RULE_2607 || rocky || rhel)) {
		dot = strchr(version_id, '.');
		major = strtol(version_id, &end, 10);
		if (!isdigit((unsigned char)version_id[0]) || end != (dot ? dot : version_id + vlen)) {
			*why = "has no numeric major version";
			return 2;
		}
		if (rule == RULE_2607 || rocky || major >= 10)
			vlen = (int)(end - version_id);
	}
	n = snprintf(out, outsz, "%s%.*s", id, vlen, version_id);
	if (n < 0 || (size_t)n >= outsz) {
		*why = "makes the image tag longer than 128 characters";
		return 2;
	}
	return 0;
}

/*
 * The driver part: a branch (550) or a version (535.104.05), as the GPU
 * Operator takes spec.driver.version or NVIDIADriver spec.version: digits in
 * dot-separated groups.
 */
int
driver_ok(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	for (;;) {
		n = strspn(s, "0123456789");
		if (n == 0)
			return 0;
		s += n;
		if (*s == '\0')
			return 1;
		if (*s++ != '.')
			return 0;
	}
}

int
tag_build(char *out, size_t outsz, const char *branch, const char *kernel,
          const char *ostag, const char **why)
{
	int n;

	if (!driver_ok(branch)) {
		*why = DRIVER_WHAT;
		return 1;
	}
	if (!tag_charset_ok(kernel)) {
		*why = NOT_TAG;
		return 2;
	}
	if (!tag_charset_ok(ostag)) {
		*why = NOT_TAG;
		return 3;
	}
	n = snprintf(out, outsz, "%s-%s-%s", branch, kernel, ostag);
	if (n < 0 || (size_t)n >= outsz || !tag_valid(out)) {
		*why = "makes the image tag longer than 128 characters";
		return 2;
	}
	return 0;
}
