/*
 * time-window: whether a moment is inside a maintenance window (days, a
 * start and an end time of day, a time zone), as kured's and
 * system-upgrade-controller's windows judge it, and when that changes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-t seconds] days start end [zone]";

struct window {
	int days[7];     /* 1 for each weekday in the window, 0 Sunday */
	long start, end; /* seconds of the day; end inclusive, the whole second */
};

static const char *const day_names[7][3] = {
	{ "su", "sun", "sunday" }, { "mo", "mon", "monday" }, { "tu", "tue", "tuesday" },
	{ "we", "wed", "wednesday" }, { "th", "thu", "thursday" }, { "fr", "fri", "friday" },
	{ "sa", "sat", "saturday" },
};

/* A day: a name (su, sun, sunday, any case) or 0-6 (7 is Sunday too); -1 if none. */
static int
day_parse(const char *s, size_t n)
{
	int d, k;

	if (n == 1 && s[0] >= '0' && s[0] <= '7')
		return (s[0] - '0') % 7;
	for (d = 0; d < 7; d++)
		for (k = 0; k < 3; k++)
			if (strlen(day_names[d][k]) == n && strncasecmp(s, day_names[d][k], n) == 0)
				return d;
	return -1;
}

/* days: "*", or a comma list of days and ranges of days (mon-fri; fri-mon wraps). */
static void
days_parse(const char *arg, int *days)
{
	const char *p = arg, *comma, *dash;
	char part[72];
	int a, b;

	memset(days, 0, 7 * sizeof *days);
	if (strcmp(arg, "*") == 0) {
		for (a = 0; a < 7; a++)
			days[a] = 1;
		return;
	}
	for (;;) {
		comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		dash = memchr(p, '-', n);
		if (dash == NULL) {
			a = b = day_parse(p, n);
		} else {
			a = day_parse(p, (size_t)(dash - p));
			b = day_parse(dash + 1, n - (size_t)(dash - p) - 1);
		}
		if (a < 0 || b < 0) {
			snprintf(part, sizeof part, "%.*s", (int)(n < 64 ? n : 64), p);
			die("days %s: %s is not a day or a range of days (sun, mon, ... sat, "
			    "their two letters or full names, 0-6 with 0 Sunday, mon-fri, or *)",
			    qstr(arg), qstr(part));
		}
		for (;;) {
			days[a] = 1;
			if (a == b)
				break;
			a = (a + 1) % 7;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
}

/*
 * A time of day, kured's forms: 15, 15:04, 15:04:05, 3pm, 03pm, 3:04pm,
 * 03:04:05pm (am and pm in any case, their hour 1-12; minutes and seconds
 * two digits); its seconds past midnight, or -1.
 */
static long
tod_parse(const char *s)
{
	long f[3] = { 0, 0, 0 };
	int n = 0, ampm = 0, digits;
	const char *p = s;

	for (;;) {
		digits = 0;
		while (isdigit((unsigned char)*p) && digits < 3) {
			f[n] = f[n] * 10 + (*p++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 2 || (n > 0 && digits != 2))
			return -1;
		n++;
		if (*p != ':' || n == 3)
			break;
		p++;
	}
	if (strcasecmp(p, "am") == 0)
		ampm = 1;
	else if (strcasecmp(p, "pm") == 0)
		ampm = 2;
	else if (*p != '\0')
		return -1;
	if (ampm != 0) {
		if (f[0] < 1 || f[0] > 12)
			return -1;
		f[0] = f[0] % 12 + (ampm == 2 ? 12 : 0);
	}
	if (f[0] > 23 || f[1] > 59 || f[2] > 59)
		return -1;
	return f[0] * 3600 + f[1] * 60 + f[2];
}

/* The zone: UTC, Local (this machine's), or an IANA name whose file is there. */
static void
zone_set(const char *z)
{
	const char *dir = getenv("TZDIR");
	char *path, magic[4];
	FILE *f;

	if (strcmp(z, "Local") == 0)
		return;
	if (strcmp(z, "UTC") != 0) {
		if (z[0] == '\0' || z[0] == '/' || strstr(z, "..") != NULL ||
		    strspn(z, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") != strlen(z))
			die("zone %s: not an IANA time zone name (Europe/Berlin, America/New_York, UTC, Local)", qstr(z));
		path = xsprintf("%s/%s", dir != NULL && dir[0] != '\0' ? dir : "/usr/share/zoneinfo", z);
		f = fopen(path, "rb");
		if (f == NULL || fread(magic, 1, 4, f) != 4 || memcmp(magic, "TZif", 4) != 0)
			die("zone %s: no such time zone in %s (is tzdata installed?)", qstr(z), path);
		fclose(f);
		free(path);
	}
	path = strcmp(z, "UTC") == 0 ? xsprintf("UTC0") : xsprintf(":%s", z);
	if (setenv("TZ", path, 1) != 0)
		die("setenv TZ:");
	free(path);
	tzset();
}

static int
inside(const struct window *w, time_t t)
{
	struct tm tm;
	long tod;

	if (localtime_r(&t, &tm) == NULL)
		die("time %lld out of range", (long long)t);
	tod = tm.tm_hour * 3600L + tm.tm_min * 60L + tm.tm_sec;
	if (!w->days[tm.tm_wday])
		return 0;
	if (w->start <= w->end)
		return tod >= w->start && tod <= w->end;
	return tod <= w->end || tod >= w->start;
}

/* The moment, on the day k days after t's, at seconds of the day s, local time. */
static time_t
at_day(time_t t, int k, long s)
{
	struct tm tm;

	localtime_r(&t, &tm);
	tm.tm_mday += k;
	tm.tm_hour = (int)(s / 3600);
	tm.tm_min = (int)(s / 60 % 60);
	tm.tm_sec = (int)(s % 60);
	tm.tm_isdst = -1;
	return mktime(&tm);
}

/*
 * A change the marks below miss (a zone's clock set back repeats an hour,
 * and a closed window opens again in it): the state looked at every 15
 * minutes from t up to limit, the first change narrowed to its second;
 * (time_t)-1 if none.
 */
static time_t
scan_change(const struct window *w, time_t t, time_t limit, int now)
{
	time_t a = t, b, m;

	for (b = t + 900; b < limit; a = b, b += 900) {
		if (inside(w, b) == now)
			continue;
		while (b - a > 1) {
			m = a + (b - a) / 2;
			if (inside(w, m) != now)
				b = m;
			else
				a = m;
		}
		return b;
	}
	return (time_t)-1;
}

/*
 * The first moment after t at which inside() differs from inside(t): one of
 * each day's starts, its ends plus a second, and its midnights, or an
 * earlier one scan_change finds; (time_t)-1 if none within eight days (a
 * window of every day, all day).
 */
static time_t
next_change(const struct window *w, time_t t)
{
	long marks[3] = { w->start, w->end + 1, 0 };
	time_t best = (time_t)-1, c;
	int now = inside(w, t), k, i;

	for (k = 0; k <= 8; k++)
		for (i = 0; i < 3; i++) {
			c = marks[i] == 86400 ? at_day(t, k + 1, 0) : at_day(t, k, marks[i]);
			if (c == (time_t)-1 || c <= t || (best != (time_t)-1 && c >= best))
				continue;
			if (inside(w, c) != now)
				best = c;
		}
	c = scan_change(w, t, best != (time_t)-1 ? best : t + 8 * 86400, now);
	return c != (time_t)-1 && (best == (time_t)-1 || c < best) ? c : best;
}

static void
print_moment(const char *what, time_t t)
{
	struct tm tm;
	char buf[64], off[8];

	if (t == (time_t)-1) {
		printf("%s - -\n", what);
		return;
	}
	localtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(off, sizeof off, "%z", &tm);
	/* +0100 as +01:00, RFC 3339's form */
	printf("%s %lld %s%.3s:%s\n", what, (long long)t, buf, off, off + 3);
}

int
main(int argc, char **argv)
{
	struct window w;
	const char *targ = NULL;
	time_t now, change;
	char *end;
	int c, in;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "ht:", usage)) != -1) {
		switch (c) {
		case 't': targ = optarg; break;
		}
	}
	if (argc - optind < 3 || argc - optind > 4)
		usage_exit(usage);
	days_parse(argv[optind], w.days);
	if ((w.start = tod_parse(argv[optind + 1])) < 0)
		die("start %s: not a time of day (22:00, 22:00:30, 10pm, 10:30pm, 22)", qstr(argv[optind + 1]));
	if ((w.end = tod_parse(argv[optind + 2])) < 0)
		die("end %s: not a time of day (06:00, 06:00:30, 6am, 6:30am, 6)", qstr(argv[optind + 2]));
	zone_set(argc - optind == 4 ? argv[optind + 3] : "UTC");
	if (targ != NULL) {
		now = (time_t)strtoll(targ, &end, 10);
		if (!isdigit((unsigned char)targ[0]) || *end != '\0' || strlen(targ) > 12)
			die("-t takes seconds since the epoch (date +%%s), not %s", qstr(targ));
	} else {
		now = time(NULL);
	}
	in = inside(&w, now);
	change = next_change(&w, now);
	if (in) {
		/* open through the last second before it closes */
		print_moment("open", change == (time_t)-1 ? change : change - 1);
	} else {
		print_moment("closed", change);
	}
	if (fshut(stdout, "stdout") != 0)
		return EXIT_TROUBLE;
	return in ? EXIT_CLEAN : EXIT_FINDINGS;
}
