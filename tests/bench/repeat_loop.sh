#!/bin/sh
# repeat_loop.sh TRACE EVENTS - write TRACE, then the lines after its
# loop_start again and again, until at least EVENTS events: a long trace
# with the steady state of a short one. Each repetition is valid after the
# last because the body after loop_start frees what it allocates (what
# loop_start promises: a looping replay repeats those lines too).
set -u

trace=${1:?usage: repeat_loop.sh TRACE EVENTS}
events=${2:?usage: repeat_loop.sh TRACE EVENTS}
grep -qx 'loop_start' "$trace" || { echo "repeat_loop.sh: $trace has no loop_start" >&2; exit 1; }
awk -v want="$events" '
	function is_event(line) { return line !~ /^[ \t]*(#|$)/ && line != "loop_start" }
	{ print; n += is_event($0) }
	in_body { body[nbody++] = $0; body_events += is_event($0) }
	$0 == "loop_start" { in_body = 1 }
	END {
		if (body_events == 0)
			exit 1
		while (n < want)
			for (i = 0; i < nbody; i++) {
				print body[i]
				n += is_event(body[i])
			}
	}' "$trace"
