#!/bin/sh
# time-window: a moment inside or outside a window of days, a start and an
# end time of day, and a time zone, judged as kured and
# system-upgrade-controller judge theirs, and when that changes; each
# moment given with -t, each expected one computed by date(1) in the zone.
. "$(dirname "$0")/lib.sh"

# at ZONE 'YYYY-MM-DD HH:MM:SS': the moment, seconds since the epoch.
at() { TZ=$1 date -d "$2" +%s; }
# is ZONE 'YYYY-MM-DD HH:MM:SS' OFFSET: time-window's words for it.
is() { echo "$(at "$1" "$2") $(echo "$2" | tr ' ' T)$3"; }
B=Europe/Berlin

# 2026-12-04 is a Friday.  An overnight window of weekdays: the days are
# those of the moment judged (kured's rule): Friday from 22:00 to midnight
# is in, Saturday's small hours are not, Monday's are.
t_run time-window -t "$(at $B '2026-12-04 22:30:00')" mon-fri 22:00 06:00 $B
t_rc 0 "Friday 22:30 is inside mon-fri 22:00-06:00"
t_out "open through Friday's last second" "open $(is $B '2026-12-04 23:59:59' +01:00)"
t_run time-window -t "$(at $B '2026-12-05 03:00:00')" mon-fri 22:00 06:00 $B
t_rc 1 "Saturday 03:00 is outside"
t_out "closed until Monday's midnight" "closed $(is $B '2026-12-07 00:00:00' +01:00)"
t_run time-window -t "$(at $B '2026-12-03 03:00:00')" mon-fri 22:00 06:00 $B
t_rc 0 "Thursday 03:00 is inside"
t_out "open through 06:00:00, the end's whole second" "open $(is $B '2026-12-03 06:00:00' +01:00)"
t_run time-window -t "$(at $B '2026-12-03 06:00:01')" mon-fri 22:00 06:00 $B
t_rc 1 "06:00:01 is outside"
t_out "closed until 22:00 the same day" "closed $(is $B '2026-12-03 22:00:00' +01:00)"

# A window within a day, in UTC (the zone when none is given): both ends in.
t_run time-window -t "$(at UTC '2026-12-05 12:59:59')" sat 1pm 3pm
t_rc 1 "12:59:59 is before 1pm"
t_out "closed until 13:00:00" "closed $(is UTC '2026-12-05 13:00:00' +00:00)"
t_run time-window -t "$(at UTC '2026-12-05 15:00:00')" sat 13 15
t_rc 0 "15:00:00 is inside 13-15"
t_out "open through 15:00:00" "open $(is UTC '2026-12-05 15:00:00' +00:00)"
t_run time-window -t "$(at UTC '2026-12-05 15:00:01')" SATURDAY 13:00:00 03:00pm UTC
t_rc 1 "15:00:01 is outside"
t_out "closed until next Saturday" "closed $(is UTC '2026-12-12 13:00:00' +00:00)"

# Every day, all day: open, and nothing changes.
t_run time-window -t "$(at UTC '2026-12-05 15:00:01')" '*' 0 23:59:59
t_rc 0 "every day, 0 to 23:59:59"
t_out "open with no end" "open - -"
# Without -t, now: the one window whose answer is the same at any moment.
t_run time-window '*' 0 23:59:59
t_rc 0 "every day, all day, judged now"
t_out "open with no end, now too" "open - -"

# Days: numbers (0 and 7 Sunday), two letters, ranges that wrap.
t_run time-window -t "$(at UTC '2026-12-06 10:00:00')" 7 9am 11am
t_rc 0 "7 is Sunday"
t_run time-window -t "$(at UTC '2026-12-06 10:00:00')" 0,Mo 9am 11am
t_rc 0 "0 is Sunday"
t_run time-window -t "$(at UTC '2026-12-06 10:00:00')" fri-mon 12am 11:59:59pm
t_rc 0 "fri-mon wraps over Sunday; 12am is midnight"
t_run time-window -t "$(at UTC '2026-12-09 10:00:00')" fri-mon 0 23:59:59
t_rc 1 "Wednesday is not in fri-mon"
t_out "closed until Friday" "closed $(is UTC '2026-12-11 00:00:00' +00:00)"
t_run time-window -t "$(at UTC '2026-12-09 12:30:00')" we 12pm 12:30pm
t_rc 0 "12pm is noon, 12:30pm half past"

# The zone moves the judgement: 16:00 in New York is 21:00 UTC.
t_run time-window -t "$(at UTC '2026-12-04 21:00:00')" fri 22 6 America/New_York
t_rc 1 "16:00 in New York is before 22:00 there"
t_out "closed until 22:00 New York time" "closed $(is America/New_York '2026-12-04 22:00:00' -05:00)"

# The clock set back (Berlin, 2026-10-25: 03:00 CEST is 02:00 CET): the
# hour from 02:00 comes twice, and a window that closed at its first pass
# opens again at its second.  Set forward (2026-03-29: 02:00 CET is 03:00
# CEST): a window that begins in the hour that never comes opens when the
# clock enters it.
t_run time-window -t "$(at UTC '2026-10-25 00:40:00')" sun 00:00 02:30 $B
t_rc 1 "02:40 CEST, past the window"
t_out "closed until 02:00 CET, the hour again" "closed $(at UTC '2026-10-25 01:00:00') 2026-10-25T02:00:00+01:00"
t_run time-window -t "$(at UTC '2026-10-25 01:10:00')" sun 00:00 02:30 $B
t_rc 0 "02:10 CET, inside again"
t_out "open through 02:30 CET" "open $(at UTC '2026-10-25 01:30:00') 2026-10-25T02:30:00+01:00"
t_run time-window -t "$(at UTC '2026-03-29 00:00:00')" sun 02:30 03:30 $B
t_rc 1 "01:00 CET, before the jump"
t_out "closed until 03:00 CEST, where the clock lands inside it" "closed $(at UTC '2026-03-29 01:00:00') 2026-03-29T03:00:00+02:00"

# Refused, exit 2, naming what and why.
t_run time-window mon-fro 1 2
t_rc 2 "a day that is not one"
t_err "named" 'time-window: days "mon-fro": "mon-fro" is not a day or a range of days (sun, mon, ... sat, their two letters or full names, 0-6 with 0 Sunday, mon-fri, or *)'
for bad in 24:00 13pm 0am 1:5 12:60 1:00:60 22h '' 100; do
	t_run time-window '*' "$bad" 6
	t_rc 2 "start '$bad' refused"
	t_err "named" "time-window: start \"$bad\": not a time of day (22:00, 22:00:30, 10pm, 10:30pm, 22)"
done
t_run time-window '*' 1 6:00z
t_rc 2 "an end that is not a time"
t_grep "named" err '^time-window: end "6:00z": not a time of day'
t_run time-window '*' 1 6 Mars/Olympus_Mons
t_rc 2 "a zone that does not exist"
t_grep "named, and where it was looked for" err '^time-window: zone "Mars/Olympus_Mons": no such time zone in /usr/share/zoneinfo/Mars/Olympus_Mons (is tzdata installed?)$'
t_run time-window '*' 1 6 ../../etc/passwd
t_rc 2 "a zone that is a path out of the zone files"
t_grep "refused" err '^time-window: zone "../../etc/passwd": not an IANA time zone name'
t_run time-window -t 1.5 '*' 1 6
t_rc 2 "-t that is not seconds"
t_grep "named" err '^time-window: -t takes seconds since the epoch (date +%s), not "1.5"$'
t_run time-window '*' 1
t_rc 2 "two operands"
t_err "the usage" "usage: time-window [-t seconds] days start end [zone]"
t_run time-window -h
t_rc 0 "-h"
t_out "the usage on stdout" "usage: time-window [-t seconds] days start end [zone]"
t_done
