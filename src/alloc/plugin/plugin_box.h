/*
 * plugin_box.h - a lane's mailbox: one message at a time in memory both
 * processes map, handed over by a sequence number.
 *
 * A call into a plug-in host is a few round trips (the call, the ACL
 * calls the plug-in makes back, the return); through a socket each costs
 * two wake-ups, several microseconds. Here the side that waits spins a
 * little on the sequence number, which the other side's answer usually
 * beats, and only then sleeps on it in a futex; the side that posts wakes
 * it only when it said it sleeps. Turns alternate: the daemon posts odd
 * numbers, the host even ones, so each side knows which number is its
 * turn and a message is never overwritten before it is read.
 *
 * The host can write anything into the box at any time: the daemon copies
 * a message out before looking at it, and bounds its length.
 */
#ifndef NPA_PLUGIN_BOX_H
#define NPA_PLUGIN_BOX_H

#include <stdatomic.h>
#include <stdint.h>

#include "plugin_wire.h"

struct pw_box {
	_Atomic uint32_t seq;       /* messages posted so far */
	_Atomic uint32_t sleepers;  /* waiters inside the futex */
	char pad[56];               /* the message starts on its own line */
	struct pw_msg msg;          /* and PW_MAX_DATA bytes of data */
};

#define PW_BOX_SIZE (sizeof(struct pw_box) + PW_MAX_DATA)

/* What the daemon writes in the box of a host that ended: no answer comes. */
#define PW_SEQ_ENDED UINT32_MAX

/* The message in m is in the box: make seq `to` and wake a sleeper. */
void pw_box_post(struct pw_box *b, uint32_t to);
/* Wait until seq is `want`: 1; -1 when it became PW_SEQ_ENDED; 0 once
 * timeout_ms passed (-1: never). */
int pw_box_wait(struct pw_box *b, uint32_t want, int timeout_ms);

#endif /* NPA_PLUGIN_BOX_H */
