#!/usr/bin/perl
# t/harness.pl: make check's queue of test files (TAP::Harness, prove's own).
#
#   perl t/harness.pl [-j N] [--timer] [-v] LANE...
#   LANE is  --seq NAME PREFIX TESTS  or  --par NAME PREFIX TESTS
#
# A --seq lane's tests run one after the other (the end-to-end tests share
# the sandbox); the --par lanes' tests share the other slots, in the order
# given.  N at once in all (2): the --seq lane holds one slot from its first
# test to its last, the --par tests take the other, then both once the
# --seq lane is done.  So what follows the tests beside the end-to-end
# chain (the sanitizers' runs, with SAN=1) fills the time that chain leaves
# idle, rather than coming after it.
#
# NAME ("-": none) heads each of its tests' names in the report
# (asan:t/0100-labels2tag.t); PREFIX is words, split at blanks, run before
# the test file ("nice env GPUDRV_VALGRIND=1"; "-": none); TESTS, blank
# separated.  A test's standard error joins its standard output (a pipe of
# its own would block the harness on a test that says nothing for a while);
# what a failed test said, but its passed checks, comes at the end, so that
# a log's tail says what failed and why.  Exit 0 when every test passed, 1
# when one did not or one bailed out (which stops them all), 2 on bad usage.
use strict;
use warnings;
use TAP::Harness;

sub usage {
	print STDERR "usage: harness.pl [-j N] [--timer] [-v] {--seq|--par} NAME PREFIX TESTS ...\n";
	exit 2;
}
# bad MESSAGE: bad input, said, exit 2.
sub bad {
	print STDERR "harness.pl: $_[0]\n";
	exit 2;
}

my ( $jobs, $timer, $verbosity ) = ( 2, 0, 0 );
my ( @seq, @par, %cmd );
while (@ARGV) {
	my $a = shift @ARGV;
	if    ( $a =~ /^-j(\d+)$/ )               { $jobs = $1 }
	elsif ( $a eq '-j' && @ARGV && $ARGV[0] =~ /^\d+$/ ) { $jobs = shift @ARGV }
	elsif ( $a eq '--timer' )                 { $timer = 1 }
	elsif ( $a eq '-v' || $a eq '--verbose' ) { $verbosity = 1 }
	elsif ( $a eq '--seq' || $a eq '--par' ) {
		usage() if @ARGV < 3;
		my ( $name, $prefix, $tests ) = splice @ARGV, 0, 3;
		my @prefix = $prefix eq '-' ? () : split ' ', $prefix;
		for my $t ( split ' ', $tests ) {
			-f $t or bad("no test file $t");
			my $job = $name eq '-' ? $t : "$name:$t";
			bad("$job twice") if $cmd{$job};
			$cmd{$job} = [ @prefix, interpreter($t), $t ];
			push @{ $a eq '--seq' ? \@seq : \@par }, $job;
		}
	}
	elsif ( $a =~ /^-/ ) {
		# (PROVE_FLAGS is prove's: what else it holds is not this queue's)
		print STDERR "harness.pl: ignoring $a: only -j, --timer and -v are taken\n";
	}
	else {
		print STDERR "harness.pl: $a: not an option\n";
		usage();
	}
}
$jobs >= 1 or usage();
my @all = ( @seq, @par );
@all or usage();

my %said;
my $harness = TAP::Harness->new(
	{
		jobs      => $jobs,
		timer     => $timer,
		verbosity => $verbosity,
		merge     => 1,
		# The --seq lane as one group, every --par test after it: the
		# scheduler serves groups in order, a slot to each that has a test
		# ready (TAP::Parser::Scheduler).
		rules => { par => [ ( @seq ? { seq => [ map { quotemeta_glob($_) } @seq ] } : () ),
				{ par => [ map { quotemeta_glob($_) } @par ] } ] },
		exec => sub {
			my ( undef, $job ) = @_;
			return [ @{ $cmd{$job} } ];
		},
	}
);
# What each test said but its passed checks, kept for the end; which are
# running, which failed, which bailed out.
my ( %running, %failed, $bailed );
$harness->callback(
	made_parser => sub {
		my ( $parser, $job ) = @_;
		my $name = $job->[0];
		$running{$name} = 1;
		$parser->callback( ALL => sub {
			my $r = shift;
			push @{ $said{$name} }, $r->as_string unless $r->is_test && $r->is_ok || $r->is_plan;
			$bailed //= $name if $r->is_bailout;
		} );
	}
);
$harness->callback(
	after_test => sub {
		my ( $job, $parser ) = @_;
		delete $running{ $job->[0] };
		# (a test that exited, or died, without a "not ok" has problems too)
		$failed{ $job->[0] } = 1 if $parser->has_problems;
	}
);
# A signal (make check's trap sends TERM to the whole queue) ends the run
# the same way, saying what had failed and what was running.
for my $sig (qw(HUP INT TERM)) {
	$SIG{$sig} = sub { stop("stopped by SIG$sig\n") };
}

# A test that bails out stops the run (TAP::Harness dies): the tests still
# running stop too, and the run fails saying why.
my $agg = eval { $harness->runtests(@all) };
stop( $@ || "the harness stopped\n" ) if !$agg;
report();
exit( %failed ? 1 : 0 );

# report [JOB...]: what each failed test said (and each JOB's: a test that
# bailed out or was running: what the harness had read of it), the last 60
# lines of it.
sub report {
	my %more = map { $_ => 1 } @_;
	for my $job ( grep { $failed{$_} || $more{$_} } @all ) {
		my @s = @{ $said{$job} || [] };
		splice @s, 0, @s - 60 if @s > 60;
		my $what = $failed{$job} ? 'failed' : $bailed && $job eq $bailed ? 'bailed out' : 'was running';
		print "== $job $what; what it said (its last 60 lines but passed checks):\n";
		print map { "$_\n" } @s;
	}
}

# stop WHY: the run ends early: the tests of this process group (make
# check starts the queue under setsid) stop too, after what is known is
# said; exit 1.
sub stop {
	my ($why) = @_;
	$SIG{$_} = 'IGNORE' for qw(HUP INT TERM);
	kill 'TERM', -$$ if getpgrp() == $$;
	report( ( $bailed ? ($bailed) : () ), sort keys %running );
	print "== the run stopped: ", ( $bailed ? "$bailed bailed out: " : '' ), $why;
	exit 1;
}

# A test file's interpreter, by its #! line (as prove's): sh for t/*.t.
sub interpreter {
	my ($t) = @_;
	open my $fh, '<', $t or bad("cannot read $t: $!");
	my $line = <$fh> // '';
	$line =~ /^#!\s*(\S.*?)\s*$/ or bad("$t has no #! line");
	return split ' ', $1;
}

# A test's name as a glob of itself (the scheduler's rules are globs).
sub quotemeta_glob {
	my ($s) = @_;
	$s =~ s/([*?{}\[\]\\,])/\\$1/g;
	return $s;
}
