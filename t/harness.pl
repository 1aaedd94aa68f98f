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
			-f $t or die "harness.pl: no test file $t\n";
			my $job = $name eq '-' ? $t : "$name:$t";
			die "harness.pl: $job twice\n" if $cmd{$job};
			$cmd{$job} = [ @prefix, interpreter($t), $t ];
			push @{ $a eq '--seq' ? \@seq : \@par }, $job;
		}
	}
	else {
		print STDERR "harness.pl: unknown option $a\n";
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
# What each test said but its passed checks, for the end.
$harness->callback(
	made_parser => sub {
		my ( $parser, $job ) = @_;
		my $name = $job->[0];
		$parser->callback( ALL => sub {
			my $r = shift;
			push @{ $said{$name} }, $r->as_string unless $r->is_test && $r->is_ok || $r->is_plan;
		} );
	}
);

# A test that bails out stops the run (TAP::Harness dies): the tests still
# running stop too, when this is their process group's leader (make check
# runs it under setsid), and the run fails saying why.
my $agg = eval { $harness->runtests(@all) };
if ( !$agg ) {
	my $why = $@ || "the harness stopped\n";
	print "== the run stopped: $why";
	if ( getpgrp() == $$ ) {
		local $SIG{TERM} = 'IGNORE';
		kill 'TERM', -$$;
	}
	exit 1;
}
my @failed = grep { my ($p) = $agg->parsers($_); $p->has_problems } $agg->descriptions;
for my $job (@failed) {
	my @s = @{ $said{$job} || [] };
	splice @s, 0, @s - 60 if @s > 60;
	print "== $job failed; what it said (its last 60 lines but passed checks):\n";
	print map { "$_\n" } @s;
}
exit( @failed ? 1 : 0 );

# A test file's interpreter, by its #! line (as prove's): sh for t/*.t.
sub interpreter {
	my ($t) = @_;
	open my $fh, '<', $t or die "harness.pl: cannot read $t: $!\n";
	my $line = <$fh> // '';
	$line =~ /^#!\s*(\S.*?)\s*$/ or die "harness.pl: $t has no #! line\n";
	return split ' ', $1;
}

# A test's name as a glob of itself (the scheduler's rules are globs).
sub quotemeta_glob {
	my ($s) = @_;
	$s =~ s/([*?{}\[\]\\,])/\\$1/g;
	return $s;
}
