#!/usr/bin/perl
# t/webhook.pl MODE DIR: a webhook on 127.0.0.1, on a port the kernel picks
# (into DIR/port once it listens), for drv-rollout.sh -N: each request's
# method, path and Content-Type a line of DIR/req, its body a line of
# DIR/got; MODE ok answers 200, fail 500, hang nothing (the connection held
# open until TERM).
use strict;
use warnings;
use IO::Socket::INET;

my ($mode, $dir) = @ARGV;
my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 16, ReuseAddr => 1)
	or die "webhook.pl: cannot listen: $!\n";
$SIG{TERM} = sub { exit 0 };
open(my $p, '>', "$dir/port.tmp") or die "webhook.pl: $dir/port.tmp: $!\n";
print $p $s->sockport, "\n";
close $p;
rename("$dir/port.tmp", "$dir/port") or die "webhook.pl: $dir/port: $!\n";
my @held;
while (my $c = $s->accept) {
	my $first = <$c>;
	next unless defined $first;
	$first =~ s/\r?\n$//;
	my ($len, $type) = (0, '-');
	while (defined(my $l = <$c>)) {
		$l =~ s/\r?\n$//;
		last if $l eq '';
		$len = $1 if $l =~ /^content-length:\s*(\d+)/i;
		$type = $1 if $l =~ /^content-type:\s*(.*)$/i;
	}
	my $body = '';
	read($c, $body, $len) if $len;
	$body =~ s/\n\z//;
	$body =~ s/\n/\\n/g;
	my ($method, $path) = split(/ /, $first);
	for (["req", "$method $path $type"], ["got", $body]) {
		open(my $f, '>>', "$dir/$_->[0]") or die "webhook.pl: $dir/$_->[0]: $!\n";
		print $f $_->[1], "\n";
		close $f;
	}
	if ($mode eq 'hang') {
		push @held, $c;
		next;
	}
	my ($st, $msg) = $mode eq 'fail' ? ('500 Internal Server Error', 'no_service') : ('200 OK', 'ok');
	print $c "HTTP/1.1 $st\r\nContent-Type: text/plain\r\nContent-Length: " . length($msg) .
		"\r\nConnection: close\r\n\r\n$msg";
	close $c;
}
